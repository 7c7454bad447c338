-- Who changed which job, group, user or token, when, and what changed (the console's audit log).
CREATE TABLE audit_log (
    id          BIGSERIAL    PRIMARY KEY,
    time        BIGINT       NOT NULL,
    user_id     INTEGER      NOT NULL,
    username    VARCHAR(64)  NOT NULL,
    action      VARCHAR(32)  NOT NULL,
    target_type VARCHAR(16)  NOT NULL,
    target_id   BIGINT       NOT NULL DEFAULT 0,
    summary     VARCHAR(512) NOT NULL,
    changes     TEXT         NOT NULL
);
CREATE INDEX ix_audit_log_time ON audit_log (time);
CREATE INDEX ix_audit_log_target ON audit_log (target_type, target_id);
