//! Triggers, start to end (XXL-JOB `XxlJobTrigger.trigger` / `processTrigger`), in two steps.
//!
//! [`prepare_batch`] loads the jobs, groups and live executors of a whole batch and inserts its
//! log rows in multi-row statements; the ring does this a second ahead, so at the fire time only
//! [`fire_prepared`] is left: choose the executor, call `run`, and hand the outcome to a batched
//! writer. XXL-JOB does these statements one by one per fire, at the fire time.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use actix::Message;
use chrono_tz::Tz;
use tokio::sync::oneshot;

use super::db_retry::until_written;
use super::fault_exit::FaultExit;
use super::fire::Resend;
use super::lease::Lease;
use super::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use super::workflow_link::WorkflowLink;
use crate::clock::now_ms;
use crate::executor_calls::{failure, Credentials, ExecutorCalls};
use crate::metrics::AdminMetrics;
use crate::model::{
    address_key, executor_token, AddressType, Admission, ExecutorCordon, JobGroup, JobInfo,
    JobSchedule, NewRunRow, Registration, RouteStrategy, ScheduleType, TriggerOutcome, TriggerType,
    TRIGGER_STATUS_RUNNING,
};
use crate::protocol::{AdminProtocol, Labels, TriggerParam, FAIL_CODE, SUCCESS_CODE};
use crate::routing::{
    probe_in_order, shard_address, ProbeKind, RouteDecision, Router, Selector, Suspects,
    ADDRESS_EMPTY_MSG, ROUTE_FAIL_MSG,
};
use crate::store::{ActorStore, Admitted, ClaimKey, InstanceCaps, ReplacedRun, Store};

/// Trigger a job once (XXL-JOB `JobTriggerPoolHelper.trigger`).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Trigger {
    /// The job.
    pub job_id: i32,
    /// Why; recorded on the log row.
    pub trigger_type: TriggerType,
    /// The fire time it stands for, epoch ms (0 for manual/API/parent triggers).
    pub schedule_time: i64,
    /// Retries left after this run; `None` takes the job's setting.
    pub fail_retry_count: Option<i32>,
    /// Overrides the job's parameter (manual triggers, retries).
    pub executor_param: Option<String>,
    /// `"i/n"`: trigger only this shard (retry of a broadcast shard).
    pub sharding_param: Option<String>,
    /// Use these addresses instead of the group's (manual trigger with a custom list).
    pub address_list: Option<Vec<String>>,
    /// Where to send the outcome, for callers that wait for the log ids.
    pub reply: Option<oneshot::Sender<TriggerReport>>,
    /// A workflow node's attempt, whose run row exists already.
    pub node: Option<NodeFire>,
    /// A taken-over fire's run row, sent by its dead admin with no answer recorded: fired
    /// again as itself (see [`fire_prepared`]).
    pub resend: Option<Resend>,
    /// A fire that waited in its job's instance queue and now holds its slot: its run row
    /// exists and was never sent.
    pub dequeued: Option<Dequeued>,
}

/// A queued fire's run row, given its slot (see [`crate::store::Store::take_queued`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequeued {
    /// The row.
    pub log_id: i64,
    /// Its trigger time, moved to when it left the queue.
    pub trigger_time: i64,
}

/// A workflow node's attempt to fire: its run row was inserted with the node's claim, so the
/// trigger fires that row (a second send of it is the same log id, which a jobwheel executor
/// runs once).
#[derive(Debug, Clone)]
pub struct NodeFire {
    /// The run row.
    pub log_id: i64,
    /// The workflow run.
    pub run_id: i64,
    /// The node's timeout, instead of the job's.
    pub timeout_secs: Option<i32>,
    /// The run's context, sent to jobwheel executors with the trigger.
    pub context: Arc<str>,
    /// The job as the move that claimed the attempt read it (in its transaction, moments
    /// before): the fire's preparation does not read it again.
    pub job: Arc<JobInfo>,
}

impl Trigger {
    /// A trigger with the job's own settings.
    pub fn new(job_id: i32, trigger_type: TriggerType, schedule_time: i64) -> Self {
        Trigger {
            job_id,
            trigger_type,
            schedule_time,
            fail_retry_count: None,
            executor_param: None,
            sharding_param: None,
            address_list: None,
            reply: None,
            node: None,
            resend: None,
            dequeued: None,
        }
    }
}

/// What every trigger needs from the admin.
#[derive(Clone)]
pub struct TriggerEnv {
    /// The database, reached through tasks of their own.
    pub store: ActorStore,
    /// Global executor token (groups with their own token use that instead).
    pub access_token: String,
    /// Zone of jobs without their own (for FIX_DELAY/cron follow-ups).
    pub default_tz: Tz,
    /// This admin's address, shown in trigger messages.
    pub admin_address: String,
    /// Where fires, results and lost runs are counted.
    pub metrics: Arc<AdminMetrics>,
    /// Whether this admin's claimed fire times are still surely its own.
    pub lease: Arc<Lease>,
    /// Tells the workflow runner about its runs' node results and failed node triggers.
    pub workflows: WorkflowLink,
    /// Where the crash tests make this admin die (nowhere in a release build).
    pub faults: FaultExit,
    /// The executors routing leaves out, shared by every router of this admin.
    pub suspects: Suspects,
    /// This admin's id in the cluster, recorded with the suspects it marks.
    pub node_id: Arc<str>,
    /// The routing rows workflow node batches read, kept for the next ones.
    pub routing: Arc<RoutingCache>,
}

/// The outcome of one trigger: a log row per shard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TriggerReport {
    /// Log ids created, in shard order.
    pub log_ids: Vec<i64>,
    /// Trigger codes, aligned with `log_ids`.
    pub codes: Vec<i32>,
    /// Why nothing was triggered (job gone, or not admitted), if so.
    pub error: Option<String>,
    /// When admission kept the fire from running now: QUEUED, SKIPPED or REFUSED.
    pub admission: Option<Admission>,
}

/// The executors a trigger may use and how to talk to each.
struct Targets {
    addresses: Vec<String>,
    protocols: Vec<AdminProtocol>,
    registry_type: &'static str,
    /// Addresses asked for that the group does not have, left out (see [`chosen_targets`]).
    refused: Vec<String>,
    /// The job's executor selector when it chose these addresses (see [`selected_targets`]):
    /// named when none is left.
    selector: Option<String>,
    /// Addresses left out because they are cordoned (see [`uncordoned_targets`]).
    cordoned: Vec<String>,
    /// Every address a selector or a cordon left out, with its protocol: a resend still asks
    /// them whether they hold the run, so one is never run twice.
    left_out: Vec<(String, AdminProtocol)>,
}

impl Targets {
    fn protocol_of(&self, address: &str) -> AdminProtocol {
        self.addresses
            .iter()
            .position(|a| a == address)
            .and_then(|i| self.protocols.get(i).copied())
            .or_else(|| {
                let left_out = self.left_out.iter().find(|(a, _)| a == address);
                left_out.map(|(_, p)| *p)
            })
            .unwrap_or(AdminProtocol::V2)
    }

    /// These targets with only the addresses `keep` holds; the others are left out.
    fn narrowed(&self, keep: impl Fn(&str) -> bool) -> Targets {
        let mut out = Targets {
            addresses: Vec::new(),
            protocols: Vec::new(),
            registry_type: self.registry_type,
            refused: self.refused.clone(),
            selector: self.selector.clone(),
            cordoned: self.cordoned.clone(),
            left_out: self.left_out.clone(),
        };
        for (address, protocol) in self.addresses.iter().zip(&self.protocols) {
            if keep(address) {
                out.addresses.push(address.clone());
                out.protocols.push(*protocol);
            } else {
                out.left_out.push((address.clone(), *protocol));
            }
        }
        out
    }

    /// Every address worth asking whether it holds a run: the usable ones and those left out.
    fn all_addresses(&self) -> Vec<String> {
        let left_out = self.left_out.iter().map(|(a, _)| a.clone());
        self.addresses.iter().cloned().chain(left_out).collect()
    }
}

/// A trigger whose job, executors and log rows are ready: only routing and `run` remain.
pub struct PreparedTrigger {
    trigger: Trigger,
    job: Arc<JobInfo>,
    group: Option<Arc<JobGroup>>,
    targets: Arc<Targets>,
    param: String,
    trigger_time: i64,
    /// One per log row.
    shards: Vec<Shard>,
    /// Runs closed to make room for this one (overflow REPLACE): killed on their executors
    /// before it is sent.
    replaced: Vec<ReplacedRun>,
}

/// One log row of a prepared trigger: a broadcast has one per executor, any other trigger one.
struct Shard {
    index: i32,
    total: i32,
    log_id: i64,
    /// The trigger message up to the call's answer, stored with the row when it is inserted.
    message_head: String,
}

impl PreparedTrigger {
    /// The job this trigger runs.
    pub fn job_id(&self) -> i32 {
        self.job.id
    }

    /// The fire time it stands for, epoch ms (0 for manual/API/parent triggers).
    pub fn schedule_time(&self) -> i64 {
        self.trigger.schedule_time
    }

    /// Why it fires.
    pub fn trigger_type(&self) -> TriggerType {
        self.trigger.trigger_type
    }

    /// The claim a pre-read fire holds until its outcome is written.
    pub fn claim(&self) -> Option<ClaimKey> {
        self.trigger.claim()
    }
}

impl Trigger {
    /// The claim of a pre-read fire (CRON or MISFIRE); other triggers hold none.
    pub fn claim(&self) -> Option<ClaimKey> {
        // a queued fire's claim was released when its row was queued
        let scheduled = matches!(self.trigger_type, TriggerType::Cron | TriggerType::Misfire);
        (scheduled && self.dequeued.is_none()).then_some(ClaimKey {
            job_id: self.job_id,
            fire_time: self.schedule_time,
        })
    }
}

/// How many calls each executor address can expect from `fires`: a broadcast's shards one
/// each, any other fire an equal share of its group's addresses (its route is only decided when
/// it fires). What the connections opened ahead of a second are sized by.
pub fn expected_calls<'a>(
    fires: impl IntoIterator<Item = &'a PreparedTrigger>,
) -> Vec<(String, usize)> {
    let mut share: HashMap<&str, f64> = HashMap::new();
    for p in fires {
        let addresses = &p.targets.addresses;
        if addresses.is_empty() {
            continue;
        }
        if p.job.executor_route_strategy == RouteStrategy::ShardingBroadcast {
            for shard in &p.shards {
                if let Some(a) = shard_address(addresses, shard.index) {
                    *share.entry(a).or_default() += 1.0;
                }
            }
        } else {
            let each = p.shards.len() as f64 / addresses.len() as f64;
            for a in addresses {
                *share.entry(a).or_default() += each;
            }
        }
    }
    let mut wants: Vec<(String, usize)> = share
        .into_iter()
        .map(|(a, n)| (a.to_string(), n.ceil() as usize))
        .collect();
    wants.sort();
    wants
}

/// What preparing one trigger gave: ready to fire, or a report of why not.
pub enum Prepared {
    /// Log rows inserted; fire with [`fire_prepared`].
    Ready(Box<PreparedTrigger>),
    /// Nothing to fire (job gone or stopped, database error); the report says why.
    Skipped(TriggerReport),
}

mod call;
mod message;
mod prepare;
mod routing_cache;

pub use call::{after_fire, fire_prepared, resume_fix_delay};
use message::{trigger_message, MessageHead};
pub use prepare::prepare_batch;
pub use routing_cache::RoutingCache;

#[cfg(test)]
mod tests;
