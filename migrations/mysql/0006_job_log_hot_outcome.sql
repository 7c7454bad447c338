-- A trigger's outcome is written onto its run row a moment after the row is inserted; with no
-- index on trigger_code, that update changes no secondary index. The lost-result scan, the only
-- user of ix_job_log_open, reads open runs through ix_job_log_alarm instead (an open run's
-- alarm_status is 0).
ALTER TABLE job_log DROP INDEX ix_job_log_open;
