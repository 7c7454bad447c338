-- The user whose rights a job acts with: whoever last saved its definition. Its child jobs fire
-- only in groups that user may still use (0: unknown, for jobs saved before this column, imported
-- from XXL-JOB, or made by the admin itself).
ALTER TABLE job_info ADD COLUMN owner_id INTEGER NOT NULL DEFAULT 0;
