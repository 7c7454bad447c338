//! A closed-loop HTTP load generator: `connections` tasks, each with its own keep-alive
//! connection, sending `/run` triggers until a deadline or a work list runs out.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::sim::{post_ok, trigger_body};

/// What a load run did.
#[derive(Debug, Default)]
pub struct LoadOutcome {
    /// Answers `{"code":200}`.
    pub acked: u64,
    /// Other answers or transport errors.
    pub failed: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// Send instant per acknowledged log id.
    pub sent_at: HashMap<i64, Instant>,
    /// From the first send to the last answer.
    pub elapsed: Duration,
}

/// Which triggers to send.
pub enum Work {
    /// Exactly these (job id, log id) pairs.
    List(Vec<(i32, i64)>),
    /// Until the deadline: log ids `after + 1`, `after + 2`, ... over job ids 1..=`jobs`.
    Until {
        /// When to stop sending.
        deadline: Instant,
        /// Distinct job ids cycled through.
        jobs: i32,
        /// The log id before the first one sent (an executor refuses a log id it accepted).
        after: i64,
    },
}

struct Queue {
    work: Work,
    next: i64,
}

impl Queue {
    fn take(&mut self) -> Option<(i32, i64)> {
        match &mut self.work {
            Work::List(items) => items.pop(),
            Work::Until {
                deadline,
                jobs,
                after,
            } => {
                if Instant::now() >= *deadline {
                    return None;
                }
                self.next += 1;
                let log_id = *after + self.next;
                Some(((log_id % i64::from(*jobs)) as i32 + 1, log_id))
            }
        }
    }
}

/// Sends triggers for `handler` to `base` (an executor address with trailing slash).
pub async fn send_triggers(
    base: &str,
    handler: &str,
    work: Work,
    connections: usize,
) -> LoadOutcome {
    let queue = Rc::new(RefCell::new(Queue { work, next: 0 }));
    let outcome = Rc::new(RefCell::new(LoadOutcome::default()));
    let url = format!("{base}run");
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections.max(1) {
        let queue = queue.clone();
        let outcome = outcome.clone();
        let url = url.clone();
        let handler = handler.to_string();
        tasks.push(actix_web::rt::spawn(async move {
            let client = awc::Client::builder()
                .timeout(Duration::from_secs(30))
                .finish();
            loop {
                let next = queue.borrow_mut().take();
                let Some((job_id, log_id)) = next else { break };
                let body = trigger_body(job_id, log_id, &handler);
                let sent = Instant::now();
                let answer = post_ok(&client, &url, &body).await;
                let mut o = outcome.borrow_mut();
                match answer {
                    Ok(()) => {
                        o.acked += 1;
                        o.sent_at.insert(log_id, sent);
                    }
                    Err(e) => {
                        o.failed += 1;
                        o.first_error.get_or_insert(e);
                    }
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let mut o = std::mem::take(&mut *outcome.borrow_mut());
    o.elapsed = started.elapsed();
    o
}
