-- What an executor runs and holds queued, as its latest beat reported it (a JSON object:
-- running, queued, limit and the longest queues per job). A jobwheel extension of the
-- registry call: NULL for executors that do not send it (Java's xxl-job-core).
ALTER TABLE job_registry ADD COLUMN load_report TEXT NULL;
