//! The executor's `ResultSender`: batches run results to the admins, one request in flight at a time so
//! results arrive in order; a batch no admin accepted is kept in `{log-path}/callbacklogs/` and retried.
//!
//! Batch files are `callback-{epochMs}-{uuid}.json`, each a JSON array of
//! `{"logId","logDateTime","handleCode","handleMsg"?}` (either time spelling is read back). They are
//! written to a dot-prefixed temp file and renamed, retried oldest first at start, 1 s after a failed
//! post and then at doubling waits up to 30 s, at once when an admin accepts a post again (a
//! restarted admin should not wait out XXL-JOB's fixed 30 s for results), and deleted only after
//! an admin answered code 200.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::oneshot;

use crate::clock::now_ms;
use crate::executor::admin_link::{self, AdminLink};
use crate::metrics::ExecutorMetrics;
use crate::protocol::{decode_callbacks, encode_callbacks, AdminProtocol, HandleCallbackParam};

/// Folder of batches waiting for an admin (XXL-JOB 3.5's name).
pub const CALLBACK_DIR: &str = "callbacklogs";

/// Batching and retry knobs.
#[derive(Debug, Clone)]
pub struct CallbackTuning {
    /// Most results per request.
    pub batch_size: usize,
    /// Send once no new result arrived for this long.
    pub quiet: Duration,
    /// Send at the latest this long after the first waiting result, even in a steady stream.
    pub max_delay: Duration,
    /// Longest wait between two tries of the saved batches while the admins keep failing (30 s,
    /// XXL-JOB's interval); the first try comes [`FIRST_RETRY`] after a failure, and a post an
    /// admin accepts sends the saved batches at once.
    pub retry_interval: Duration,
}

impl Default for CallbackTuning {
    fn default() -> Self {
        CallbackTuning {
            batch_size: 100,
            quiet: Duration::from_millis(5),
            max_delay: Duration::from_millis(50),
            retry_interval: Duration::from_secs(30),
        }
    }
}

/// The wait before saved batches are first tried again after a failed post; it doubles with
/// each failed try, up to [`CallbackTuning::retry_interval`].
pub const FIRST_RETRY: Duration = Duration::from_secs(1);

/// Most bytes of result messages in one request: an admin takes request bodies up to 5 MiB.
pub const BATCH_MESSAGE_BYTES: usize = 3 * 1024 * 1024;

/// How many of the first results of `buffer` go in one request: at most `batch_size`, and no
/// more than [`BATCH_MESSAGE_BYTES`] of messages (a larger single result goes alone).
fn batch_len(buffer: &[HandleCallbackParam], batch_size: usize) -> usize {
    let mut bytes = 0;
    let mut n = 0;
    for item in buffer.iter().take(batch_size) {
        bytes += item.handle_msg.as_ref().map_or(0, String::len);
        if n > 0 && bytes > BATCH_MESSAGE_BYTES {
            break;
        }
        n += 1;
    }
    n
}

/// A run result to report.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PushCallback(pub HandleCallbackParam);

/// Resolves once every result received so far was accepted by an admin or saved to a file and
/// the saved files were tried (what is not accepted stays saved for the next start).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Flush;

/// Batches results and posts them to the admins.
pub struct ResultSender {
    link: Arc<AdminLink>,
    dir: PathBuf,
    tuning: CallbackTuning,
    client: Option<awc::Client>,
    buffer: Vec<HandleCallbackParam>,
    first_waiting: Option<Instant>,
    timer: Option<SpawnHandle>,
    in_flight: bool,
    retrying: bool,
    /// Batch files may be waiting (the first pass at start finds out).
    saved: bool,
    /// The wait before the next try of the saved batches, and its timer when one is set.
    retry_after: Duration,
    retry_timer: Option<SpawnHandle>,
    flushed: Vec<oneshot::Sender<()>>,
    metrics: ExecutorMetrics,
}

impl ResultSender {
    /// An actor posting to `link`, keeping failed batches under `{log_base}/callbacklogs/`,
    /// counting the batches in `metrics`.
    pub fn new(
        link: Arc<AdminLink>,
        log_base: &Path,
        tuning: CallbackTuning,
        metrics: ExecutorMetrics,
    ) -> Self {
        ResultSender {
            metrics,
            link,
            dir: log_base.join(CALLBACK_DIR),
            tuning,
            client: None,
            buffer: Vec::new(),
            first_waiting: None,
            timer: None,
            in_flight: false,
            retrying: false,
            saved: true,
            retry_after: FIRST_RETRY,
            retry_timer: None,
            flushed: Vec::new(),
        }
    }

    fn client(&mut self) -> awc::Client {
        self.client.get_or_insert_with(admin_link::client).clone()
    }

    fn schedule(&mut self, ctx: &mut Context<Self>) {
        if self.buffer.len() >= self.tuning.batch_size {
            self.send_now(ctx);
            return;
        }
        if let Some(t) = self.timer.take() {
            ctx.cancel_future(t);
        }
        let waited = self.first_waiting.map(|t| t.elapsed()).unwrap_or_default();
        let delay = self
            .tuning
            .quiet
            .min(self.tuning.max_delay.saturating_sub(waited));
        self.timer = Some(ctx.run_later(delay, |act, ctx| {
            act.timer = None;
            act.send_now(ctx);
        }));
    }

    fn send_now(&mut self, ctx: &mut Context<Self>) {
        if self.in_flight {
            // the request in flight sends the rest when it completes, keeping order
            return;
        }
        if self.buffer.is_empty() {
            for tx in self.flushed.drain(..) {
                let _ = tx.send(());
            }
            return;
        }
        if let Some(t) = self.timer.take() {
            ctx.cancel_future(t);
        }
        if self.link.addresses.is_empty() {
            // nobody to report to (a local executor without admins): saving files would only pile up
            for item in self.buffer.drain(..) {
                log::info!(
                    "no admin address: result of log {} (code {}) not reported",
                    item.log_id,
                    item.handle_code
                );
            }
            self.first_waiting = None;
            for tx in self.flushed.drain(..) {
                let _ = tx.send(());
            }
            return;
        }
        if !self.flushed.is_empty() {
            self.flush_buffer(ctx);
            return;
        }
        let take = batch_len(&self.buffer, self.tuning.batch_size);
        let batch: Vec<HandleCallbackParam> = self.buffer.drain(..take).collect();
        // a burst grows the buffer far past one batch; an idle executor should not keep that
        if self.buffer.is_empty() && self.buffer.capacity() > 4 * self.tuning.batch_size {
            self.buffer.shrink_to(self.tuning.batch_size);
        }
        self.first_waiting = (!self.buffer.is_empty()).then(Instant::now);
        self.in_flight = true;
        let link = self.link.clone();
        let client = self.client();
        let dir = self.dir.clone();
        let metrics = self.metrics.clone();
        let fut = async move {
            let body = encode_callbacks(&batch, link.protocol);
            let sent = link.post(&client, "callback", &body).await;
            let delivered = sent.is_ok();
            metrics.callback_batch(delivered);
            match sent {
                Ok(admin) => log::info!(
                    "callback batch of {} sent to {admin} (logIds {})",
                    batch.len(),
                    summarize(&batch)
                ),
                Err(e) => {
                    log::warn!(
                        "callback batch of {} failed (logIds {}): {e}",
                        batch.len(),
                        summarize(&batch)
                    );
                    match save_batch(&dir, &batch).await {
                        Ok(path) => {
                            log::warn!("callback batch saved to {} for retry", path.display())
                        }
                        Err(e) => log::error!(
                            "callback batch could not be saved ({e}); results: {}",
                            encode_callbacks(&batch, AdminProtocol::V35)
                        ),
                    }
                }
            }
            delivered
        };
        ctx.spawn(fut.into_actor(self).map(|delivered, act, ctx| {
            act.in_flight = false;
            act.after_post(delivered, ctx);
            if act.buffer.len() >= act.tuning.batch_size || !act.flushed.is_empty() {
                act.send_now(ctx);
            } else if !act.buffer.is_empty() {
                act.schedule(ctx);
            }
        }));
    }

    /// At shutdown: the whole buffer is saved as one batch first, then every saved batch is
    /// sent, and the flushes resolve when that ends. Posting batch after batch, each waiting out
    /// a hung admin's timeout, kept results in memory past the shutdown's wait, and lost them.
    fn flush_buffer(&mut self, ctx: &mut Context<Self>) {
        let rest: Vec<HandleCallbackParam> = self.buffer.drain(..).collect();
        self.first_waiting = None;
        self.in_flight = true;
        let (link, client) = (self.link.clone(), self.client());
        let (dir, metrics) = (self.dir.clone(), self.metrics.clone());
        let fut = async move {
            match save_batch(&dir, &rest).await {
                Ok(path) => log::info!(
                    "{} result(s) saved to {} at shutdown, to be sent now or at the next start",
                    rest.len(),
                    path.display()
                ),
                Err(e) => {
                    log::error!("results not saved at shutdown ({e}): sending them as they are");
                    let body = encode_callbacks(&rest, link.protocol);
                    let sent = link.post(&client, "callback", &body).await;
                    metrics.callback_batch(sent.is_ok());
                    if let Err(e) = sent {
                        log::error!(
                            "results lost at shutdown ({e}): {}",
                            encode_callbacks(&rest, AdminProtocol::V35)
                        );
                    }
                }
            }
            retry_files(&link, &client, &dir, &metrics).await
        };
        ctx.spawn(fut.into_actor(self).map(|all_sent, act, ctx| {
            act.in_flight = false;
            act.saved = !all_sent;
            if act.buffer.is_empty() {
                for tx in act.flushed.drain(..) {
                    let _ = tx.send(());
                }
            } else {
                // results that came meanwhile
                act.send_now(ctx);
            }
        }));
    }

    /// An accepted post means an admin answers again: the saved batches go now. A failed one
    /// saved its batch, to be tried again soon.
    fn after_post(&mut self, delivered: bool, ctx: &mut Context<Self>) {
        match delivered {
            true if self.saved => self.retry_pending(ctx),
            true => self.retry_after = FIRST_RETRY,
            false => {
                self.saved = true;
                self.retry_soon(ctx);
            }
        }
    }

    /// Tries the saved batches again after the current wait, which then doubles (bounded).
    fn retry_soon(&mut self, ctx: &mut Context<Self>) {
        if self.retry_timer.is_some() {
            return;
        }
        let wait = self.retry_after;
        self.retry_after = (wait * 2).min(self.tuning.retry_interval);
        self.retry_timer = Some(ctx.run_later(wait, |act, ctx| {
            act.retry_timer = None;
            act.retry_pending(ctx);
        }));
    }

    fn retry_pending(&mut self, ctx: &mut Context<Self>) {
        if self.retrying {
            return;
        }
        if let Some(timer) = self.retry_timer.take() {
            ctx.cancel_future(timer);
        }
        self.retrying = true;
        let link = self.link.clone();
        let client = self.client();
        let dir = self.dir.clone();
        let metrics = self.metrics.clone();
        let fut = async move { retry_files(&link, &client, &dir, &metrics).await };
        ctx.spawn(fut.into_actor(self).map(|all_sent, act, ctx| {
            act.retrying = false;
            if all_sent {
                act.saved = false;
                act.retry_after = FIRST_RETRY;
            } else {
                act.retry_soon(ctx);
            }
        }));
    }
}

impl Actor for ResultSender {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // every finished run lands here; none may be refused for capacity
        ctx.set_mailbox_capacity(crate::actors::UNBOUNDED_MAILBOX);
        self.retry_pending(ctx);
    }
}

/// Restarted by its supervisor if it ever stops; what was in flight is re-sent from the buffer or files.
impl Supervised for ResultSender {
    fn restarting(&mut self, _: &mut Self::Context) {
        log::warn!("result sender restarting");
        self.in_flight = false;
        self.retrying = false;
        self.timer = None;
        self.retry_timer = None;
        self.saved = true;
        self.client = None;
    }
}

impl Handler<PushCallback> for ResultSender {
    type Result = ();

    fn handle(&mut self, PushCallback(item): PushCallback, ctx: &mut Self::Context) {
        if self.buffer.is_empty() {
            self.first_waiting = Some(Instant::now());
        }
        self.buffer.push(item);
        if !self.in_flight {
            self.schedule(ctx);
        }
    }
}

impl Handler<Flush> for ResultSender {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: Flush, ctx: &mut Self::Context) -> Self::Result {
        let (tx, rx) = oneshot::channel();
        self.flushed.push(tx);
        if !self.in_flight {
            self.send_now(ctx);
        }
        Box::pin(async move {
            let _ = rx.await;
        })
    }
}

fn summarize(batch: &[HandleCallbackParam]) -> String {
    let ids: Vec<String> = batch
        .iter()
        .take(10)
        .map(|i| i.log_id.to_string())
        .collect();
    if batch.len() > 10 {
        format!("{},… ", ids.join(","))
    } else {
        ids.join(",")
    }
}

/// Writes a batch atomically (temp file + rename) so a crash never leaves a half file to resend.
async fn save_batch(dir: &Path, batch: &[HandleCallbackParam]) -> std::io::Result<PathBuf> {
    tokio::fs::create_dir_all(dir).await?;
    let name = format!(
        "callback-{:013}-{}.json",
        now_ms(),
        uuid::Uuid::new_v4().simple()
    );
    let tmp = dir.join(format!(".{name}.tmp"));
    let path = dir.join(name);
    let body = encode_callbacks(batch, AdminProtocol::V35)
        .get("callbackList")
        .cloned()
        .unwrap_or_default()
        .to_string();
    tokio::fs::write(&tmp, body).await?;
    let file = tokio::fs::File::open(&tmp).await?;
    file.sync_all().await?;
    tokio::fs::rename(&tmp, &path).await?;
    Ok(path)
}

/// Sends each saved batch, oldest first; a file is deleted only after an admin accepted it.
/// Returns whether none is left to send.
async fn retry_files(
    link: &AdminLink,
    client: &awc::Client,
    dir: &Path,
    metrics: &ExecutorMetrics,
) -> bool {
    let mut files = match tokio::fs::read_dir(dir).await {
        Ok(mut rd) => {
            let mut v = Vec::new();
            while let Ok(Some(entry)) = rd.next_entry().await {
                let name = entry.file_name().to_string_lossy().to_string();
                if !name.starts_with('.') && name.ends_with(".json") {
                    v.push(entry.path());
                }
            }
            v
        }
        // no folder yet: nothing was ever saved
        Err(_) => return true,
    };
    let mut all_sent = true;
    files.sort();
    for path in files {
        let bytes = match tokio::fs::read(&path).await {
            Ok(b) => b,
            Err(e) => {
                log::warn!("cannot read pending callbacks {}: {e}", path.display());
                all_sent = false;
                continue;
            }
        };
        let batch = match decode_callbacks(&bytes) {
            Ok(b) => b,
            Err(e) => {
                let bad = path.with_extension("json.bad");
                log::error!(
                    "pending callbacks {} are unreadable ({e}); moved to {}",
                    path.display(),
                    bad.display()
                );
                let _ = tokio::fs::rename(&path, &bad).await;
                continue;
            }
        };
        if batch.is_empty() {
            let _ = tokio::fs::remove_file(&path).await;
            continue;
        }
        let body = encode_callbacks(&batch, link.protocol);
        let sent = link.post(client, "callback", &body).await;
        metrics.callback_batch(sent.is_ok());
        match sent {
            Ok(admin) => {
                log::info!(
                    "pending callback batch {} ({} results) sent to {admin}",
                    path.display(),
                    batch.len()
                );
                if let Err(e) = tokio::fs::remove_file(&path).await {
                    log::error!(
                        "accepted callbacks {} could not be deleted and may be resent: {e}",
                        path.display()
                    );
                }
            }
            Err(e) => {
                log::warn!(
                    "pending callback batch {} still not accepted: {e}",
                    path.display()
                );
                // the admins are unreachable; the next round tries the rest
                return false;
            }
        }
    }
    all_sent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: i64, msg_bytes: usize) -> HandleCallbackParam {
        HandleCallbackParam {
            log_id: id,
            log_date_time: 0,
            handle_code: 200,
            handle_msg: Some("x".repeat(msg_bytes)),
        }
    }

    #[test]
    fn batches_stop_at_their_count_and_their_bytes() {
        let small: Vec<_> = (0..250).map(|i| result(i, 10)).collect();
        assert_eq!(batch_len(&small, 100), 100);
        assert_eq!(batch_len(&small[..7], 100), 7);
        let big: Vec<_> = (0..5).map(|i| result(i, BATCH_MESSAGE_BYTES / 2)).collect();
        assert_eq!(batch_len(&big, 100), 2);
        // a result larger than the bound still goes, alone
        let huge = vec![result(1, BATCH_MESSAGE_BYTES * 2), result(2, 1)];
        assert_eq!(batch_len(&huge, 100), 1);
        assert_eq!(batch_len(&[], 100), 0);
    }
}
