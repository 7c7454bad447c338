//! What the workflow tests add to the kit: an executor whose handlers record what they ran (the
//! executors' own record of "ran once"), jobs for them, workflows, triggers, and waits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobwheel::clock::now_ms;
use jobwheel::executor::{Executor, ExecutorServer, JobContext, JobResult};
use serde_json::{json, Value};

use crate::kit::{expect_within, TestApp};

/// How long a workflow of quick nodes may take to end in a test.
pub const RUN_WAIT: Duration = Duration::from_secs(30);

/// One run a handler made.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The handler (a node's job).
    pub handler: String,
    /// Its run row.
    pub log_id: i64,
    /// The parameter it got.
    pub param: String,
    /// The workflow context it got.
    pub context: Option<Value>,
    /// When it started and ended, epoch ms (0 while running).
    pub started: i64,
    pub ended: i64,
}

/// Notes the end of run `.1` when dropped (the handler returned, or was stopped).
struct Ended(Arc<Mutex<Vec<Ran>>>, usize);

impl Drop for Ended {
    fn drop(&mut self) {
        if let Ok(mut runs) = self.0.lock() {
            runs[self.1].ended = now_ms();
        }
    }
}

/// What a handler does when it runs.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Its result message on success (a JSON object is the node's output).
    pub output: Option<String>,
    /// Fail instead, with this message.
    pub fail: Option<String>,
    /// Run this long first (a kill or cancel ends it sooner).
    pub sleep_ms: u64,
}

/// A jobwheel executor of app `app` whose handlers record each run and follow their [`Plan`].
pub struct Worker {
    runs: Arc<Mutex<Vec<Ran>>>,
    plans: Arc<Mutex<HashMap<String, Plan>>>,
    server: Option<ExecutorServer>,
    _logs: tempfile::TempDir,
}

impl Worker {
    /// Starts an executor of `app` reporting to `admin`, with one handler per name.
    pub async fn start(admin: &TestApp, app: &str, handlers: &[&str]) -> Worker {
        Self::start_for(&[admin.base.as_str()], &admin.token, app, handlers).await
    }

    /// Starts an executor of `app` reporting to `admins` with `token`.
    pub async fn start_for(admins: &[&str], token: &str, app: &str, handlers: &[&str]) -> Worker {
        let runs: Arc<Mutex<Vec<Ran>>> = Arc::default();
        let plans: Arc<Mutex<HashMap<String, Plan>>> = Arc::default();
        let logs = tempfile::tempdir().expect("a folder for run logs");
        let mut builder = Executor::builder()
            .admin_addresses(admins.iter().map(|a| a.to_string()))
            .app_name(app)
            .access_token(token)
            .ip("127.0.0.1")
            .port(0)
            .log_path(logs.path())
            .callback_batching(100, Duration::from_millis(2))
            .callback_retry_interval(Duration::from_secs(2));
        for name in handlers {
            let (runs, plans, name) = (runs.clone(), plans.clone(), name.to_string());
            builder = builder.handler(name.clone(), move |ctx: JobContext| {
                let (runs, plans, name) = (runs.clone(), plans.clone(), name.clone());
                async move {
                    let index = {
                        let mut runs = runs.lock().unwrap();
                        runs.push(Ran {
                            handler: name.clone(),
                            log_id: ctx.log_id(),
                            param: ctx.param().to_string(),
                            context: ctx.workflow_context(),
                            started: now_ms(),
                            ended: 0,
                        });
                        runs.len() - 1
                    };
                    // a killed run's future is dropped: the guard notes its end either way
                    let _ended = Ended(runs.clone(), index);
                    let plan = plans
                        .lock()
                        .unwrap()
                        .get(&name)
                        .cloned()
                        .unwrap_or_default();
                    let mut cancelled = false;
                    if plan.sleep_ms > 0 {
                        tokio::select! {
                            _ = actix_rt::time::sleep(Duration::from_millis(plan.sleep_ms)) => {}
                            _ = ctx.cancelled() => cancelled = true,
                        }
                    }
                    match (cancelled, plan.fail, plan.output) {
                        (true, _, _) => JobResult::fail("cancelled"),
                        (false, Some(why), _) => JobResult::fail(why),
                        (false, None, Some(out)) => JobResult::success_with(out),
                        (false, None, None) => JobResult::success(),
                    }
                }
            });
        }
        let executor = builder.build().expect("executor settings");
        let server = executor.serve().await.expect("executor serves");
        Worker {
            runs,
            plans,
            server: Some(server),
            _logs: logs,
        }
    }

    /// Sets what `handler` does from now on.
    pub fn plan(&self, handler: &str, plan: Plan) {
        self.plans.lock().unwrap().insert(handler.to_string(), plan);
    }

    /// Every run so far.
    pub fn runs(&self) -> Vec<Ran> {
        self.runs.lock().unwrap().clone()
    }

    /// The runs of `handler` so far.
    pub fn runs_of(&self, handler: &str) -> Vec<Ran> {
        self.runs()
            .into_iter()
            .filter(|r| r.handler == handler)
            .collect()
    }

    /// Stops the executor's server.
    pub async fn stop(mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await;
        }
    }
}

/// An automatic group of app `app`, written straight to the database.
pub async fn db_group(store: &jobwheel::store::Store, app: &str) -> i32 {
    store
        .insert_group(&jobwheel::model::JobGroup {
            id: 0,
            app_name: app.to_string(),
            title: app.to_string(),
            address_type: jobwheel::model::AddressType::Auto,
            address_list: vec![],
            access_token: None,
            update_time: now_ms(),
        })
        .await
        .expect("insert group")
}

/// A group of app `app` and one job per handler (schedule NONE, route FIRST); the group's id and
/// the jobs' ids by handler.
pub async fn group_with_jobs(
    admin: &TestApp,
    app: &str,
    handlers: &[&str],
) -> (i64, HashMap<String, i64>) {
    let group = admin.group(app).await;
    let mut jobs = HashMap::new();
    for h in handlers {
        let res = admin
            .api
            .create_job(json!({
                "jobGroup": group,
                "jobDesc": format!("node job {h}"),
                "scheduleType": "NONE",
                "executorHandler": h,
                "executorParam": format!("default-{h}"),
            }))
            .await;
        assert_eq!(res.status, 201, "create job {h}: {}", res.body);
        jobs.insert(h.to_string(), res.id());
    }
    (group, jobs)
}

/// A JOB node of `key` running `jobs[key]`.
pub fn job_node(key: &str, jobs: &HashMap<String, i64>) -> Value {
    json!({"key": key, "kind": "JOB", "jobId": jobs[key]})
}

/// JOB nodes of `keys`.
pub fn nodes_of(keys: &[&str], jobs: &HashMap<String, i64>) -> Value {
    Value::Array(keys.iter().map(|k| job_node(k, jobs)).collect())
}

/// An edge.
pub fn edge(from: &str, to: &str, when: &str) -> Value {
    json!({"from": from, "to": to, "when": when})
}

/// Creates a workflow through the API; its id.
pub async fn create_workflow(admin: &TestApp, body: Value) -> i64 {
    let res = admin
        .api
        .request("POST", "/api/v1/workflows", Some(body))
        .await;
    assert_eq!(res.status, 201, "create workflow: {}", res.body);
    res.id()
}

/// The diamond: a → b, a → c, b → d, c → d, every node a job of its own handler.
pub fn diamond(group: i64, jobs: &HashMap<String, i64>) -> Value {
    json!({
        "name": "diamond",
        "jobGroup": group,
        "nodes": nodes_of(&["a", "b", "c", "d"], jobs),
        "edges": [edge("a", "b", "SUCCESS"), edge("a", "c", "SUCCESS"), edge("b", "d", "SUCCESS"), edge("c", "d", "SUCCESS")],
    })
}

/// Triggers workflow `id` with `params`; the new run's id.
pub async fn trigger(admin: &TestApp, id: i64, params: &str) -> i64 {
    let res = admin
        .api
        .request(
            "POST",
            &format!("/api/v1/workflows/{id}/trigger"),
            Some(json!({"params": params})),
        )
        .await;
    assert_eq!(res.status, 200, "trigger workflow {id}: {}", res.body);
    res.body["runId"].as_i64().expect("a run id")
}

/// The run as `GET /workflow-runs/{id}` answers.
pub async fn run_of(admin: &TestApp, run: i64) -> Value {
    let res = admin
        .api
        .request("GET", &format!("/api/v1/workflow-runs/{run}"), None)
        .await;
    assert_eq!(res.status, 200, "get run {run}: {}", res.body);
    res.body
}

/// Waits until run `run` has ended; the run.
pub async fn wait_ended(admin: &TestApp, run: i64) -> Value {
    expect_within(&format!("workflow run {run} to end"), RUN_WAIT, || async {
        let r = run_of(admin, run).await;
        let open = matches!(r["state"].as_str(), Some("RUNNING" | "QUEUED"));
        (!open).then_some(r)
    })
    .await
}

/// Waits until node `key` of run `run` is in `state`; the run.
pub async fn wait_node(admin: &TestApp, run: i64, key: &str, state: &str) -> Value {
    expect_within(
        &format!("node {key} of run {run} to be {state}"),
        RUN_WAIT,
        || async {
            let r = run_of(admin, run).await;
            (node(&r, key)["state"] == state).then_some(r)
        },
    )
    .await
}

/// Node `key` of a run.
pub fn node<'a>(run: &'a Value, key: &str) -> &'a Value {
    run["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["key"] == key))
        .unwrap_or_else(|| panic!("run has no node {key}: {run}"))
}

/// Every node's state, by key.
pub fn states(run: &Value) -> HashMap<String, String> {
    run["nodes"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .map(|n| {
                    (
                        n["key"].as_str().unwrap_or_default().to_string(),
                        n["state"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}
