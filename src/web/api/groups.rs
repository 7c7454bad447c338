//! `/api/v1/groups`: executor groups. Everyone sees the groups they may use; only admins
//! create, edit and delete them (as XXL-JOB's group page is admin-only).

use std::collections::BTreeMap;

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::audit::{self, Change};
use super::auth::Principal;
use super::checks::{check_instance_cap, parse_enum};
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use super::{check_executor_address, load_group};
use crate::actors::registry::RefreshGroups;
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::model::{AddressType, JobGroup, ADDRESS_LIST_MAX};
use crate::protocol::{unusable_token, REGISTRY_GROUP_EXECUTOR};
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/groups", web::get().to(list))
        .route("/groups", web::post().to(create))
        .route("/groups/{id}", web::get().to(get))
        .route("/groups/{id}", web::put().to(update))
        .route("/groups/{id}", web::delete().to(delete));
}

/// A group as the API shows it; the access token itself is never shown.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct GroupView {
    id: i32,
    app_name: String,
    title: String,
    /// `AUTO` (executors register themselves) or `MANUAL` (the typed list).
    #[schema(value_type = String)]
    address_type: AddressType,
    address_list: Vec<String>,
    access_token_set: bool,
    update_time: i64,
    /// The most runs of its jobs open at once across every admin; 0 for no cap.
    max_concurrent_instances: i32,
    /// What a fire beyond that cap does: SKIP, QUEUE, REPLACE or ALLOW.
    instance_overflow: &'static str,
}

/// Create/update body; on update, omitted fields keep their value.
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
struct GroupBody {
    app_name: Option<String>,
    title: Option<String>,
    address_type: Option<String>,
    address_list: Option<Vec<String>>,
    /// `""` removes the group's own token (the global one applies again).
    access_token: Option<String>,
    /// The most runs of the group's jobs open at once across every admin (0 to 100000; 0, the
    /// default, for no cap), claimed with each run row like a job's own cap; both hold.
    max_concurrent_instances: Option<i32>,
    /// What a fire beyond the group's cap does: `SKIP` (default), `QUEUE` (bounded by the
    /// job's `instanceQueueMax` and `instanceQueueTtlSecs`), `REPLACE` (the group's oldest open
    /// run is closed and killed) or `ALLOW`.
    instance_overflow: Option<String>,
}

/// Live executor addresses per app name (beat within 90 s), sorted.
async fn live_addresses(state: &AppState) -> ApiResult<BTreeMap<String, Vec<String>>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in state
        .store
        .find_live_registry(now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?
    {
        if r.registry_group == REGISTRY_GROUP_EXECUTOR {
            map.entry(r.registry_key)
                .or_default()
                .push(r.registry_value);
        }
    }
    for list in map.values_mut() {
        list.sort();
        list.dedup();
    }
    Ok(map)
}

fn view(group: JobGroup, live: &BTreeMap<String, Vec<String>>) -> GroupView {
    let address_list = match group.address_type {
        AddressType::Auto => live.get(&group.app_name).cloned().unwrap_or_default(),
        AddressType::Manual => group.address_list,
    };
    GroupView {
        id: group.id,
        app_name: group.app_name,
        title: group.title,
        address_type: group.address_type,
        address_list,
        access_token_set: group.access_token.as_deref().is_some_and(|t| !t.is_empty()),
        update_time: group.update_time,
        max_concurrent_instances: group.max_concurrent_instances,
        instance_overflow: group.instance_overflow.as_str(),
    }
}

/// Shortest token a group of its own may have, as strong as a short password at least (the
/// admin's generated one has 32 characters).
pub const GROUP_TOKEN_MIN: usize = 16;

/// Applies a body onto `group` (a new one or the stored one) and validates the result.
fn apply(group: &mut JobGroup, body: GroupBody) -> ApiResult<()> {
    if let Some(app) = body.app_name {
        group.app_name = app.trim().to_string();
    }
    if let Some(title) = body.title {
        group.title = title.trim().to_string();
    }
    if let Some(t) = body.address_type {
        group.address_type = t
            .trim()
            .parse()
            .map_err(|e| ApiError::field("addressType", format!("{e}")))?;
    }
    if let Some(list) = body.address_list {
        group.address_list = list
            .into_iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect();
    }
    if let Some(token) = body.access_token {
        let token = token.trim().to_string();
        group.access_token = (!token.is_empty()).then_some(token);
    }
    if let Some(cap) = body.max_concurrent_instances {
        check_instance_cap("maxConcurrentInstances", cap)?;
        group.max_concurrent_instances = cap;
    }
    if let Some(v) = body.instance_overflow {
        group.instance_overflow = parse_enum("instanceOverflow", &v)?;
    }

    let app = &group.app_name;
    let app_len = app.chars().count();
    if !(4..=64).contains(&app_len) {
        return Err(ApiError::field(
            "appName",
            "appName must be 4 to 64 characters long",
        ));
    }
    if !app
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Err(ApiError::field(
            "appName",
            "appName may only contain letters, digits, '_', '.' and '-'",
        ));
    }
    if group.title.is_empty() {
        return Err(ApiError::field("title", "title is required"));
    }
    if group.title.chars().count() > 64 {
        return Err(ApiError::field(
            "title",
            "title must be at most 64 characters",
        ));
    }
    if let Some(token) = group.access_token.as_deref() {
        if token.chars().count() > 255 {
            return Err(ApiError::field(
                "accessToken",
                "accessToken must be at most 255 characters",
            ));
        }
        if let Some(why) = unusable_token(token) {
            return Err(ApiError::field(
                "accessToken",
                format!("{why}; choose another"),
            ));
        }
        if token.chars().count() < GROUP_TOKEN_MIN {
            return Err(ApiError::field(
                "accessToken",
                format!(
                    "accessToken must be at least {GROUP_TOKEN_MIN} characters (it lets executors \
                     register and report for the group, and it is sent with every call to them)"
                ),
            ));
        }
    }
    match group.address_type {
        AddressType::Manual => {
            if group.address_list.is_empty() {
                return Err(ApiError::field(
                    "addressList",
                    "a MANUAL group needs at least one executor address",
                ));
            }
            if group.address_list.len() > ADDRESS_LIST_MAX {
                return Err(ApiError::field(
                    "addressList",
                    format!(
                        "addressList may hold at most {ADDRESS_LIST_MAX} addresses, not {}",
                        group.address_list.len()
                    ),
                ));
            }
            for a in &group.address_list {
                check_executor_address("addressList", a)?;
            }
        }
        // the registry fills automatic lists; what was typed is dropped
        AddressType::Auto => group.address_list.clear(),
    }
    Ok(())
}

#[utoipa::path(
    get,
    path = "/groups",
    tag = "groups",
    summary = "Executor groups, with their live addresses",
    responses(
        (status = 200, description = "The groups", body = Vec<GroupView>)
    )
)]
async fn list(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    let live = live_addresses(&state).await?;
    let groups: Vec<GroupView> = state
        .store
        .list_groups()
        .await?
        .into_iter()
        .filter(|g| principal.can_access(g.id))
        .map(|g| view(g, &live))
        .collect();
    Ok(HttpResponse::Ok().json(groups))
}

#[utoipa::path(
    get,
    path = "/groups/{id}",
    tag = "groups",
    summary = "One executor group",
    params(("id" = i32, Path, description = "The group's id")),
    responses(
        (status = 200, description = "The group", body = GroupView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let group = load_group(&state, id, None).await?;
    principal.require_group(id)?;
    let live = live_addresses(&state).await?;
    Ok(HttpResponse::Ok().json(view(group, &live)))
}

fn refresh_registry(state: &AppState) {
    // rewrites the stored AUTO lists now rather than at the next 30 s pass
    state.registry.do_send(RefreshGroups);
}

#[utoipa::path(
    post,
    path = "/groups",
    tag = "groups",
    summary = "Create an executor group (administrators)",
    request_body = GroupBody,
    responses(
        (status = 201, description = "Created", body = GroupView),
        answers::BadInput,
        answers::Forbidden,
        answers::Conflict
    )
)]
async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<GroupBody>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let body = body.into_inner();
    if body
        .app_name
        .as_deref()
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        return Err(ApiError::field("appName", "appName is required"));
    }
    let mut group = JobGroup {
        id: 0,
        app_name: String::new(),
        title: String::new(),
        address_type: AddressType::Auto,
        address_list: Vec::new(),
        access_token: None,
        update_time: now_ms(),
        max_concurrent_instances: 0,
        instance_overflow: crate::model::InstanceOverflow::Skip,
    };
    apply(&mut group, body)?;
    group.id = state.store.insert_group(&group).await?;
    log::info!(
        "user '{}' created executor group {} ({})",
        principal.user.username,
        group.id,
        group.app_name
    );
    refresh_registry(&state);
    let live = live_addresses(&state).await?;
    let shown = view(group, &live);
    record(&state, &principal, "group.create", None, Some(&shown)).await;
    Ok(HttpResponse::Created().json(shown))
}

#[utoipa::path(
    put,
    path = "/groups/{id}",
    tag = "groups",
    summary = "Change an executor group; omitted fields keep their value (administrators)",
    params(("id" = i32, Path, description = "The group's id")),
    request_body = GroupBody,
    responses(
        (status = 200, description = "Changed", body = GroupView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    body: Json<GroupBody>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let id = path.into_inner();
    let mut group = load_group(&state, id, None).await?;
    let live_before = live_addresses(&state).await?;
    let before = view(group.clone(), &live_before);
    let app_name = group.app_name.clone();
    apply(&mut group, body.into_inner())?;
    // executors register under the app name and jobs' runs go to whoever does: a new name
    // would leave both behind
    if group.app_name != app_name {
        return Err(ApiError::field(
            "appName",
            format!("appName is fixed once the group exists ('{app_name}'): create a new group for another app"),
        ));
    }
    group.update_time = now_ms();
    if !state.store.update_group(&group).await? {
        return Err(ApiError::not_found(format!(
            "executor group {id} does not exist"
        )));
    }
    refresh_registry(&state);
    let live = live_addresses(&state).await?;
    let shown = view(group, &live);
    record(
        &state,
        &principal,
        "group.update",
        Some(&before),
        Some(&shown),
    )
    .await;
    Ok(HttpResponse::Ok().json(shown))
}

#[utoipa::path(
    delete,
    path = "/groups/{id}",
    tag = "groups",
    summary = "Delete an executor group that has no jobs (administrators)",
    params(("id" = i32, Path, description = "The group's id")),
    responses(
        (status = 204, description = "Deleted"),
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let id = path.into_inner();
    let group = load_group(&state, id, None).await?;
    let jobs = state.store.count_jobs_in_group(id).await?;
    if jobs > 0 {
        return Err(ApiError::Conflict(format!(
            "executor group {id} is still used by {jobs} job(s); delete or move them first"
        )));
    }
    if !state.store.delete_group(id).await? {
        return Err(ApiError::not_found(format!(
            "executor group {id} does not exist"
        )));
    }
    let before = view(group, &BTreeMap::new());
    record(&state, &principal, "group.delete", Some(&before), None).await;
    Ok(HttpResponse::NoContent().finish())
}

/// Records a change of a group in the audit log (its token only as "set or not").
async fn record(
    state: &AppState,
    principal: &Principal,
    action: &'static str,
    before: Option<&GroupView>,
    after: Option<&GroupView>,
) {
    let Some(shown) = after.or(before) else {
        return;
    };
    let change = Change {
        action,
        target_type: "group",
        target_id: shown.id.into(),
        summary: shown.app_name.clone(),
        before: before.and_then(audit::snapshot),
        after: after.and_then(audit::snapshot),
    };
    audit::record(state, principal, change).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> JobGroup {
        JobGroup {
            id: 0,
            app_name: String::new(),
            title: String::new(),
            address_type: AddressType::Auto,
            address_list: Vec::new(),
            access_token: None,
            update_time: 0,
            max_concurrent_instances: 0,
            instance_overflow: crate::model::InstanceOverflow::Skip,
        }
    }

    fn body(app: &str, title: &str) -> GroupBody {
        GroupBody {
            app_name: Some(app.into()),
            title: Some(title.into()),
            ..Default::default()
        }
    }

    #[test]
    fn app_names_are_checked() {
        assert!(apply(&mut blank(), body("my-app.v1_x", "T")).is_ok());
        for bad in ["abc", "has space", "ümlaut", &"x".repeat(65)] {
            let err = apply(&mut blank(), body(bad, "T")).unwrap_err();
            assert!(
                matches!(&err, ApiError::BadRequest { field: Some(f), .. } if f == "appName"),
                "{bad}"
            );
        }
    }

    #[test]
    fn manual_groups_need_http_addresses() {
        let mut b = body("app-one", "T");
        b.address_type = Some("MANUAL".into());
        assert!(apply(&mut blank(), b).is_err());
        let mut b = body("app-one", "T");
        b.address_type = Some("MANUAL".into());
        b.address_list = Some(vec!["10.0.0.1:9999".into()]);
        assert!(apply(&mut blank(), b).is_err());
        let mut b = body("app-one", "T");
        b.address_type = Some("SOMETIMES".into());
        let err = apply(&mut blank(), b).unwrap_err().to_string();
        assert!(err.contains("allowed: AUTO, MANUAL"), "{err}");
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::web::api::input::parse_value;
    use crate::web::api::input::strategies::{object, text};

    fn group_json() -> BoxedStrategy<Value> {
        object(vec![
            (
                "appName",
                text(&["billing-executor", "abc", "ab cd", "x.y_z-1"]),
            ),
            ("title", text(&["Billing", ""])),
            (
                "addressType",
                text(&["AUTO", "MANUAL", "manual", "SOMETIMES"]),
            ),
            (
                "addressList",
                prop::collection::vec(
                    prop_oneof![
                        prop::sample::select(vec![
                            "http://10.0.0.1:9999/",
                            "https://exec.example.com/ctx/",
                            "",
                            "  ",
                            "10.0.0.1:9999",
                            "http://",
                        ])
                        .prop_map(str::to_string),
                        ".{0,20}",
                    ],
                    0..4,
                )
                .prop_map(|v| json!(v))
                .boxed(),
            ),
            (
                "accessToken",
                text(&["", "group-secret-0001", "short-token", "default_token"]),
            ),
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A group body is applied whole or refused with 400 naming a field; an accepted
        /// group keeps the rules registration and routing rely on.
        #[test]
        fn group_bodies_are_accepted_whole_or_refused_with_a_field(body in group_json()) {
            let mut group = JobGroup {
                id: 1,
                app_name: "sample-app".into(),
                title: "Sample".into(),
                address_type: AddressType::Auto,
                address_list: Vec::new(),
                access_token: None,
                update_time: 0,
                max_concurrent_instances: 0,
                instance_overflow: crate::model::InstanceOverflow::Skip,
            };
            match parse_value::<GroupBody>(body).and_then(|b| apply(&mut group, b)) {
                Ok(()) => {
                    let n = group.app_name.chars().count();
                    prop_assert!((4..=64).contains(&n));
                    prop_assert!(group.app_name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
                    prop_assert!(!group.title.is_empty() && group.title.chars().count() <= 64);
                    if let Some(token) = &group.access_token {
                        prop_assert!(unusable_token(token).is_none());
                        prop_assert!(token.chars().count() >= GROUP_TOKEN_MIN);
                    }
                    prop_assert!(group.address_list.len() <= ADDRESS_LIST_MAX);
                    match group.address_type {
                        AddressType::Manual => {
                            prop_assert!(!group.address_list.is_empty());
                            for a in &group.address_list {
                                prop_assert!(check_executor_address("addressList", a).is_ok());
                            }
                        }
                        AddressType::Auto => prop_assert!(group.address_list.is_empty()),
                    }
                }
                Err(ApiError::BadRequest { message, .. }) => prop_assert!(!message.is_empty()),
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }
}
