//! The trigger message XXL-JOB keeps on a run row: what was known before the call, then what
//! the route and the executor answered.

use super::*;

/// The start of the HTML summary XXL-JOB stores in `trigger_msg` (in English): what is known of
/// a trigger before its executor is called.
pub(super) struct MessageHead<'a> {
    pub(super) job: &'a JobInfo,
    pub(super) trigger_type: TriggerType,
    pub(super) admin_address: &'a str,
    pub(super) targets: &'a Targets,
    pub(super) index: i32,
    pub(super) total: i32,
    pub(super) fail_retry_count: i32,
}

impl std::fmt::Display for MessageHead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let job = self.job;
        let mut route = job.executor_route_strategy.as_str().to_string();
        if job.executor_route_strategy == RouteStrategy::ShardingBroadcast {
            route.push_str(&format!("({}/{})", self.index, self.total));
        }
        write!(
            f,
            "Trigger type：{}<br>Admin address：{}<br>Executor registry type：{}<br>Executor addresses：[{}]<br>\
             Route strategy：{}<br>Block strategy：{}<br>Timeout：{}<br>Fail retry count：{}<br><br>\
             <span style=\"color:#00c0ef;\" > >>>>>>>>>>>Trigger Job<<<<<<<<<<< </span><br>",
            self.trigger_type.title(),
            self.admin_address,
            self.targets.registry_type,
            AddressSummary(&self.targets.addresses),
            route,
            job.executor_block_strategy.as_str(),
            job.executor_timeout,
            self.fail_retry_count,
        )
    }
}

/// Addresses shown in a run's trigger message: a group of hundreds of executors would make every
/// run row of it hundreds of kilobytes.
pub(super) const ADDRESSES_SHOWN: usize = 20;

/// The first [`ADDRESSES_SHOWN`] addresses, then how many there are in all.
pub(super) struct AddressSummary<'a>(pub(super) &'a [String]);

impl std::fmt::Display for AddressSummary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = &self.0[..self.0.len().min(ADDRESSES_SHOWN)];
        f.write_str(&shown.join(", "))?;
        if self.0.len() > shown.len() {
            write!(f, ", … ({} in all)", self.0.len())?;
        }
        Ok(())
    }
}

/// The whole summary: its head, then the route's probes (if any), then the call's answer.
pub(super) fn trigger_message(head: &str, route_msg: &str, run_msg: &str) -> String {
    let mut msg = String::with_capacity(head.len() + route_msg.len() + run_msg.len() + 8);
    msg.push_str(head);
    if !route_msg.is_empty() {
        msg.push_str(route_msg);
        msg.push_str("<br><br>");
    }
    msg.push_str(run_msg);
    msg
}
