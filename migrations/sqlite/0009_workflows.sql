-- Workflows: DAGs of jobs. A workflow keeps its definition (nodes and edges, JSON); each run
-- keeps a snapshot of the definition it started with, its state and its context; each node of a
-- run has one row, and each attempt of a JOB node one run row in job_log, unique by (run, node,
-- attempt): inserting it is the node's claim, so a node attempt fires once whatever the admins.
CREATE TABLE workflow (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    job_group           INTEGER NOT NULL,
    name                TEXT    NOT NULL,
    description         TEXT    NOT NULL DEFAULT '',
    schedule_type       TEXT    NOT NULL DEFAULT 'NONE',
    schedule_conf       TEXT    NOT NULL DEFAULT '',
    timezone            TEXT    NOT NULL DEFAULT '',
    misfire_strategy    TEXT    NOT NULL DEFAULT 'DO_NOTHING',
    max_concurrent_runs INTEGER NOT NULL DEFAULT 1,
    overlap_policy      TEXT    NOT NULL DEFAULT 'SKIP',
    queue_max           INTEGER NOT NULL DEFAULT 10,
    run_timeout_secs    INTEGER NOT NULL DEFAULT 0,
    alarm_email         TEXT    NOT NULL DEFAULT '',
    alarm_webhook       TEXT    NOT NULL DEFAULT '',
    definition          TEXT    NOT NULL,
    version             INTEGER NOT NULL DEFAULT 1,
    trigger_status      INTEGER NOT NULL DEFAULT 0,
    trigger_last_time   INTEGER NOT NULL DEFAULT 0,
    trigger_next_time   INTEGER NOT NULL DEFAULT 0,
    owner_id            INTEGER NOT NULL DEFAULT 0,
    add_time            INTEGER NOT NULL DEFAULT 0,
    update_time         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ix_workflow_due ON workflow (trigger_status, trigger_next_time);
CREATE INDEX ix_workflow_group ON workflow (job_group);

CREATE TABLE workflow_run (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id    INTEGER NOT NULL,
    job_group      INTEGER NOT NULL,
    version        INTEGER NOT NULL,
    definition     TEXT    NOT NULL,
    state          TEXT    NOT NULL,
    paused         INTEGER NOT NULL DEFAULT 0,
    trigger_type   TEXT    NOT NULL,
    params         TEXT    NOT NULL DEFAULT '',
    context        TEXT    NOT NULL DEFAULT '{}',
    message        TEXT    NOT NULL DEFAULT '',
    schedule_time  INTEGER NOT NULL DEFAULT 0,
    create_time    INTEGER NOT NULL DEFAULT 0,
    start_time     INTEGER NOT NULL DEFAULT 0,
    end_time       INTEGER NOT NULL DEFAULT 0,
    deadline       INTEGER NOT NULL DEFAULT 0,
    alarm_status   INTEGER NOT NULL DEFAULT 0,
    update_time    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ix_workflow_run_workflow ON workflow_run (workflow_id, id);
CREATE INDEX ix_workflow_run_state ON workflow_run (state, id);
CREATE INDEX ix_workflow_run_alarm ON workflow_run (alarm_status, id);

CREATE TABLE workflow_node (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL,
    node_key    TEXT    NOT NULL,
    state       TEXT    NOT NULL,
    attempt     INTEGER NOT NULL DEFAULT 0,
    base_attempt INTEGER NOT NULL DEFAULT 0,
    log_id      INTEGER NOT NULL DEFAULT 0,
    log_ids     TEXT    NOT NULL DEFAULT '',
    owner       TEXT    NOT NULL DEFAULT '',
    output      TEXT    NULL,
    decision    INTEGER NULL,
    message     TEXT    NOT NULL DEFAULT '',
    ready_time  INTEGER NOT NULL DEFAULT 0,
    start_time  INTEGER NOT NULL DEFAULT 0,
    end_time    INTEGER NOT NULL DEFAULT 0,
    retry_at    INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_workflow_node ON workflow_node (run_id, node_key);

ALTER TABLE job_log ADD COLUMN wf_run_id INTEGER NULL;
ALTER TABLE job_log ADD COLUMN wf_node TEXT NULL;
ALTER TABLE job_log ADD COLUMN wf_attempt INTEGER NULL;
CREATE UNIQUE INDEX ux_job_log_wf ON job_log (wf_run_id, wf_node, wf_attempt) WHERE wf_run_id IS NOT NULL;

-- a node's output in full, when its result message is longer than job_log keeps
CREATE TABLE workflow_output (
    log_id INTEGER NOT NULL PRIMARY KEY,
    body   TEXT    NOT NULL
);
