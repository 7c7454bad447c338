-- jobwheel schema, after XXL-JOB's model (times are epoch milliseconds).

CREATE TABLE job_group (
    id            INT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
    app_name      VARCHAR(64)  NOT NULL,
    title         VARCHAR(64)  NOT NULL,
    address_type  INT          NOT NULL DEFAULT 0,
    address_list  TEXT         NULL,
    access_token  VARCHAR(255) NULL,
    update_time   BIGINT       NOT NULL DEFAULT 0,
    UNIQUE KEY ux_job_group_app_name (app_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_info (
    id                        INT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_group                 INT          NOT NULL,
    job_desc                  VARCHAR(255) NOT NULL,
    add_time                  BIGINT       NOT NULL DEFAULT 0,
    update_time               BIGINT       NOT NULL DEFAULT 0,
    author                    VARCHAR(64)  NOT NULL DEFAULT '',
    alarm_email               VARCHAR(255) NOT NULL DEFAULT '',
    alarm_webhook             VARCHAR(1024) NOT NULL DEFAULT '',
    schedule_type             VARCHAR(50)  NOT NULL DEFAULT 'NONE',
    schedule_conf             VARCHAR(128) NOT NULL DEFAULT '',
    timezone                  VARCHAR(64)  NOT NULL DEFAULT '',
    misfire_strategy          VARCHAR(50)  NOT NULL DEFAULT 'DO_NOTHING',
    executor_route_strategy   VARCHAR(50)  NOT NULL DEFAULT 'FIRST',
    executor_handler          VARCHAR(255) NOT NULL DEFAULT '',
    executor_param            TEXT         NOT NULL,
    executor_block_strategy   VARCHAR(50)  NOT NULL DEFAULT 'SERIAL_EXECUTION',
    executor_timeout          INT          NOT NULL DEFAULT 0,
    executor_fail_retry_count INT          NOT NULL DEFAULT 0,
    retry_interval_secs       INT          NOT NULL DEFAULT 0,
    glue_type                 VARCHAR(50)  NOT NULL DEFAULT 'BEAN',
    glue_source               MEDIUMTEXT   NOT NULL,
    glue_remark               VARCHAR(128) NOT NULL DEFAULT '',
    glue_updatetime           BIGINT       NOT NULL DEFAULT 0,
    child_jobid               VARCHAR(255) NOT NULL DEFAULT '',
    trigger_status            INT          NOT NULL DEFAULT 0,
    trigger_last_time         BIGINT       NOT NULL DEFAULT 0,
    trigger_next_time         BIGINT       NOT NULL DEFAULT 0,
    -- the pre-read: enabled jobs due before a time
    KEY ix_job_info_due (trigger_status, trigger_next_time),
    KEY ix_job_info_group (job_group)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_log (
    id                        BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_group                 INT          NOT NULL,
    job_id                    INT          NOT NULL,
    trigger_type              VARCHAR(20)  NOT NULL DEFAULT 'CRON',
    schedule_time             BIGINT       NOT NULL DEFAULT 0,
    executor_address          VARCHAR(255) NULL,
    executor_handler          VARCHAR(255) NULL,
    executor_param            TEXT         NULL,
    executor_sharding_param   VARCHAR(20)  NULL,
    executor_fail_retry_count INT          NOT NULL DEFAULT 0,
    trigger_time              BIGINT       NOT NULL,
    trigger_code              INT          NOT NULL DEFAULT 0,
    trigger_msg               TEXT         NULL,
    handle_time               BIGINT       NOT NULL DEFAULT 0,
    handle_code               INT          NOT NULL DEFAULT 0,
    handle_msg                TEXT         NULL,
    alarm_status              INT          NOT NULL DEFAULT 0,
    -- log list by job / by group, retention by time
    KEY ix_job_log_job_time (job_id, trigger_time),
    KEY ix_job_log_group_time (job_group, trigger_time),
    KEY ix_job_log_time (trigger_time),
    -- failed-log scan: successes leave alarm_status 0 for NOT_NEEDED, so status 0 stays small
    KEY ix_job_log_alarm (alarm_status, id),
    -- lost-result scan: triggered, no result, older than a limit
    KEY ix_job_log_open (handle_code, trigger_code, trigger_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_log_report (
    id            INT    NOT NULL AUTO_INCREMENT PRIMARY KEY,
    trigger_day   BIGINT NOT NULL,
    running_count BIGINT NOT NULL DEFAULT 0,
    suc_count     BIGINT NOT NULL DEFAULT 0,
    fail_count    BIGINT NOT NULL DEFAULT 0,
    update_time   BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY ux_job_log_report_day (trigger_day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_logglue (
    id          INT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id      INT          NOT NULL,
    glue_type   VARCHAR(50)  NOT NULL,
    glue_source MEDIUMTEXT   NOT NULL,
    glue_remark VARCHAR(128) NOT NULL,
    add_time    BIGINT       NOT NULL DEFAULT 0,
    update_time BIGINT       NOT NULL DEFAULT 0,
    KEY ix_job_logglue_job (job_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_registry (
    id             BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    registry_group VARCHAR(50)  NOT NULL,
    registry_key   VARCHAR(255) NOT NULL,
    registry_value VARCHAR(255) NOT NULL,
    protocol       VARCHAR(16)  NOT NULL DEFAULT 'v2',
    update_time    BIGINT       NOT NULL DEFAULT 0,
    UNIQUE KEY ux_job_registry_gkv (registry_group, registry_key, registry_value),
    KEY ix_job_registry_time (update_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_user (
    id         INT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
    username   VARCHAR(50)  NOT NULL,
    password   VARCHAR(255) NOT NULL,
    role       INT          NOT NULL DEFAULT 0,
    permission VARCHAR(255) NULL,
    UNIQUE KEY ux_job_user_username (username)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE user_session (
    token_hash   VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id      INT         NOT NULL,
    created_time BIGINT      NOT NULL,
    expire_time  BIGINT      NOT NULL,
    KEY ix_user_session_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE api_token (
    id             INT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name           VARCHAR(100) NOT NULL,
    token_hash     VARCHAR(64)  NOT NULL,
    user_id        INT          NOT NULL,
    created_time   BIGINT       NOT NULL,
    last_used_time BIGINT       NOT NULL DEFAULT 0,
    expire_time    BIGINT       NOT NULL DEFAULT 0,
    UNIQUE KEY ux_api_token_hash (token_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job_lock (
    lock_name VARCHAR(50) NOT NULL PRIMARY KEY
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO job_lock (lock_name) VALUES ('schedule_lock');
