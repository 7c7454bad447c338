-- The admins of a cluster and the fire times each has claimed but not yet dispatched: an admin
-- beats every second; the fire times of one that stopped beating (or handed them back with an
-- empty owner) are taken over by a live one, so a claimed fire survives its admin.
CREATE TABLE admin_node (
    id         TEXT    NOT NULL PRIMARY KEY,
    address    TEXT    NOT NULL DEFAULT '',
    started_at INTEGER NOT NULL DEFAULT 0,
    beat_at    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE fire_claim (
    job_id       INTEGER NOT NULL,
    fire_time    INTEGER NOT NULL,
    trigger_type TEXT    NOT NULL,
    owner        TEXT    NOT NULL,
    PRIMARY KEY (job_id, fire_time)
);
CREATE INDEX ix_fire_claim_owner ON fire_claim (owner, fire_time);
