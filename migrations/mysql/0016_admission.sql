-- Cluster-wide instance limits (admission). A job (and a group) may cap how many of its runs
-- are open at once across every admin: max_concurrent_instances (0 = no cap) with what a fire
-- beyond it does, instance_overflow (SKIP, QUEUE, REPLACE, ALLOW); QUEUE waits up to
-- instance_queue_max fires for at most instance_queue_ttl_secs.
ALTER TABLE job_info ADD COLUMN max_concurrent_instances INT NOT NULL DEFAULT 0;
ALTER TABLE job_info ADD COLUMN instance_overflow VARCHAR(16) NOT NULL DEFAULT 'SKIP';
ALTER TABLE job_info ADD COLUMN instance_queue_max INT NOT NULL DEFAULT 100;
ALTER TABLE job_info ADD COLUMN instance_queue_ttl_secs INT NOT NULL DEFAULT 600;
ALTER TABLE job_group ADD COLUMN max_concurrent_instances INT NOT NULL DEFAULT 0;
ALTER TABLE job_group ADD COLUMN instance_overflow VARCHAR(16) NOT NULL DEFAULT 'SKIP';

-- Why each run row stands as it does: RAN (admitted and sent), QUEUED (waiting for a slot),
-- SKIPPED, REFUSED (the queue was full), NO_EXECUTOR (none to send it to). Rows from before
-- this migration were all admitted.
ALTER TABLE job_log ADD COLUMN admission VARCHAR(16) NOT NULL DEFAULT 'RAN';

-- The slots of limited jobs' open runs: one per run row, taken in the transaction that inserts
-- the row, under the lock rows below. A slot counts while its run row is open (no result, not
-- refused), so a run closed by any path frees it; rows of closed runs are swept.
CREATE TABLE run_slot (
    log_id    BIGINT NOT NULL PRIMARY KEY,
    job_id    INT NOT NULL,
    job_group INT NOT NULL,
    taken_at  BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE INDEX ix_run_slot_job ON run_slot (job_id);
CREATE INDEX ix_run_slot_group ON run_slot (job_group);

-- Fires waiting for a slot (overflow QUEUE), oldest first; each has its QUEUED run row.
CREATE TABLE run_queue (
    log_id     BIGINT NOT NULL PRIMARY KEY,
    job_id     INT NOT NULL,
    job_group  INT NOT NULL,
    queued_at  BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE INDEX ix_run_queue_job ON run_queue (job_id, log_id);

-- One row per limited job ('job:ID') and group ('group:ID'): written first in an admission's
-- transaction, so admissions of one job (or group) take turns on every admin.
CREATE TABLE admission_lock (
    lock_key VARCHAR(32) NOT NULL PRIMARY KEY,
    touched  BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
