//! ratch-job (the other Rust admin speaking XXL-JOB's protocol) run beside jobwheel in the
//! cluster scenario when `--ratch-job BIN` names its binary: started on free ports with its
//! data in the work folder, its jobs created through its open API, the same simulated executor
//! processes registering with it as with jobwheel.
//!
//! ratch-job keeps its state in a raft log of its own (no database to read back), so its fires
//! are measured from the receipts alone: ratch-job sends each fire's scheduled second as the
//! `/run` request's `logDateTime`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::common::Matched;
use super::db::BENCH_APP;
use super::procs::{free_port, Spawned, BENCH_TOKEN};
use super::sim::Receipt;

/// ratch-job's default namespace, where executors registering with XXL-JOB's paths land.
const NAMESPACE: &str = "xxl";

/// The handler name the simulated executors answer (any name: they run nothing).
const HANDLER: &str = "benchNoop";

/// Job creations in flight at once (each is one write to ratch-job's raft log).
const CREATES_IN_FLIGHT: usize = 32;

/// `/run` calls ratch-job keeps in flight (its default, 20, caps it below 10,000 fires a second
/// once a call takes 2 ms; raised so its own dispatch, not the cap, is measured).
const REQUESTS_IN_FLIGHT: usize = 500;

/// A running ratch-job.
pub struct RatchJob {
    /// The process.
    pub process: Spawned,
    /// Its open API's base URL.
    api: String,
    /// The folder of its raft log and snapshots.
    data_dir: PathBuf,
}

impl RatchJob {
    /// Starts `bin` on three free ports with a fresh data folder under `work`, then waits until
    /// it leads its one-node cluster (it refuses writes before).
    pub async fn start(bin: &Path, work: &Path) -> Result<RatchJob, String> {
        let port = |what: &str| free_port().map_err(|e| format!("no free port for {what}: {e}"));
        let (api_port, console_port, raft_port) = (port("api")?, port("console")?, port("raft")?);
        let data_dir = work.join(format!("ratch-job-{api_port}"));
        std::fs::create_dir_all(&data_dir)
            .map_err(|e| format!("cannot create '{}': {e}", data_dir.display()))?;
        let env: Vec<(String, String)> = [
            ("RATCH_DATA_DIR", data_dir.display().to_string()),
            ("RATCH_HTTP_API_PORT", api_port.to_string()),
            ("RATCH_HTTP_CONSOLE_PORT", console_port.to_string()),
            ("RATCH_GRPC_CLUSTER_PORT", raft_port.to_string()),
            ("RATCH_RAFT_NODE_ID", "1".into()),
            ("RATCH_RAFT_AUTO_INIT", "true".into()),
            ("RATCH_RAFT_NODE_ADDR", format!("127.0.0.1:{raft_port}")),
            ("RATCH_XXL_DEFAULT_ACCESS_TOKEN", BENCH_TOKEN.into()),
            (
                "RATCH_TASK_REQUEST_PARALLEL",
                REQUESTS_IN_FLIGHT.to_string(),
            ),
            // its floor: the task rows it keeps per job in memory and in every snapshot
            ("RATCH_JOB_TASK_LOG_LIMIT", "20".into()),
            ("RATCH_GMT_OFFSET_HOURS", "0".into()),
            ("RUST_LOG", "warn".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // `-e /dev/null`: no stray `.env` of the folders above is read
        let args = ["-e".to_string(), "/dev/null".into()];
        let log = work.join(format!("ratch-job-{api_port}.log"));
        let mut process = Spawned::start_with_env("ratch-job", bin, &args, &env, log)?;
        let api = format!("http://127.0.0.1:{api_port}");
        wait_leader(&mut process, &api).await?;
        Ok(RatchJob {
            process,
            api,
            data_dir,
        })
    }

    /// The base URL executors register and post results to (XXL-JOB's `/xxl-job-admin`).
    pub fn admin_url(&self) -> String {
        format!("{}/xxl-job-admin", self.api)
    }

    /// Waits until `count` executors of the bench app have registered.
    pub async fn wait_registered(&mut self, count: usize) -> Result<(), String> {
        let url = format!(
            "{}/ratch/v1/app/instance/addrs?namespace={NAMESPACE}&appName={BENCH_APP}",
            self.api
        );
        let client = awc::Client::default();
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let found = get_json(&client, &url)
                .await
                .ok()
                .and_then(|v| v["data"].as_array().map(Vec::len))
                .unwrap_or(0);
            if found >= count {
                return Ok(());
            }
            self.process.check_alive()?;
            if Instant::now() > until {
                return Err(format!(
                    "{found} of {count} simulated executors registered with ratch-job within 30 s"
                ));
            }
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Creates `n` jobs firing every second, round robin over the executors, started at once
    /// (ratch-job starts a created job); their ids.
    pub async fn create_jobs(&self, n: usize) -> Result<Vec<i32>, String> {
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(30))
            .finish();
        let url = format!("{}/ratch/v1/job/create", self.api);
        let mut ids = Vec::with_capacity(n);
        let mut next = 0;
        while next < n {
            let end = (next + CREATES_IN_FLIGHT).min(n);
            let calls: Vec<_> = (next..end)
                .map(|i| {
                    let (client, url) = (client.clone(), url.clone());
                    actix_web::rt::spawn(async move { create_job(&client, &url, i).await })
                })
                .collect();
            for call in calls {
                ids.push(
                    call.await
                        .map_err(|e| format!("a job creation failed: {e}"))??,
                );
            }
            next = end;
        }
        Ok(ids)
    }

    /// Bytes of its data folder (raft log segments and snapshots), as files say.
    pub fn data_bytes(&self) -> u64 {
        folder_bytes(&self.data_dir)
    }
}

async fn wait_leader(process: &mut Spawned, api: &str) -> Result<(), String> {
    let url = format!("{api}/ratch/v1/raft/metrics");
    let client = awc::Client::default();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(v) = get_json(&client, &url).await {
            if v.to_string().contains("\"state\":\"Leader\"") {
                return Ok(());
            }
        }
        process.check_alive()?;
        if Instant::now() > until {
            return Err(format!(
                "ratch-job did not lead its cluster within 60 s; see {}",
                process.log.display()
            ));
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn get_json(client: &awc::Client, url: &str) -> Result<Value, String> {
    let mut res = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    res.json::<Value>()
        .limit(1 << 24)
        .await
        .map_err(|e| format!("GET {url}: {e}"))
}

async fn create_job(client: &awc::Client, url: &str, i: usize) -> Result<i32, String> {
    let body = json!({
        "namespace": NAMESPACE,
        "appName": BENCH_APP,
        "key": format!("bench-{i}"),
        "description": format!("bench job {i}"),
        "runMode": "BEAN",
        "handleName": HANDLER,
        "scheduleType": "CRON",
        "cronValue": "* * * * * ?",
        // jobwheel's jobs of the scenario route ROUND; ratch-job spells it ROUND_ROBIN
        "routerStrategy": "ROUND_ROBIN",
        "blockingStrategy": "SERIAL_EXECUTION",
        "timeoutSecond": 0,
        "tryTimes": 0,
        "enable": true,
    });
    let mut res = client
        .post(url)
        .send_json(&body)
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let v: Value = res
        .json()
        .limit(1 << 20)
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    created_id(&v).ok_or_else(|| format!("ratch-job refused job {i}: {v}"))
}

/// The new job's id from ratch-job's answer to a create (`{"code":200,"content":{"id":…}}`;
/// a refusal has another shape).
fn created_id(answer: &Value) -> Option<i32> {
    if answer["code"].as_i64() != Some(200) {
        return None;
    }
    answer["content"]["id"]
        .as_i64()
        .and_then(|id| i32::try_from(id).ok())
}

/// Total bytes of the files under `dir`.
pub fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => folder_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Fires from receipts alone, the scheduled second being the request's `logDateTime`.
pub fn fires_of(receipts: &[Receipt]) -> Matched {
    let (fires, late) = receipts
        .iter()
        .map(|r| {
            let second = r.log_date_time;
            (
                (r.job_id, second),
                (second, r.at_us as f64 / 1_000.0 - second as f64),
            )
        })
        .unzip();
    Matched {
        fires,
        late,
        unknown: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_answer_gives_its_id_and_a_refusal_none() {
        let ok = json!({"content": {"id": 17, "enable": true}, "code": 200, "msg": null});
        assert_eq!(created_id(&ok), Some(17));
        let refused = json!({"data": null, "success": false, "code": "SYSTEM_ERROR"});
        assert_eq!(created_id(&refused), None);
        let no_id = json!({"content": null, "code": 200});
        assert_eq!(created_id(&no_id), None);
    }

    #[test]
    fn fires_are_timed_from_their_scheduled_second() {
        let r = Receipt {
            job_id: 3,
            log_id: 9,
            at_us: 1_700_000_001_012_500,
            log_date_time: 1_700_000_001_000,
        };
        let matched = fires_of(&[r]);
        assert_eq!(matched.fires, vec![(3, 1_700_000_001_000)]);
        assert_eq!(matched.late, vec![(1_700_000_001_000, 12.5)]);
    }

    #[test]
    fn a_folder_counts_its_files_below() {
        let dir = std::env::temp_dir().join(format!("ratch-bytes-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a"), [0u8; 10]).unwrap();
        std::fs::write(dir.join("sub").join("b"), [0u8; 5]).unwrap();
        assert_eq!(folder_bytes(&dir), 15);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(folder_bytes(&dir), 0);
    }
}
