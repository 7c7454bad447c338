-- Workflows: DAGs of jobs. A workflow keeps its definition (nodes and edges, JSON); each run
-- keeps a snapshot of the definition it started with, its state and its context; each node of a
-- run has one row, and each attempt of a JOB node one run row in job_log, unique by (run, node,
-- attempt): inserting it is the node's claim, so a node attempt fires once whatever the admins.
CREATE TABLE workflow (
    id                  INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_group           INT NOT NULL,
    name                VARCHAR(128) NOT NULL,
    description         VARCHAR(1024) NOT NULL DEFAULT '',
    schedule_type       VARCHAR(50)  NOT NULL DEFAULT 'NONE',
    schedule_conf       VARCHAR(128) NOT NULL DEFAULT '',
    timezone            VARCHAR(64)  NOT NULL DEFAULT '',
    misfire_strategy    VARCHAR(50)  NOT NULL DEFAULT 'DO_NOTHING',
    max_concurrent_runs INT NOT NULL DEFAULT 1,
    overlap_policy      VARCHAR(20)  NOT NULL DEFAULT 'SKIP',
    queue_max           INT NOT NULL DEFAULT 10,
    run_timeout_secs    INT NOT NULL DEFAULT 0,
    alarm_email         VARCHAR(255) NOT NULL DEFAULT '',
    alarm_webhook       VARCHAR(1024) NOT NULL DEFAULT '',
    definition          MEDIUMTEXT   NOT NULL,
    version             INT NOT NULL DEFAULT 1,
    trigger_status      INT NOT NULL DEFAULT 0,
    trigger_last_time   BIGINT  NOT NULL DEFAULT 0,
    trigger_next_time   BIGINT  NOT NULL DEFAULT 0,
    owner_id            INT NOT NULL DEFAULT 0,
    add_time            BIGINT  NOT NULL DEFAULT 0,
    update_time         BIGINT  NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE INDEX ix_workflow_due ON workflow (trigger_status, trigger_next_time);
CREATE INDEX ix_workflow_group ON workflow (job_group);

CREATE TABLE workflow_run (
    id             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    workflow_id    INT NOT NULL,
    job_group      INT NOT NULL,
    version        INT NOT NULL,
    definition     MEDIUMTEXT NOT NULL,
    state          VARCHAR(20) NOT NULL,
    paused         INT NOT NULL DEFAULT 0,
    trigger_type   VARCHAR(20) NOT NULL,
    params         TEXT       NOT NULL,
    context        MEDIUMTEXT NOT NULL,
    message        TEXT       NOT NULL,
    schedule_time  BIGINT  NOT NULL DEFAULT 0,
    create_time    BIGINT  NOT NULL DEFAULT 0,
    start_time     BIGINT  NOT NULL DEFAULT 0,
    end_time       BIGINT  NOT NULL DEFAULT 0,
    deadline       BIGINT  NOT NULL DEFAULT 0,
    alarm_status   INT NOT NULL DEFAULT 0,
    update_time    BIGINT  NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE INDEX ix_workflow_run_workflow ON workflow_run (workflow_id, id);
CREATE INDEX ix_workflow_run_state ON workflow_run (state, id);
CREATE INDEX ix_workflow_run_alarm ON workflow_run (alarm_status, id);

CREATE TABLE workflow_node (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id      BIGINT  NOT NULL,
    node_key    VARCHAR(64) NOT NULL,
    state       VARCHAR(20) NOT NULL,
    attempt     INT NOT NULL DEFAULT 0,
    base_attempt INT NOT NULL DEFAULT 0,
    log_id      BIGINT  NOT NULL DEFAULT 0,
    log_ids     TEXT        NOT NULL,
    owner       VARCHAR(64) NOT NULL DEFAULT '',
    output      MEDIUMTEXT  NULL,
    decision    INT NULL,
    message     TEXT        NOT NULL,
    ready_time  BIGINT  NOT NULL DEFAULT 0,
    start_time  BIGINT  NOT NULL DEFAULT 0,
    end_time    BIGINT  NOT NULL DEFAULT 0,
    retry_at    BIGINT  NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE UNIQUE INDEX ux_workflow_node ON workflow_node (run_id, node_key);

ALTER TABLE job_log ADD COLUMN wf_run_id BIGINT NULL;
ALTER TABLE job_log ADD COLUMN wf_node VARCHAR(64) NULL;
ALTER TABLE job_log ADD COLUMN wf_attempt INT NULL;
CREATE UNIQUE INDEX ux_job_log_wf ON job_log (wf_run_id, wf_node, wf_attempt);

-- a node's output in full, when its result message is longer than job_log keeps
CREATE TABLE workflow_output (
    log_id BIGINT NOT NULL PRIMARY KEY,
    body   MEDIUMTEXT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
