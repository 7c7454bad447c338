//! Batched recording of trigger outcomes: the outcomes of a burst of executor calls are written
//! together once the burst's calls are done (one statement per chunk), instead of one each.
//!
//! One writer lives on each trigger worker's thread (it is `Rc`, not shared across threads);
//! a fire waits until its outcome is stored, so a caller waiting for a trigger's report reads
//! the row as the report describes it.
//!
//! The write waits for the admin's calls in flight to end (on every worker: [`CallGauge`]), for
//! at most `GATHER_MAX`, because a database write in the middle of a second's burst of calls
//! competes for the CPU with the calls still going out (on SQLite the write runs in this
//! process); fewer, larger writes also keep up with higher fire rates on a server database.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::call_gauge::{CallGauge, InFlight};
use super::db_retry::until_written;
use crate::model::TriggerOutcome;
use crate::store::{ActorStore, ClaimKey, Store, StoreResult};

/// The longest an outcome waits for the calls still in flight before it is written anyway.
const GATHER_MAX: Duration = Duration::from_millis(200);
/// A batch this large is written without waiting. Large enough that a big second's outcomes
/// are not written piecemeal inside its own burst of calls. The bound
/// only caps what one worker holds (under 1 KB a row); the store splits the write into
/// statements of its own size.
const FULL: usize = 5_000;

/// Gathers outcomes and writes them in batches.
pub struct OutcomeWriter {
    store: ActorStore,
    rows: RefCell<Vec<(i64, TriggerOutcome)>>,
    /// Claimed fire times whose outcomes are in `rows`: released once those are written.
    claims: RefCell<Vec<ClaimKey>>,
    waiters: RefCell<Vec<oneshot::Sender<()>>>,
    flush_armed: Cell<bool>,
    calls: Arc<CallGauge>,
}

impl OutcomeWriter {
    /// A writer on `store` that yields to the calls counted by `calls`; must be used on one
    /// thread with a local task set (an arbiter).
    pub fn new(store: ActorStore, calls: Arc<CallGauge>) -> Rc<Self> {
        Rc::new(OutcomeWriter {
            store,
            rows: RefCell::new(Vec::new()),
            claims: RefCell::new(Vec::new()),
            waiters: RefCell::new(Vec::new()),
            flush_armed: Cell::new(false),
            calls,
        })
    }

    /// Counts an executor call as in flight until its outcome is recorded (or the guard dropped).
    pub fn calling(&self) -> InFlight {
        self.calls.call()
    }

    /// Queues the outcomes of `call` and resolves once they are written (or the write failed
    /// and was logged). They are written when no other call is in flight (on any worker), when
    /// `FULL` rows wait, or after `GATHER_MAX`, whichever comes first. The fire's `claim`,
    /// if it had one, is released with them.
    pub async fn record(
        self: &Rc<Self>,
        call: InFlight,
        outcomes: Vec<(i64, TriggerOutcome)>,
        claim: Option<ClaimKey>,
    ) {
        drop(call);
        if outcomes.is_empty() {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.rows.borrow_mut().extend(outcomes);
        self.claims.borrow_mut().extend(claim);
        self.waiters.borrow_mut().push(tx);
        if self.calls.in_flight() == 0 || self.rows.borrow().len() >= FULL {
            actix::spawn(self.clone().flush());
        } else if !self.flush_armed.replace(true) {
            let me = self.clone();
            actix::spawn(async move {
                me.calls.quiet(GATHER_MAX).await;
                me.flush_armed.set(false);
                me.flush().await;
            });
        }
        // a dropped sender (the arbiter stopping) ends the wait as well
        let _ = rx.await;
    }

    async fn flush(self: Rc<Self>) {
        let rows = std::mem::take(&mut *self.rows.borrow_mut());
        let claims = std::mem::take(&mut *self.claims.borrow_mut());
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        if rows.is_empty() {
            return;
        }
        let count = rows.len();
        let written = self
            .store
            .run(move |s| async move {
                let started = std::time::Instant::now();
                let written = write(&s, &rows, &claims).await;
                s.availability().observe(&written, started);
                Ok((written, rows, claims))
            })
            .await;
        match written {
            Ok((Ok(()), _, _)) => {}
            // the calls were made: their outcomes wait for the database rather than being lost
            Ok((Err(e), rows, claims)) if e.is_outage() => {
                log::debug!("outcomes of {count} trigger(s) not written yet: {e}");
                let what = format!("the outcomes of {count} trigger(s)");
                let (rows, claims) = (Arc::new(rows), Arc::new(claims));
                until_written(&self.store, what, move |s| {
                    let (rows, claims) = (rows.clone(), claims.clone());
                    async move { write(&s, &rows, &claims).await }
                });
            }
            // refused for what a row holds: written one at a time, so one row cannot cost the rest
            Ok((Err(e), rows, claims)) => {
                log::warn!(
                    "cannot record the outcomes of {count} trigger(s) together ({e}): writing them one by one"
                );
                let written = self
                    .store
                    .run(move |s| async move { Ok(write_each(&s, &rows, &claims).await) })
                    .await;
                if let Ok(Err(e)) | Err(e) = written {
                    log::error!("cannot record the outcomes of {count} trigger(s): {e}");
                }
            }
            Err(e) => log::error!("cannot record the outcomes of {count} trigger(s): {e}"),
        }
        for w in waiters {
            let _ = w.send(());
        }
    }
}

/// Writes the outcomes and forgets the claims of their fires; the claims go even when the
/// outcomes are refused, since the calls were made.
async fn write(
    store: &Store,
    rows: &[(i64, TriggerOutcome)],
    claims: &[ClaimKey],
) -> StoreResult<()> {
    let written = store.set_trigger_outcomes(rows).await;
    let released = store.release_claims(claims).await;
    written.and(released)
}

/// Writes each outcome on its own; one the database still refuses is written with the reason in
/// place of its message, keeping the executor's code: an accepted run goes on and its result
/// closes it, a refused one is closed as failed (and retried and alarmed as such). Nothing stays
/// without an outcome because a message beside it could not be stored.
async fn write_each(
    store: &Store,
    rows: &[(i64, TriggerOutcome)],
    claims: &[ClaimKey],
) -> StoreResult<()> {
    for (log_id, outcome) in rows {
        let err = match store.set_trigger_outcome(*log_id, outcome).await {
            Ok(_) => continue,
            Err(e) if e.is_outage() => return Err(e),
            Err(e) => e,
        };
        log::error!(
            "log {log_id}: the trigger's outcome (code {}) cannot be stored as it is ({err}); \
             stored with the reason instead",
            outcome.trigger_code
        );
        let plain = TriggerOutcome {
            trigger_msg: format!(
                "the trigger's outcome (code {}) could not be stored as it is: {err}",
                outcome.trigger_code
            ),
            ..outcome.clone()
        };
        store.set_trigger_outcome(*log_id, &plain).await?;
    }
    store.release_claims(claims).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NewRunRow;

    async fn store_with_logs(n: usize) -> (crate::store::Store, Vec<i64>) {
        let store = crate::store::Store::connect("sqlite::memory:", &Default::default())
            .await
            .expect("in-memory SQLite");
        store.migrate().await.expect("migrations");
        let mut ids = Vec::new();
        for _ in 0..n {
            ids.push(
                store
                    .insert_log(&NewRunRow::sample())
                    .await
                    .expect("log row"),
            );
        }
        (store, ids)
    }

    fn accepted() -> TriggerOutcome {
        TriggerOutcome {
            trigger_code: 200,
            trigger_msg: "ok".into(),
            ..Default::default()
        }
    }

    async fn code(store: &crate::store::Store, id: i64) -> i32 {
        store
            .get_log(id)
            .await
            .expect("read")
            .expect("row")
            .trigger_code
    }

    #[actix_rt::test]
    async fn a_lone_call_is_written_at_once() {
        let (store, ids) = store_with_logs(1).await;
        let writer = OutcomeWriter::new(ActorStore::new(store.clone()), CallGauge::new());
        let call = writer.calling();
        writer.record(call, vec![(ids[0], accepted())], None).await;
        // nothing else was in flight: written without arming the gather timer
        assert!(!writer.flush_armed.get());
        assert_eq!(code(&store, ids[0]).await, 200);
    }

    #[actix_rt::test]
    async fn a_burst_is_written_when_its_last_call_ends() {
        let (store, ids) = store_with_logs(2).await;
        let writer = OutcomeWriter::new(ActorStore::new(store.clone()), CallGauge::new());
        let first = writer.calling();
        let second = writer.calling();
        let (w, id) = (writer.clone(), ids[0]);
        let first_done =
            actix_rt::spawn(async move { w.record(first, vec![(id, accepted())], None).await });
        actix_rt::time::sleep(GATHER_MAX / 4).await;
        // the second call is still in flight: the first outcome waits for it
        assert!(!first_done.is_finished());
        assert_eq!(code(&store, ids[0]).await, 0);
        writer
            .record(second, vec![(ids[1], accepted())], None)
            .await;
        first_done.await.expect("first record");
        assert_eq!(code(&store, ids[0]).await, 200);
        assert_eq!(code(&store, ids[1]).await, 200);
    }

    #[actix_rt::test]
    async fn a_call_on_another_worker_holds_the_write() {
        let (store, ids) = store_with_logs(1).await;
        let calls = CallGauge::new();
        let writer = OutcomeWriter::new(ActorStore::new(store.clone()), calls.clone());
        let other_worker = OutcomeWriter::new(ActorStore::new(store.clone()), calls.clone());
        let call = writer.calling();
        let elsewhere = other_worker.calling();
        let (w, id) = (writer.clone(), ids[0]);
        let done =
            actix_rt::spawn(async move { w.record(call, vec![(id, accepted())], None).await });
        actix_rt::time::sleep(GATHER_MAX / 4).await;
        assert!(!done.is_finished());
        assert_eq!(code(&store, ids[0]).await, 0);
        drop(elsewhere);
        done.await.expect("record");
        assert_eq!(code(&store, ids[0]).await, 200);
    }

    #[actix_rt::test]
    async fn an_outcome_waits_at_most_the_gather_time() {
        let (store, ids) = store_with_logs(1).await;
        let writer = OutcomeWriter::new(ActorStore::new(store.clone()), CallGauge::new());
        let call = writer.calling();
        let stuck = writer.calling();
        writer.record(call, vec![(ids[0], accepted())], None).await;
        assert_eq!(code(&store, ids[0]).await, 200);
        drop(stuck);
    }
}
