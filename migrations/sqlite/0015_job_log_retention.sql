-- A job's own run retention, overriding the admin's --log-retention-days for its rows:
-- log_retention_days (0 = the global setting) and log_retention_runs (keep the newest N;
-- 0 = no count bound). Both bounds hold when both are set.
ALTER TABLE job_info ADD COLUMN log_retention_days INT NOT NULL DEFAULT 0;
ALTER TABLE job_info ADD COLUMN log_retention_runs INT NOT NULL DEFAULT 0;
