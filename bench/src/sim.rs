//! Lightweight stand-ins speaking the real protocol over HTTP on 127.0.0.1: a simulated
//! executor (answers `/run` at once, records receipt times, posts results in batches) and a fake
//! admin (records registrations and callbacks of a real executor).

use std::borrow::Cow;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpResponse, HttpServer};
use jobwheel::clock::now_us;
use jobwheel::protocol::{decode_callbacks, TriggerParam, ACCESS_TOKEN_HEADER};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::procs::BENCH_TOKEN;
use super::wire_server::{Answer, WireServer};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One `/run` the simulated executor received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    /// The job.
    pub job_id: i32,
    /// The admin's log id.
    pub log_id: i64,
    /// Arrival, epoch µs.
    pub at_us: i64,
    /// The request's `logDateTime`, epoch ms (a fire's scheduled second where the admin sends
    /// that, as ratch-job does).
    pub log_date_time: i64,
}

#[derive(Default)]
struct SimShared {
    receipts: Mutex<Vec<Receipt>>,
    /// Results waiting for the flusher: (log id, log date time).
    pending: Mutex<Vec<(i64, i64)>>,
    bad_requests: AtomicU64,
    /// Whether results are kept for the flusher to post (not when there is no admin).
    reports: bool,
    callbacks_posted: AtomicU64,
    callback_failures: AtomicU64,
    /// Callback posts accepted (each carries up to a batch of results).
    posts: AtomicU64,
}

/// A simulated executor fleet behind one lean HTTP server ([`WireServer`]): results are flushed to the admin every
/// 20 ms in batches, with several posts in flight like several executors.
pub struct SimExecutor {
    shared: Arc<SimShared>,
    server: WireServer,
    /// The address it registers (with the trailing slash).
    pub address: String,
    admins: Rc<Vec<String>>,
    flusher: Option<actix_web::rt::task::JoinHandle<()>>,
}

/// Where and how a simulated executor reports results.
#[derive(Debug, Clone)]
pub struct Reporting {
    /// Admin base URLs, tried in order; an admin that fails a post is skipped for the retry.
    pub admins: Vec<String>,
    /// Most results in one callback post.
    pub batch: usize,
}

impl SimExecutor {
    /// Starts on 127.0.0.1 with `workers` threads, reporting results to `admin`.
    pub fn start(admin: &str, workers: usize) -> Result<SimExecutor, String> {
        let reporting = Reporting {
            admins: vec![admin.to_string()],
            batch: CALLBACK_BATCH,
        };
        Self::start_with(Some(reporting), 0, workers)
    }

    /// Starts on 127.0.0.1:`port` (0: any free port) with `workers` threads, reporting results
    /// as `reporting` says.
    pub fn start_reporting(
        reporting: Reporting,
        port: u16,
        workers: usize,
    ) -> Result<SimExecutor, String> {
        Self::start_with(Some(reporting), port, workers)
    }

    /// Starts on 127.0.0.1 with `workers` threads, answering `/run` without reporting results:
    /// the calls alone, with no admin behind them.
    pub fn start_unreported(workers: usize) -> Result<SimExecutor, String> {
        Self::start_with(None, 0, workers)
    }

    fn start_with(
        reporting: Option<Reporting>,
        port: u16,
        workers: usize,
    ) -> Result<SimExecutor, String> {
        let shared = Arc::new(SimShared {
            reports: reporting.is_some(),
            ..SimShared::default()
        });
        let answers = shared.clone();
        let server = WireServer::start_on(
            port,
            workers,
            Arc::new(move |path: &str, body: &[u8]| match path {
                "/run" => sim_run(&answers, body),
                "/beat" | "/idleBeat" | "/kill" => (200, Cow::Borrowed(SUCCESS)),
                "/log" => (200, Cow::Borrowed(EMPTY_LOG)),
                RECEIPTS_PATH => (200, Cow::Owned(receipts_json(&answers))),
                _ => (
                    404,
                    Cow::Borrowed(&br#"{"code":404,"msg":"not found"}"#[..]),
                ),
            }),
        )
        .map_err(|e| format!("cannot start the simulated executor: {e}"))?;
        let port = server.port;
        let admins: Vec<String> = reporting
            .as_ref()
            .map(|r| {
                r.admins
                    .iter()
                    .map(|a| a.trim_end_matches('/').to_string())
                    .collect()
            })
            .unwrap_or_default();
        let admins = Rc::new(admins);
        let flusher = reporting.map(|r| {
            actix_web::rt::spawn(flush_loop(shared.clone(), admins.clone(), r.batch.max(1)))
        });
        Ok(SimExecutor {
            shared,
            server,
            address: format!("http://127.0.0.1:{port}/"),
            admins,
            flusher,
        })
    }

    /// Registers under `app` (`/api/registry`) with the first of its admins that accepts.
    pub async fn register(&self, app: &str) -> Result<(), String> {
        let body =
            json!({"registryGroup": "EXECUTOR", "registryKey": app, "registryValue": self.address});
        let client = awc::Client::default();
        let mut last = "no admin to register with".to_string();
        for admin in self.admins.iter() {
            match post_ok(&client, &format!("{admin}/api/registry"), &body).await {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Every `/run` received so far.
    pub fn receipts(&self) -> Vec<Receipt> {
        lock(&self.shared.receipts).clone()
    }

    /// How many `/run` bodies could not be read.
    pub fn bad_requests(&self) -> u64 {
        self.shared.bad_requests.load(Ordering::Relaxed)
    }

    /// Results posted and accepted, and posts that failed for good.
    pub fn callbacks(&self) -> (u64, u64) {
        (
            self.shared.callbacks_posted.load(Ordering::Relaxed),
            self.shared.callback_failures.load(Ordering::Relaxed),
        )
    }

    /// Stops the server and the flusher.
    pub async fn stop(self) {
        if let Some(flusher) = self.flusher {
            flusher.abort();
        }
        self.server.stop();
    }
}

/// The answer to every accepted call.
const SUCCESS: &[u8] = br#"{"code":200,"msg":"Success"}"#;

/// The answer to `/log`: an empty, finished log.
const EMPTY_LOG: &[u8] =
    br#"{"code":200,"msg":null,"content":{"fromLineNum":1,"toLineNum":0,"logContent":"","isEnd":true}}"#;

/// The bench's own path (not the executor protocol's): every receipt so far and the result
/// posts' counters, as JSON (see [`receipts_json`]).
pub const RECEIPTS_PATH: &str = "/bench/receipts";

/// `{"receipts": [[job id, log id, epoch µs, logDateTime ms], ...], "bad": n, "posted": n, "failed": n}`.
fn receipts_json(shared: &SimShared) -> Vec<u8> {
    let receipts: Vec<Value> = lock(&shared.receipts)
        .iter()
        .map(|r| json!([r.job_id, r.log_id, r.at_us, r.log_date_time]))
        .collect();
    json!({
        "receipts": receipts,
        "bad": shared.bad_requests.load(Ordering::Relaxed),
        "posted": shared.callbacks_posted.load(Ordering::Relaxed),
        "failed": shared.callback_failures.load(Ordering::Relaxed),
        "posts": shared.posts.load(Ordering::Relaxed),
    })
    .to_string()
    .into_bytes()
}

/// What one simulated executor process reports through [`RECEIPTS_PATH`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceiptReport {
    /// Every `/run` it received.
    pub receipts: Vec<Receipt>,
    /// `/run` bodies it could not read.
    pub bad_requests: u64,
    /// Results posted and accepted.
    pub posted: u64,
    /// Results whose post failed for good.
    pub failed: u64,
    /// Callback posts accepted.
    pub posts: u64,
}

/// Parses a [`RECEIPTS_PATH`] answer.
pub fn parse_receipts(body: &[u8]) -> Result<ReceiptReport, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("unreadable receipts: {e}"))?;
    let items = v["receipts"]
        .as_array()
        .ok_or("receipts: no \"receipts\" array")?;
    let mut receipts = Vec::with_capacity(items.len());
    for item in items {
        let field = |i: usize| item.get(i).and_then(Value::as_i64);
        let (Some(job), Some(log_id), Some(at_us), Some(log_date_time)) =
            (field(0), field(1), field(2), field(3))
        else {
            return Err(format!("receipts: unreadable item {item}"));
        };
        let job_id = i32::try_from(job).map_err(|_| format!("receipts: job id {job}"))?;
        receipts.push(Receipt {
            job_id,
            log_id,
            at_us,
            log_date_time,
        });
    }
    let count = |key: &str| v[key].as_u64().unwrap_or(0);
    Ok(ReceiptReport {
        receipts,
        bad_requests: count("bad"),
        posted: count("posted"),
        failed: count("failed"),
        posts: count("posts"),
    })
}

fn sim_run(shared: &SimShared, body: &[u8]) -> Answer {
    let at_us = now_us();
    // the whole parameter is decoded, so a request the protocol does not allow is counted
    let param: TriggerParam = match serde_json::from_slice(body) {
        Ok(p) => p,
        Err(e) => {
            shared.bad_requests.fetch_add(1, Ordering::Relaxed);
            let answer = json!({"code": 500, "msg": format!("request error:{e}")});
            return (200, Cow::Owned(answer.to_string().into_bytes()));
        }
    };
    lock(&shared.receipts).push(Receipt {
        job_id: param.job_id,
        log_id: param.log_id,
        at_us,
        log_date_time: param.log_date_time,
    });
    if shared.reports {
        lock(&shared.pending).push((param.log_id, param.log_date_time));
    }
    (200, Cow::Borrowed(SUCCESS))
}

async fn ok() -> HttpResponse {
    HttpResponse::Ok().json(json!({"code": 200, "msg": "Success"}))
}

/// Most results in one callback post.
const CALLBACK_BATCH: usize = 500;
/// Callback posts in flight at once, as a fleet of this many executors would have.
const CALLBACK_POSTS_IN_FLIGHT: usize = 8;

/// Every 20 ms, posts the results received since in chunks of `batch` to the first of `admins`
/// that takes them, in order, as real executors (XXL-JOB's and jobwheel's) do; a failed post is
/// retried on the next admin.
async fn flush_loop(shared: Arc<SimShared>, admins: Rc<Vec<String>>, batch: usize) {
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish();
    let urls: Rc<Vec<String>> =
        Rc::new(admins.iter().map(|a| format!("{a}/api/callback")).collect());
    if urls.is_empty() {
        return;
    }
    let slots = Arc::new(Semaphore::new(CALLBACK_POSTS_IN_FLIGHT));
    loop {
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
        let pending = std::mem::take(&mut *lock(&shared.pending));
        for chunk in pending.chunks(batch) {
            let items: Vec<Value> = chunk
                .iter()
                .map(|(log_id, date)| json!({"logId": log_id, "logDateTim": date, "handleCode": 200}))
                .collect();
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return;
            };
            let (client, urls, shared) = (client.clone(), urls.clone(), shared.clone());
            actix_web::rt::spawn(async move {
                let body = Value::Array(items);
                let n = body.as_array().map_or(0, Vec::len) as u64;
                let mut sent = false;
                for attempt in 0..5 {
                    let url = &urls[attempt % urls.len()];
                    if post_ok(&client, url, &body).await.is_ok() {
                        shared.posts.fetch_add(1, Ordering::Relaxed);
                        sent = true;
                        break;
                    }
                    actix_web::rt::time::sleep(Duration::from_millis(100 << attempt)).await;
                }
                let counter = if sent {
                    &shared.callbacks_posted
                } else {
                    &shared.callback_failures
                };
                counter.fetch_add(n, Ordering::Relaxed);
                drop(permit);
            });
        }
    }
}

/// POSTs JSON and expects `{"code":200}`.
pub async fn post_ok(client: &awc::Client, url: &str, body: &Value) -> Result<(), String> {
    let mut res = client
        .post(url)
        .insert_header((ACCESS_TOKEN_HEADER, BENCH_TOKEN))
        .send_json(body)
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let answer: Value = res
        .json()
        .limit(1024 * 1024)
        .await
        .map_err(|e| format!("POST {url}: unreadable answer: {e}"))?;
    if answer["code"] == 200 {
        Ok(())
    } else {
        Err(format!("POST {url} refused: {answer}"))
    }
}

#[derive(Default)]
struct FakeAdminShared {
    registrations: Mutex<Vec<(Instant, String)>>,
    callback_logs: Mutex<HashSet<i64>>,
    callback_items: AtomicU64,
}

/// A fake admin for real executors: accepts registrations and callbacks, records them.
pub struct FakeAdmin {
    shared: Arc<FakeAdminShared>,
    handle: ServerHandle,
    /// Its base URL.
    pub url: String,
}

impl FakeAdmin {
    /// Starts on 127.0.0.1 (one worker).
    pub fn start() -> Result<FakeAdmin, String> {
        let shared = Arc::new(FakeAdminShared::default());
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(16 * 1024 * 1024))
                .route("/api/registry", web::post().to(fake_registry))
                .route("/api/registryRemove", web::post().to(ok))
                .route("/api/callback", web::post().to(fake_callback))
        })
        .workers(1)
        .disable_signals()
        .bind(("127.0.0.1", 0))
        .map_err(|e| format!("cannot start the fake admin: {e}"))?;
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Ok(FakeAdmin {
            shared,
            handle,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    /// Registrations so far: arrival and registered address.
    pub fn registrations(&self) -> Vec<(Instant, String)> {
        lock(&self.shared.registrations).clone()
    }

    /// Forgets the registrations seen so far.
    pub fn clear_registrations(&self) {
        lock(&self.shared.registrations).clear();
    }

    /// Distinct log ids with a result, and result items received (duplicates included).
    pub fn callbacks(&self) -> (usize, u64) {
        (
            lock(&self.shared.callback_logs).len(),
            self.shared.callback_items.load(Ordering::Relaxed),
        )
    }

    /// Stops the server.
    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

async fn fake_registry(shared: web::Data<FakeAdminShared>, body: web::Bytes) -> HttpResponse {
    let at = Instant::now();
    let value = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["registryValue"].as_str().map(str::to_string))
        .unwrap_or_default();
    lock(&shared.registrations).push((at, value));
    HttpResponse::Ok().json(json!({"code": 200, "msg": null}))
}

async fn fake_callback(shared: web::Data<FakeAdminShared>, body: web::Bytes) -> HttpResponse {
    match decode_callbacks(&body) {
        Ok(items) => {
            shared
                .callback_items
                .fetch_add(items.len() as u64, Ordering::Relaxed);
            lock(&shared.callback_logs).extend(items.iter().map(|i| i.log_id));
            HttpResponse::Ok().json(json!({"code": 200, "msg": null}))
        }
        Err(e) => HttpResponse::Ok().json(json!({"code": 500, "msg": e.to_string()})),
    }
}

/// A `/run` body for a BEAN job.
pub fn trigger_body(job_id: i32, log_id: i64, handler: &str) -> Value {
    json!({
        "jobId": job_id,
        "executorHandler": handler,
        "executorParams": "",
        "executorBlockStrategy": "SERIAL_EXECUTION",
        "executorTimeout": 0,
        "logId": log_id,
        "logDateTime": now_us() / 1_000,
        "glueType": "BEAN",
        "glueSource": "",
        "glueUpdatetime": 0,
        "broadcastIndex": 0,
        "broadcastTotal": 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_round_trip_and_bad_ones_are_refused() {
        let shared = SimShared::default();
        lock(&shared.receipts).push(Receipt {
            job_id: 7,
            log_id: 42,
            at_us: 1_700_000_000_123_456,
            log_date_time: 1_700_000_000_000,
        });
        shared.callbacks_posted.store(3, Ordering::Relaxed);
        shared.posts.store(1, Ordering::Relaxed);
        let report = parse_receipts(&receipts_json(&shared)).unwrap();
        assert_eq!(
            report,
            ReceiptReport {
                receipts: vec![Receipt {
                    job_id: 7,
                    log_id: 42,
                    at_us: 1_700_000_000_123_456,
                    log_date_time: 1_700_000_000_000
                }],
                bad_requests: 0,
                posted: 3,
                failed: 0,
                posts: 1
            }
        );
        assert!(parse_receipts(b"not json").is_err());
        assert!(parse_receipts(br#"{"receipts":[[1,2,3]]}"#).is_err());
        assert!(parse_receipts(br#"{"receipts":[[99999999999,2,3,4]]}"#).is_err());
        assert!(parse_receipts(br#"{"bad":1}"#).is_err());
    }
}
