-- A trigger's outcome is written onto its run row a moment after the row is inserted. With no
-- index on the columns it changes and room left on the row's page, PostgreSQL writes it as a
-- heap-only (HOT) update: one new row version beside the old, no new entry in any index.
-- The lost-result scan, the only user of ix_job_log_open, reads open runs through
-- ix_job_log_alarm instead (an open run's alarm_status is 0).
DROP INDEX IF EXISTS ix_job_log_open;
-- Pages filled from now on keep half their room for those updates: each run row is rewritten
-- twice within seconds of its insert (outcome, result), and a heap-only update needs its new
-- version to fit on the same page (measured: BENCHMARKS.md).
ALTER TABLE job_log SET (fillfactor = 50);
