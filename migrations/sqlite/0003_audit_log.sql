-- Who changed which job, group, user or token, when, and what changed (the console's audit log).
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time        INTEGER NOT NULL,
    user_id     INTEGER NOT NULL,
    username    TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    target_type TEXT    NOT NULL,
    target_id   INTEGER NOT NULL DEFAULT 0,
    summary     TEXT    NOT NULL,
    changes     TEXT    NOT NULL
);
CREATE INDEX ix_audit_log_time ON audit_log (time);
CREATE INDEX ix_audit_log_target ON audit_log (target_type, target_id);
