//! Batched recording of trigger outcomes: the outcomes of the fires that end within a few
//! milliseconds of each other are written with one statement instead of one each.
//!
//! One writer lives on each trigger worker's thread (it is `Rc`, not shared across threads);
//! a fire waits until its outcome is stored, so a caller waiting for a trigger's report reads
//! the row as the report describes it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::model::TriggerOutcome;
use crate::store::Store;

/// How long the first outcome of a batch waits for others to join it.
const GATHER: Duration = Duration::from_millis(20);
/// A batch this large is written without waiting.
const FULL: usize = 500;

/// Gathers outcomes and writes them in batches.
pub struct OutcomeWriter {
    store: Store,
    rows: RefCell<Vec<(i64, TriggerOutcome)>>,
    waiters: RefCell<Vec<oneshot::Sender<()>>>,
    flush_armed: Cell<bool>,
}

impl OutcomeWriter {
    /// A writer on `store`; must be used on one thread with a local task set (an arbiter).
    pub fn new(store: Store) -> Rc<Self> {
        Rc::new(OutcomeWriter {
            store,
            rows: RefCell::new(Vec::new()),
            waiters: RefCell::new(Vec::new()),
            flush_armed: Cell::new(false),
        })
    }

    /// Queues outcomes and resolves once they are written (or the write failed and was logged).
    pub async fn record(self: &Rc<Self>, outcomes: Vec<(i64, TriggerOutcome)>) {
        if outcomes.is_empty() {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.rows.borrow_mut().extend(outcomes);
        self.waiters.borrow_mut().push(tx);
        if self.rows.borrow().len() >= FULL {
            actix::spawn(self.clone().flush());
        } else if !self.flush_armed.replace(true) {
            let me = self.clone();
            actix::spawn(async move {
                actix_rt::time::sleep(GATHER).await;
                me.flush_armed.set(false);
                me.flush().await;
            });
        }
        // a dropped sender (the arbiter stopping) ends the wait as well
        let _ = rx.await;
    }

    async fn flush(self: Rc<Self>) {
        let rows = std::mem::take(&mut *self.rows.borrow_mut());
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        if rows.is_empty() {
            return;
        }
        let count = rows.len();
        let written = self
            .store
            .detached(move |s| async move { s.set_trigger_outcomes(&rows).await })
            .await;
        if let Err(e) = written {
            log::error!("cannot record the outcomes of {count} trigger(s): {e}");
        }
        for w in waiters {
            let _ = w.send(());
        }
    }
}
