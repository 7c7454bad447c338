-- jobwheel schema, after XXL-JOB's model (times are epoch milliseconds).

CREATE TABLE job_group (
    id            SERIAL PRIMARY KEY,
    app_name      TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    address_type  INTEGER NOT NULL DEFAULT 0,
    address_list  TEXT    NULL,
    access_token  TEXT    NULL,
    update_time   BIGINT  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_job_group_app_name ON job_group (app_name);

CREATE TABLE job_info (
    id                        SERIAL PRIMARY KEY,
    job_group                 INTEGER NOT NULL,
    job_desc                  TEXT    NOT NULL,
    add_time                  BIGINT  NOT NULL DEFAULT 0,
    update_time               BIGINT  NOT NULL DEFAULT 0,
    author                    TEXT    NOT NULL DEFAULT '',
    alarm_email               TEXT    NOT NULL DEFAULT '',
    alarm_webhook             TEXT    NOT NULL DEFAULT '',
    schedule_type             TEXT    NOT NULL DEFAULT 'NONE',
    schedule_conf             TEXT    NOT NULL DEFAULT '',
    timezone                  TEXT    NOT NULL DEFAULT '',
    misfire_strategy          TEXT    NOT NULL DEFAULT 'DO_NOTHING',
    executor_route_strategy   TEXT    NOT NULL DEFAULT 'FIRST',
    executor_handler          TEXT    NOT NULL DEFAULT '',
    executor_param            TEXT    NOT NULL DEFAULT '',
    executor_block_strategy   TEXT    NOT NULL DEFAULT 'SERIAL_EXECUTION',
    executor_timeout          INTEGER NOT NULL DEFAULT 0,
    executor_fail_retry_count INTEGER NOT NULL DEFAULT 0,
    retry_interval_secs       INTEGER NOT NULL DEFAULT 0,
    glue_type                 TEXT    NOT NULL DEFAULT 'BEAN',
    glue_source               TEXT    NOT NULL DEFAULT '',
    glue_remark               TEXT    NOT NULL DEFAULT '',
    glue_updatetime           BIGINT  NOT NULL DEFAULT 0,
    child_jobid               TEXT    NOT NULL DEFAULT '',
    trigger_status            INTEGER NOT NULL DEFAULT 0,
    trigger_last_time         BIGINT  NOT NULL DEFAULT 0,
    trigger_next_time         BIGINT  NOT NULL DEFAULT 0
);
-- the pre-read: enabled jobs due before a time
CREATE INDEX ix_job_info_due ON job_info (trigger_status, trigger_next_time);
CREATE INDEX ix_job_info_group ON job_info (job_group);

CREATE TABLE job_log (
    id                        BIGSERIAL PRIMARY KEY,
    job_group                 INTEGER NOT NULL,
    job_id                    INTEGER NOT NULL,
    trigger_type              TEXT    NOT NULL DEFAULT 'CRON',
    schedule_time             BIGINT  NOT NULL DEFAULT 0,
    executor_address          TEXT    NULL,
    executor_handler          TEXT    NULL,
    executor_param            TEXT    NULL,
    executor_sharding_param   TEXT    NULL,
    executor_fail_retry_count INTEGER NOT NULL DEFAULT 0,
    trigger_time              BIGINT  NOT NULL,
    trigger_code              INTEGER NOT NULL DEFAULT 0,
    trigger_msg               TEXT    NULL,
    handle_time               BIGINT  NOT NULL DEFAULT 0,
    handle_code               INTEGER NOT NULL DEFAULT 0,
    handle_msg                TEXT    NULL,
    alarm_status              INTEGER NOT NULL DEFAULT 0
);
-- log list by job / by group, retention by time
CREATE INDEX ix_job_log_job_time ON job_log (job_id, trigger_time);
CREATE INDEX ix_job_log_group_time ON job_log (job_group, trigger_time);
CREATE INDEX ix_job_log_time ON job_log (trigger_time);
-- failed-log scan: successes leave alarm_status 0 for NOT_NEEDED, so status 0 stays small
CREATE INDEX ix_job_log_alarm ON job_log (alarm_status, id);
-- lost-result scan: triggered, no result, older than a limit
CREATE INDEX ix_job_log_open ON job_log (handle_code, trigger_code, trigger_time);

CREATE TABLE job_log_report (
    id            SERIAL PRIMARY KEY,
    trigger_day   BIGINT  NOT NULL,
    running_count BIGINT  NOT NULL DEFAULT 0,
    suc_count     BIGINT  NOT NULL DEFAULT 0,
    fail_count    BIGINT  NOT NULL DEFAULT 0,
    update_time   BIGINT  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_job_log_report_day ON job_log_report (trigger_day);

CREATE TABLE job_logglue (
    id          SERIAL PRIMARY KEY,
    job_id      INTEGER NOT NULL,
    glue_type   TEXT    NOT NULL,
    glue_source TEXT    NOT NULL,
    glue_remark TEXT    NOT NULL,
    add_time    BIGINT  NOT NULL DEFAULT 0,
    update_time BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX ix_job_logglue_job ON job_logglue (job_id, id);

CREATE TABLE job_registry (
    id             BIGSERIAL PRIMARY KEY,
    registry_group TEXT    NOT NULL,
    registry_key   TEXT    NOT NULL,
    registry_value TEXT    NOT NULL,
    protocol       TEXT    NOT NULL DEFAULT 'v2',
    update_time    BIGINT  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_job_registry_gkv ON job_registry (registry_group, registry_key, registry_value);
CREATE INDEX ix_job_registry_time ON job_registry (update_time);

CREATE TABLE job_user (
    id         SERIAL PRIMARY KEY,
    username   TEXT    NOT NULL,
    password   TEXT    NOT NULL,
    role       INTEGER NOT NULL DEFAULT 0,
    permission TEXT    NULL
);
CREATE UNIQUE INDEX ux_job_user_username ON job_user (username);

CREATE TABLE user_session (
    token_hash   VARCHAR(64) PRIMARY KEY,
    user_id      INTEGER NOT NULL,
    created_time BIGINT  NOT NULL,
    expire_time  BIGINT  NOT NULL
);
CREATE INDEX ix_user_session_user ON user_session (user_id);

CREATE TABLE api_token (
    id             SERIAL PRIMARY KEY,
    name           TEXT    NOT NULL,
    token_hash     TEXT    NOT NULL,
    user_id        INTEGER NOT NULL,
    created_time   BIGINT  NOT NULL,
    last_used_time BIGINT  NOT NULL DEFAULT 0,
    expire_time    BIGINT  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_api_token_hash ON api_token (token_hash);

CREATE TABLE job_lock (
    lock_name VARCHAR(50) PRIMARY KEY
);
INSERT INTO job_lock (lock_name) VALUES ('schedule_lock');
