//! How the engine below tells the workflow runner that runs have something new: a node's run
//! row got its result, or its trigger failed. A leaf both sides import, so the runner (which
//! sends triggers down to the dispatcher) and the trigger path (which reports back up) do not
//! import each other.

use std::sync::{Arc, OnceLock};

use actix::prelude::*;

/// Look at these runs again: something of theirs changed.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
#[rtype(result = "()")]
pub struct AdvanceRuns {
    /// The workflow runs.
    pub run_ids: Vec<i64>,
}

/// Where [`AdvanceRuns`] go once the runner has started; nowhere before (and in tests that
/// start no runner), where the runner's own pass finds the runs later.
#[derive(Clone, Default)]
pub struct WorkflowLink(Arc<OnceLock<Recipient<AdvanceRuns>>>);

impl WorkflowLink {
    /// Connects the link to the runner.
    pub fn connect(&self, runner: Recipient<AdvanceRuns>) {
        let _ = self.0.set(runner);
    }

    /// Tells the runner to look at `run_ids` (nothing when empty or not connected).
    pub fn advance(&self, mut run_ids: Vec<i64>) {
        run_ids.sort_unstable();
        run_ids.dedup();
        if run_ids.is_empty() {
            return;
        }
        if let Some(runner) = self.0.get() {
            runner.do_send(AdvanceRuns { run_ids });
        }
    }
}

impl std::fmt::Debug for WorkflowLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "WorkflowLink(connected)"
        } else {
            "WorkflowLink(not connected)"
        })
    }
}
