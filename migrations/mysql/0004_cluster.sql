-- The admins of a cluster and the fire times each has claimed but not yet dispatched: an admin
-- beats every second; the fire times of one that stopped beating (or handed them back with an
-- empty owner) are taken over by a live one, so a claimed fire survives its admin.
CREATE TABLE admin_node (
    id         VARCHAR(64)  NOT NULL PRIMARY KEY,
    address    VARCHAR(255) NOT NULL DEFAULT '',
    started_at BIGINT       NOT NULL DEFAULT 0,
    beat_at    BIGINT       NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE fire_claim (
    job_id       INTEGER     NOT NULL,
    fire_time    BIGINT      NOT NULL,
    trigger_type VARCHAR(16) NOT NULL,
    owner        VARCHAR(64) NOT NULL,
    PRIMARY KEY (job_id, fire_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE INDEX ix_fire_claim_owner ON fire_claim (owner, fire_time);
