-- A SERIAL job's bound on triggers waiting behind its running one on an executor: a trigger
-- beyond it is refused at once ("queue full: N waiting"). 0 = unbounded, as before.
ALTER TABLE job_info ADD COLUMN max_queued INT NOT NULL DEFAULT 0;
