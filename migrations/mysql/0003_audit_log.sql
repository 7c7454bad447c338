-- Who changed which job, group, user or token, when, and what changed (the console's audit log).
CREATE TABLE audit_log (
    id          BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    time        BIGINT       NOT NULL,
    user_id     INT          NOT NULL,
    username    VARCHAR(64)  NOT NULL,
    action      VARCHAR(32)  NOT NULL,
    target_type VARCHAR(16)  NOT NULL,
    target_id   BIGINT       NOT NULL DEFAULT 0,
    summary     VARCHAR(512) NOT NULL,
    changes     MEDIUMTEXT   NOT NULL,
    KEY ix_audit_log_time (time),
    KEY ix_audit_log_target (target_type, target_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
