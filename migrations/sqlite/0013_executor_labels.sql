-- Executor labels (`{"gpu":"true"}`, a JSON object) as its latest beat reported them: a
-- jobwheel extension of the registry call; NULL for executors that send none.
ALTER TABLE job_registry ADD COLUMN labels TEXT NULL;
-- A job's executor selector (`gpu=true, region in (eu,us)`): every routing strategy chooses
-- among the executors whose labels match. '' = any executor of the group, as before.
ALTER TABLE job_info ADD COLUMN executor_selector VARCHAR(512) NOT NULL DEFAULT '';
