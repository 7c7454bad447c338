//! One claimed fire time, as the pre-read, the take-over and the lease name it.

use crate::model::TriggerType;
use crate::store::ClaimKey;

/// One fire time decided by a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fire {
    /// The job.
    pub job_id: i32,
    /// The instant it stands for, epoch ms.
    pub fire_time: i64,
    /// CRON, or MISFIRE for a catch-up run.
    pub trigger_type: TriggerType,
    /// The run row its dead admin sent without recording the answer, sent again as itself.
    pub resend: Option<Resend>,
}

/// A run row whose call went out (or may have) before its admin stopped, the answer never
/// recorded: it is sent again under the same log id, never as a new row, so an executor that
/// has it already runs it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resend {
    /// The row, and the log id the executor was sent.
    pub log_id: i64,
    /// The row's trigger time, sent as its `logDateTime` the first time.
    pub trigger_time: i64,
}

impl Fire {
    /// The claim this fire holds until its outcome is written.
    pub fn claim(&self) -> ClaimKey {
        ClaimKey {
            job_id: self.job_id,
            fire_time: self.fire_time,
        }
    }
}

/// The first five of `ids` for a log line, with `…` after them when there are more.
pub(crate) fn first_jobs(ids: impl ExactSizeIterator<Item = i32>) -> String {
    let more = ids.len() > 5;
    let mut first: Vec<String> = ids.take(5).map(|id| id.to_string()).collect();
    if more {
        first.push("…".into());
    }
    first.join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_lines_name_the_first_five_jobs() {
        assert_eq!(super::first_jobs([3, 4].into_iter()), "3, 4");
        assert_eq!(super::first_jobs(1..6), "1, 2, 3, 4, 5");
        assert_eq!(super::first_jobs(1..7), "1, 2, 3, 4, 5, …");
    }
}
