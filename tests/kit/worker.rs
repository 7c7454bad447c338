//! A jobwheel executor whose handlers record what they ran: the executors' own record of "ran
//! once" in the crash and cluster tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobwheel::clock::now_ms;
use jobwheel::executor::{Executor, ExecutorServer, JobContext, JobResult};
use serde_json::Value;

use crate::kit::TestApp;

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

    /// Starts an executor of `app` reporting to `admin` that registers with `labels`.
    pub async fn start_labelled(
        admin: &TestApp,
        app: &str,
        handlers: &[&str],
        labels: &[(&str, &str)],
    ) -> Worker {
        let admins = [admin.base.as_str()];
        Self::start_with(&admins, &admin.token, app, handlers, labels).await
    }

    /// Starts an executor of `app` reporting to `admins` with `token`.
    pub async fn start_for(admins: &[&str], token: &str, app: &str, handlers: &[&str]) -> Worker {
        Self::start_with(admins, token, app, handlers, &[]).await
    }

    async fn start_with(
        admins: &[&str],
        token: &str,
        app: &str,
        handlers: &[&str],
        labels: &[(&str, &str)],
    ) -> Worker {
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
            .callback_retry_interval(Duration::from_secs(2))
            .labels(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())));
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

    /// The address it registered, `http://127.0.0.1:{port}/`.
    pub fn address(&self) -> String {
        self.server
            .as_ref()
            .map(|s| s.address())
            .unwrap_or_default()
    }

    /// Stops the executor's server.
    pub async fn stop(mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await;
        }
    }
}
