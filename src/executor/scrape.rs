//! `GET /metrics` of an executor: the gauges read from its state, then the text format.

use std::path::Path;

use actix_web::{http::header, HttpRequest, HttpResponse};

use super::http::{may_scrape, ServiceState};
use crate::actors::job_table::{GetCensus, GetJobQueues};
use crate::metrics::{ExecutorSample, CONTENT_TYPE};

/// Reads the workers, the queued triggers and the saved result batches into the gauges, then
/// renders every metric.
pub(crate) async fn render(state: &ServiceState) -> String {
    let census = state.jobs.send(GetCensus).await.ok();
    let dir = state.callback_dir.clone();
    // a directory listing is file-system work: off the HTTP worker's thread
    let pending = actix_web::web::block(move || saved_batches(&dir))
        .await
        .unwrap_or_default();
    state.metrics.set_sample(ExecutorSample {
        workers: census.map(|c| c.live).unwrap_or_default(),
        queued: census.map(|c| c.queued).unwrap_or_default(),
        waiting_for_slot: census.map(|c| c.waiting_for_slot).unwrap_or_default(),
        in_slots: census.map(|c| c.in_slots).unwrap_or_default(),
        max_concurrent_runs: census.map(|c| c.max_concurrent_runs).unwrap_or_default(),
        pending_callback_files: pending,
    });
    let queues = state.jobs.send(GetJobQueues).await.unwrap_or_default();
    state.metrics.set_job_queues(&queues);
    state.metrics.render()
}

/// The handler: 401 without the executor's token (see [`may_scrape`]).
pub(crate) async fn metrics(req: HttpRequest, state: ServiceState) -> HttpResponse {
    if !may_scrape(&req, &state) {
        return HttpResponse::Unauthorized()
            .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
            .body("metrics need the executor's access token: Authorization: Bearer <token>\n");
    }
    HttpResponse::Ok()
        .content_type(CONTENT_TYPE)
        .body(render(&state).await)
}

/// Result batches waiting in `dir` (the names `ResultSender` saves them under).
fn saved_batches(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name.ends_with(".json")
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_saved_batches_are_counted() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(saved_batches(&dir.path().join("absent")), 0);
        for name in [
            "callback-1-a.json",
            "callback-2-b.json",
            ".callback-3-c.json.tmp",
            "x.txt",
        ] {
            std::fs::write(dir.path().join(name), "[]").expect("write");
        }
        assert_eq!(saved_batches(dir.path()), 2);
    }
}
