-- Whose turn each monitor pass is: with several admins on one database, the first admin to take
-- an interval's turn runs that pass (fail: retries and alarms; lost: runs without a result;
-- report: daily counts and retention) and the others skip it, instead of every admin scanning
-- job_log for the same rows at the same instant. `slot` is the interval's number since the epoch.
CREATE TABLE monitor_turn (
    name     TEXT    NOT NULL PRIMARY KEY,
    slot     INTEGER NOT NULL DEFAULT -1,
    node     TEXT    NOT NULL DEFAULT '',
    taken_at INTEGER NOT NULL DEFAULT 0
);
INSERT INTO monitor_turn (name) VALUES ('fail'), ('lost'), ('report');
