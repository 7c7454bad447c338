//! Workflows: a DAG of nodes (JOB nodes fire a job, DECISION nodes evaluate an expression over
//! the run's context) joined by edges that say when they are followed; runs of it, each with a
//! snapshot of the definition it started with, and the state of each of its nodes.

use super::*;

string_enum!(
    /// What a node does.
    NodeKind, "node kind" {
        /// Runs the job `jobId` through the engine.
        Job => "JOB",
        /// Evaluates `expression` over the run's context: its outcome is TRUE or FALSE.
        Decision => "DECISION",
    }
);

string_enum!(
    /// When a node with several parents runs.
    Join, "join" {
        /// Every in-edge from a parent that was not skipped is satisfied (and at least one is).
        All => "ALL",
        /// At least one in-edge is satisfied.
        Any => "ANY",
    }
);

string_enum!(
    /// When an edge is followed.
    EdgeWhen, "edge condition" {
        /// Its source succeeded.
        Success => "SUCCESS",
        /// Its source failed.
        Failure => "FAILURE",
        /// Its source ended, either way.
        Always => "ALWAYS",
        /// Its source, a DECISION node, evaluated to true.
        True => "TRUE",
        /// Its source, a DECISION node, evaluated to false.
        False => "FALSE",
    }
);

string_enum!(
    /// Where one node of a run stands.
    NodeState, "node state" {
        /// Its parents have not all ended (or, paused or retrying, it has not started yet).
        Waiting => "WAITING",
        /// Fired (JOB) and without a result yet.
        Running => "RUNNING",
        /// Ended well (a DECISION node that evaluated, either way).
        Succeeded => "SUCCEEDED",
        /// Ended badly, after its retries.
        Failed => "FAILED",
        /// Its in-edges say it does not run; skipping flows on to its descendants.
        Skipped => "SKIPPED",
        /// Stopped with its run (cancel, timeout).
        Cancelled => "CANCELLED",
    }
);

impl NodeState {
    /// Whether the node has ended (nothing more will happen to it in this attempt).
    pub fn ended(self) -> bool {
        matches!(
            self,
            NodeState::Succeeded | NodeState::Failed | NodeState::Skipped | NodeState::Cancelled
        )
    }
}

string_enum!(
    /// Where a run stands.
    RunState, "run state" {
        /// Waiting for a free slot (overlap policy QUEUE).
        Queued => "QUEUED",
        /// Its nodes are being run (or, paused, none is started).
        Running => "RUNNING",
        /// Nothing more can run, and no node failed without a FAILURE or ALWAYS edge out of it.
        Succeeded => "SUCCEEDED",
        /// Nothing more can run, and a node failed with no FAILURE or ALWAYS edge out of it.
        Failed => "FAILED",
        /// Cancelled by a user, or replaced by a newer run (overlap policy CANCEL_OLD).
        Cancelled => "CANCELLED",
        /// Its run timeout passed.
        TimedOut => "TIMED_OUT",
        /// Never started: the workflow had `maxConcurrentRuns` runs already (the message says).
        Skipped => "SKIPPED",
    }
);

impl RunState {
    /// Whether the run has ended.
    pub fn ended(self) -> bool {
        !matches!(self, RunState::Queued | RunState::Running)
    }
}

string_enum!(
    /// What a fire does when the workflow already has `maxConcurrentRuns` runs.
    OverlapPolicy, "overlap policy" {
        /// The new run is skipped (recorded, with the reason).
        Skip => "SKIP",
        /// The new run waits for a slot, up to `queueMax` waiting runs.
        Queue => "QUEUE",
        /// The oldest running run is cancelled and the new one starts.
        CancelOld => "CANCEL_OLD",
        /// The new run starts anyway.
        Allow => "ALLOW",
    }
);

fn default_join() -> Join {
    Join::All
}

fn default_when() -> EdgeWhen {
    EdgeWhen::Success
}

/// One node of a workflow's definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDef {
    /// Unique in the workflow: letters, digits, `_` and `-`.
    pub key: String,
    /// JOB or DECISION.
    pub kind: NodeKind,
    /// The job a JOB node runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<i32>,
    /// Replaces the job's executorParam; may hold `${context.KEY}` and `${workflow.params}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// A DECISION node's expression (CEL), reading `context` and `workflow.params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// ALL (the default) or ANY.
    #[serde(default = "default_join")]
    pub join: Join,
    /// Retries of a failed JOB node, instead of the job's `executorFailRetryCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<i32>,
    /// Seconds a JOB node's run may take, instead of the job's `executorTimeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<i32>,
}

impl NodeDef {
    /// A JOB node running job `job_id`, every other field at its default.
    pub fn job(key: &str, job_id: i32) -> NodeDef {
        NodeDef {
            key: key.into(),
            kind: NodeKind::Job,
            job_id: Some(job_id),
            params: None,
            expression: None,
            join: Join::All,
            retries: None,
            timeout_secs: None,
        }
    }
}

/// One edge of a workflow's definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeDef {
    /// The source node's key.
    pub from: String,
    /// The target node's key.
    pub to: String,
    /// When it is followed (SUCCESS by default).
    #[serde(default = "default_when")]
    pub when: EdgeWhen,
}

/// A workflow's graph: what a run snapshots when it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The nodes.
    pub nodes: Vec<NodeDef>,
    /// The edges.
    pub edges: Vec<EdgeDef>,
}

impl Definition {
    /// The node with this key.
    pub fn node(&self, key: &str) -> Option<&NodeDef> {
        self.nodes.iter().find(|n| n.key == key)
    }

    /// The definition as stored: JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"nodes\":[],\"edges\":[]}".into())
    }

    /// The stored form read back.
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("unreadable workflow definition: {e}"))
    }
}

/// A workflow (`workflow`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workflow {
    /// Primary key.
    pub id: i32,
    /// The executor group its jobs belong to.
    pub job_group: i32,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// How it is scheduled: NONE, CRON or FIX_RATE.
    pub schedule_type: ScheduleType,
    /// Cron expression or seconds.
    pub schedule_conf: String,
    /// IANA zone of the cron expression; empty for the admin's.
    pub timezone: String,
    /// What a missed fire time does.
    pub misfire_strategy: MisfireStrategy,
    /// Runs that may be active at once (1 by default).
    pub max_concurrent_runs: i32,
    /// What a fire beyond `max_concurrent_runs` does.
    pub overlap_policy: OverlapPolicy,
    /// Most runs waiting for a slot under QUEUE.
    pub queue_max: i32,
    /// Seconds a run may take; 0: no limit.
    pub run_timeout_secs: i32,
    /// Alarm e-mail addresses, comma-separated, for a FAILED or TIMED_OUT run.
    pub alarm_email: String,
    /// Alarm webhook URL for a FAILED or TIMED_OUT run.
    pub alarm_webhook: String,
    /// Its graph.
    pub definition: Definition,
    /// Counts every change of the definition; a run shows the one it started with.
    pub version: i32,
    /// 0 stopped, 1 scheduled.
    pub trigger_status: i32,
    /// Last fire time claimed, epoch ms.
    pub trigger_last_time: i64,
    /// Next fire time, epoch ms (0 when stopped).
    pub trigger_next_time: i64,
    /// Whose rights its nodes act with: whoever last saved it.
    pub owner_id: i32,
    /// Created, epoch ms.
    pub add_time: i64,
    /// Changed, epoch ms.
    pub update_time: i64,
}

/// One run of a workflow (`workflow_run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRun {
    /// Primary key.
    pub id: i64,
    /// The workflow.
    pub workflow_id: i32,
    /// Its group, when the run started.
    pub job_group: i32,
    /// The definition's version it started with.
    pub version: i32,
    /// The definition it started with (later edits do not change it); shared, as the runner
    /// reads and copies it at every move.
    pub definition: std::sync::Arc<Definition>,
    /// Where it stands.
    pub state: RunState,
    /// No node starts while set.
    pub paused: bool,
    /// CRON, MANUAL, API or MISFIRE.
    pub trigger_type: TriggerType,
    /// What `${workflow.params}` stands for.
    pub params: String,
    /// The outputs of its nodes merged in the order they ended: a JSON object.
    pub context: String,
    /// Why it was skipped, queued, or how it ended.
    pub message: String,
    /// The fire time it stands for (0 for manual runs), epoch ms.
    pub schedule_time: i64,
    /// Created, epoch ms.
    pub create_time: i64,
    /// Started (left the queue), epoch ms; 0 before.
    pub start_time: i64,
    /// Ended, epoch ms; 0 before.
    pub end_time: i64,
    /// It times out at this instant; 0: no limit.
    pub deadline: i64,
    /// Whether its alarm went out (see [`alarm_status`]).
    pub alarm_status: i32,
}

/// One node of one run (`workflow_node`); JOB nodes point at their runs' rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRun {
    /// Primary key.
    pub id: i64,
    /// The run.
    pub run_id: i64,
    /// The node's key.
    pub node_key: String,
    /// Where it stands.
    pub state: NodeState,
    /// Attempts made (a JOB node's retries and a run's retries add one each).
    pub attempt: i32,
    /// Attempts made before the run was last retried: the node's own retries count from here.
    pub base_attempt: i32,
    /// The run row of its current attempt (0: none).
    pub log_id: i64,
    /// Every run row of its attempts, oldest first.
    pub log_ids: Vec<i64>,
    /// The admin that fired its current attempt (its id in `admin_node`).
    pub owner: String,
    /// Its output: the result message when that is a JSON object.
    pub output: Option<String>,
    /// A DECISION node's outcome.
    pub decision: Option<bool>,
    /// Why it ended as it did, in words.
    pub message: String,
    /// When its parents let it run (or, for a retry, when it was due), epoch ms.
    pub ready_time: i64,
    /// Its current attempt fired, epoch ms.
    pub start_time: i64,
    /// Ended, epoch ms.
    pub end_time: i64,
    /// A failed attempt's retry is due at this instant (0: none pending).
    pub retry_at: i64,
}
