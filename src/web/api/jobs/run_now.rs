//! `POST /jobs/{id}/trigger`: one manual run now, on the executors of the job's group only.

use super::*;

/// Every address executors of `group` have (by [`address_key`]): those registered now and those
/// in its address list.
async fn group_addresses(state: &AppState, group: &JobGroup) -> ApiResult<HashSet<String>> {
    let since = now_ms() - EXECUTOR_DEAD_AFTER_MS;
    let live = state
        .store
        .find_live_registry_for(&group.app_name, since)
        .await?;
    Ok(live
        .iter()
        .map(|r| address_key(&r.registry_value))
        .chain(group.address_list.iter().map(|a| address_key(a)))
        .collect())
}

#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TriggerBody {
    pub(crate) executor_param: Option<String>,
    pub(crate) address_list: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct TriggerAnswer {
    log_ids: Vec<i64>,
    trigger_codes: Vec<i32>,
    /// Present when the job's (or its group's) instance cap kept the run from starting now:
    /// `QUEUED` (it starts when a slot frees), `SKIPPED` or `REFUSED`; the rows say the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    admission: Option<&'static str>,
    /// Why, with `admission`.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// `POST /jobs/{id}/trigger {executorParam?, addressList?}`: one manual run now; waits until
/// the log rows exist and the executors answered.
#[utoipa::path(
    post,
    path = "/jobs/{id}/trigger",
    tag = "jobs",
    summary = "Run a job once now (an empty body is allowed)",
    params(("id" = i32, Path, description = "The job's id")),
    request_body = Option<TriggerBody>,
    responses(
        (status = 200, description = "The runs made and the executors' answers", body = TriggerAnswer),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        (status = 503, description = "Shutting down", body = crate::web::api::error::ApiErrorBody)
    )
)]
pub(crate) async fn trigger(
    state: web::Data<AppState>,
    principal: Principal,
    req: HttpRequest,
    path: web::Path<i32>,
    body: LimitedBody<JSON_LIMIT>,
) -> ApiResult<HttpResponse> {
    let body: TriggerBody = optional_json(&req, &body.0)?;
    trigger_job(state, principal, path.into_inner(), body).await
}

/// One manual run of job `id` with what `body` asks (the REST call and XXL-JOB's `triggerJob`).
pub(crate) async fn trigger_job(
    state: web::Data<AppState>,
    principal: Principal,
    id: i32,
    body: TriggerBody,
) -> ApiResult<HttpResponse> {
    if let Some(param) = &body.executor_param {
        check_executor_param(param)?;
    }
    let job = load_job(&state, &principal, id).await?;
    let addresses: Option<Vec<String>> = body.address_list.map(|list| {
        list.into_iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect()
    });
    if let Some(list) = addresses.as_ref().filter(|l| !l.is_empty()) {
        for a in list {
            check_executor_address("addressList", a)?;
        }
        let group = load_group(&state, job.job_group, None).await?;
        let known = group_addresses(&state, &group).await?;
        if let Some(stranger) = list.iter().find(|a| !known.contains(&address_key(a))) {
            return Err(ApiError::field(
                "addressList",
                format!(
                    "'{stranger}' is not an executor of group '{}': a manual trigger may name only \
                     addresses registered or listed for the job's group",
                    group.app_name
                ),
            ));
        }
    }
    let mut t = Trigger::new(id, TriggerType::Manual, 0);
    t.executor_param = body.executor_param;
    t.address_list = addresses.filter(|l| !l.is_empty());
    let (t_param, t_addresses) = (t.executor_param.clone(), t.address_list.clone());
    let Some(report) = trigger_and_wait(&state.dispatcher, t).await else {
        return Err(ApiError::Unavailable(
            "the dispatcher is not running (admin shutting down?)".into(),
        ));
    };
    if report.log_ids.is_empty() {
        if state.store.get_job(id).await?.is_none() {
            return Err(ApiError::not_found(format!("job {id} does not exist")));
        }
        return Err(ApiError::Internal(format!(
            "trigger of job {id} produced no log: {}",
            report.error.unwrap_or_default()
        )));
    }
    log::info!(
        "user '{}' triggered job {id}: logs {:?}",
        principal.user.username,
        report.log_ids
    );
    audit::record(
        &state,
        &principal,
        audit::Change {
            action: "job.trigger",
            target_type: "job",
            target_id: id.into(),
            summary: job.job_desc,
            before: None,
            after: Some(serde_json::json!({
                "executorParam": t_param,
                "addressList": t_addresses,
                "logIds": report.log_ids,
            })),
        },
    )
    .await;
    let reason = report.admission.and(report.error);
    Ok(HttpResponse::Ok().json(TriggerAnswer {
        log_ids: report.log_ids,
        trigger_codes: report.codes,
        admission: report.admission.map(|a| a.as_str()),
        reason,
    }))
}
