-- The user whose rights a job acts with: whoever last saved its definition. Its child jobs fire
-- only in groups that user may still use (0: unknown, for jobs saved before this column, imported
-- from XXL-JOB, or made by the admin itself).
ALTER TABLE job_info ADD COLUMN owner_id INT NOT NULL DEFAULT 0;
-- One limit on a group's address list on every backend: TEXT (64 KiB) could not hold what
-- SQLite and PostgreSQL take, nor an automatic group's list of several hundred executors.
ALTER TABLE job_group MODIFY address_list MEDIUMTEXT NULL;
