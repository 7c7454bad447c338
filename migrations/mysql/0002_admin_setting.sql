-- Settings the admin keeps in its database rather than its flags, shared by every admin of a
-- cluster (the executors' access token, generated on first start).
CREATE TABLE admin_setting (
    name        VARCHAR(64) NOT NULL PRIMARY KEY,
    value       TEXT        NOT NULL,
    update_time BIGINT      NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
