//! The executor-facing API: `/api/registry`, `/api/registryRemove`, `/api/callback`, served at
//! the root and under `/xxl-job-admin` (the context path of 2.4–3.4.0 executors' configuration).
//!
//! As in XXL-JOB every answer is HTTP 200 with the `{code, msg}` envelope; errors are code 500.

use actix_web::http::Method;
use actix_web::middleware::from_fn;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use std::collections::HashSet;

use super::body_limit::{LimitedBody, WIRE_BODY_LIMIT};
use super::AppState;
use crate::actors::registry::{Register, Unregister};
use crate::actors::result_intake::{ReportResults, ResultScope};
use crate::model::{executor_address_problem, unstorable, BeatReport};
use crate::protocol::{
    constant_time_eq, decode_callback_items, usable_labels, AnyReturn, ExecutorLoad, Labels,
    ReturnT, ACCESS_TOKEN_HEADER, APP_NAME_HEADER, MSG_ACCESS_TOKEN_WRONG,
    MSG_METHOD_NOT_SUPPORTED,
};
use crate::store::GroupToken;

/// The registry body (2.4 `RegistryParam`, 3.5 `RegistryRequest`).
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RegistryBody {
    registry_group: Option<String>,
    registry_key: Option<String>,
    registry_value: Option<String>,
    /// The jobwheel load extension, read apart so a malformed one never refuses a beat.
    load: Option<serde_json::Value>,
    /// The jobwheel labels extension, likewise.
    labels: Option<serde_json::Value>,
}

/// Mounts the three endpoints under `prefix` ("" or "/xxl-job-admin").
pub fn mount(cfg: &mut web::ServiceConfig, prefix: &str) {
    cfg.service(
        web::scope(&format!("{prefix}/api"))
            .wrap(from_fn(super::body_deadline::body_deadline))
            .route("/registry", web::route().to(registry))
            .route("/registryRemove", web::route().to(registry_remove))
            .route("/callback", web::route().to(callback))
            .configure(crate::web::api::xxl_jobs::routes),
    );
}

fn answer(r: AnyReturn) -> HttpResponse {
    HttpResponse::Ok().json(r)
}

fn header(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// What a caller of the executor API proved with its `XXL-JOB-ACCESS-TOKEN`.
struct Caller {
    /// It sent the admin's global token.
    global: bool,
    /// The groups whose own token it sent.
    granted: HashSet<i32>,
    /// Every group with a token of its own.
    tokens: Vec<GroupToken>,
}

impl Caller {
    /// Whether it may register or remove executors of `app_name`: with that group's own token
    /// when the group has one, else with the global token. A name that differs from such a
    /// group's only in case needs that group's token too: MySQL's default collations compare
    /// them equal, where a registration would meet the group's rows.
    fn may_register(&self, app_name: &str) -> bool {
        let folded = app_name.to_lowercase();
        let group = (self.tokens.iter().find(|g| g.app_name == app_name))
            .or_else(|| (self.tokens.iter()).find(|g| g.app_name.to_lowercase() == folded));
        match group {
            Some(group) => self.granted.contains(&group.group_id),
            None => self.global,
        }
    }

    /// The runs it may report results for.
    fn result_scope(&self) -> ResultScope {
        ResultScope::Executor {
            global: self.global,
            own_token: self.tokens.iter().map(|g| g.group_id).collect(),
            granted: self.granted.clone(),
        }
    }
}

/// Checks the method, body and token; `Err` carries the envelope to answer with. A token is
/// always required: the admin's global one, or a group's own one (XXL-JOB 3.5).
async fn admit(state: &AppState, req: &HttpRequest, body: &[u8]) -> Result<Caller, AnyReturn> {
    if req.method() != Method::POST {
        return Err(ReturnT::fail(MSG_METHOD_NOT_SUPPORTED));
    }
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ReturnT::fail("invalid request, requestBody empty."));
    }
    let given = header(req, ACCESS_TOKEN_HEADER).unwrap_or_default();
    let tokens = state
        .store
        .group_tokens()
        .await
        .map_err(|e| ReturnT::fail(format!("database unavailable: {e}")))?;
    // every token is compared, so the time taken says nothing about which one matched
    let global = constant_time_eq(&given, &state.access_token);
    let granted: HashSet<i32> = tokens
        .iter()
        .filter(|g| constant_time_eq(&given, &g.token))
        .map(|g| g.group_id)
        .collect();
    if global || !granted.is_empty() {
        return Ok(Caller {
            global,
            granted,
            tokens,
        });
    }
    log::warn!(
        "executor API call to {} from {} refused: wrong or missing access token (app {})",
        req.path(),
        peer(req),
        header(req, APP_NAME_HEADER).as_deref().unwrap_or("-")
    );
    Err(ReturnT::fail(MSG_ACCESS_TOKEN_WRONG))
}

/// The caller's address, for operators' logs.
fn peer(req: &HttpRequest) -> String {
    req.peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_else(|| "?".to_string())
}

/// The registry fields as the database keeps them: `registry_group` up to 50 characters,
/// `registry_key` and `registry_value` up to 255 (the log's executor address is that wide).
const REGISTRY_FIELDS: [(&str, usize); 3] = [
    ("registryGroup", 50),
    ("registryKey", 255),
    ("registryValue", 255),
];

/// A registry body's fields, checked.
#[derive(Debug)]
struct Registration {
    group: String,
    app_name: String,
    address: String,
    /// The executor's load (bounded) and labels (the usable ones).
    report: BeatReport,
}

/// Parses and checks a registry body: every field must be non-blank.
fn registry_body(body: &[u8]) -> Result<Registration, AnyReturn> {
    let parsed: RegistryBody = serde_json::from_slice(body).map_err(|e| {
        ReturnT::fail(format!(
            "invalid request, body is not a registry param: {e}"
        ))
    })?;
    let field = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let (g, k, v) = match (
        field(parsed.registry_group),
        field(parsed.registry_key),
        field(parsed.registry_value),
    ) {
        (Some(g), Some(k), Some(v)) => (g, k, v),
        _ => return Err(ReturnT::fail("Illegal Argument.")),
    };
    for ((name, max), value) in REGISTRY_FIELDS.iter().zip([&g, &k, &v]) {
        if let Some(why) = unstorable(value) {
            return Err(ReturnT::fail(format!("invalid request, {name} {why}.")));
        }
        if value.chars().count() > *max {
            return Err(ReturnT::fail(format!(
                "invalid request, {name} must be at most {max} characters."
            )));
        }
        if let Some(c) = value.chars().find(|c| c.is_control()) {
            return Err(ReturnT::fail(format!(
                "invalid request, {name} may not contain control characters (U+{:04X}).",
                c as u32
            )));
        }
    }
    // the admin calls what is registered, with the group's token: only an http(s) URL
    if let Some(why) = executor_address_problem(&v) {
        return Err(ReturnT::fail(format!(
            "invalid request, registryValue: {why}."
        )));
    }
    Ok(Registration {
        group: g,
        app_name: k,
        address: v,
        report: BeatReport {
            load: parsed
                .load
                .and_then(|v| serde_json::from_value::<ExecutorLoad>(v).ok())
                .map(ExecutorLoad::bounded),
            labels: parsed
                .labels
                .and_then(|v| serde_json::from_value::<Labels>(v).ok())
                .map(usable_labels)
                .unwrap_or_default(),
        },
    })
}

/// Admits a registry or registryRemove call: a token, a well-formed body, and a token that
/// covers the app name being registered.
async fn admit_registration(
    state: &AppState,
    req: &HttpRequest,
    body: &[u8],
) -> Result<Registration, AnyReturn> {
    let caller = admit(state, req, body).await?;
    let registration = registry_body(body)?;
    let app_name = &registration.app_name;
    if !caller.may_register(app_name) {
        log::warn!(
            "executor API call to {} from {} refused: the token does not cover app {app_name}",
            req.path(),
            peer(req)
        );
        return Err(ReturnT::fail(MSG_ACCESS_TOKEN_WRONG));
    }
    Ok(registration)
}

async fn registry(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: LimitedBody<WIRE_BODY_LIMIT>,
) -> HttpResponse {
    let registration = match admit_registration(&state, &req, &body.0).await {
        Ok(v) => v,
        Err(r) => return answer(r),
    };
    let protocol = if header(&req, APP_NAME_HEADER).is_some() {
        "v3.5"
    } else {
        "v2"
    };
    let msg = Register {
        group: registration.group,
        app_name: registration.app_name,
        address: registration.address,
        protocol: protocol.to_string(),
        report: registration.report,
    };
    match state.registry.send(msg).await {
        Ok(Ok(())) => answer(ReturnT::success()),
        Ok(Err(e)) => answer(ReturnT::fail(e)),
        Err(e) => answer(ReturnT::fail(format!("registry unavailable: {e}"))),
    }
}

async fn registry_remove(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: LimitedBody<WIRE_BODY_LIMIT>,
) -> HttpResponse {
    let registration = match admit_registration(&state, &req, &body.0).await {
        Ok(v) => v,
        Err(r) => return answer(r),
    };
    match state
        .registry
        .send(Unregister {
            group: registration.group,
            app_name: registration.app_name,
            address: registration.address,
        })
        .await
    {
        Ok(Ok(())) => answer(ReturnT::success()),
        Ok(Err(e)) => answer(ReturnT::fail(e)),
        Err(e) => answer(ReturnT::fail(format!("registry unavailable: {e}"))),
    }
}

async fn callback(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: LimitedBody<WIRE_BODY_LIMIT>,
) -> HttpResponse {
    let caller = match admit(&state, &req, &body.0).await {
        Ok(c) => c,
        Err(r) => return answer(r),
    };
    let items = match decode_callback_items(&body.0) {
        Ok(items) => items,
        Err(e) => {
            return answer(ReturnT::fail(format!(
                "invalid request, bad callback body: {e}"
            )))
        }
    };
    // answered after the results are stored, so an executor keeps (and retries) what failed
    let report = ReportResults {
        items,
        scope: caller.result_scope(),
    };
    match state.callbacks.send(report).await {
        Ok(Ok(outcome)) if outcome.refused.is_empty() => answer(ReturnT::success()),
        // the accepted results are stored; a re-sent batch finds them (and the runs of refused
        // messages, closed as failed) already done, so it is answered with success
        Ok(Ok(outcome)) => answer(ReturnT::fail(format!(
            "callback refused for {} result(s): {}; {} other result(s) stored, {} already known",
            outcome.refused.len(),
            outcome.refused.join("; "),
            outcome.stored,
            outcome.ignored + outcome.unknown
        ))),
        Ok(Err(e)) => {
            let level = match state.store.availability().is_up() {
                true => log::Level::Error,
                false => log::Level::Debug,
            };
            log::log!(level, "callback not stored (the executor will retry): {e}");
            answer(ReturnT::fail(e))
        }
        Err(e) => answer(ReturnT::fail(format!("callback handler unavailable: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caller(global: bool, granted: &[i32]) -> Caller {
        Caller {
            global,
            granted: granted.iter().copied().collect(),
            tokens: vec![GroupToken {
                group_id: 7,
                app_name: "own-token-app".into(),
                token: "group-secret".into(),
            }],
        }
    }

    #[test]
    fn a_group_with_its_own_token_registers_only_with_it() {
        let global = caller(true, &[]);
        assert!(global.may_register("plain-app"));
        assert!(!global.may_register("own-token-app"));
        // another case is the same app where MySQL compares names
        assert!(!global.may_register("OWN-Token-App"));
        let group = caller(false, &[7]);
        assert!(group.may_register("OWN-TOKEN-APP"));
        assert!(group.may_register("own-token-app"));
        assert!(!group.may_register("plain-app"));
        let scope = group.result_scope();
        assert!(scope.allows(7) && !scope.allows(1));
        let scope = global.result_scope();
        assert!(!scope.allows(7) && scope.allows(1));
    }

    #[test]
    fn a_load_is_kept_bounded_and_a_malformed_one_never_refuses_the_beat() {
        let jobs: Vec<_> = (0..300)
            .map(|i| serde_json::json!({"jobId": i, "queued": i, "oldestQueuedMs": 10}))
            .collect();
        let body = serde_json::json!({"registryGroup": "EXECUTOR", "registryKey": "app",
            "registryValue": "http://h:1/", "load": {"running": 2, "queued": 9, "limit": 2, "jobs": jobs}});
        let load = registry_body(body.to_string().as_bytes())
            .unwrap()
            .report
            .load
            .expect("load kept");
        assert_eq!((load.running, load.queued, load.limit), (2, 9, 2));
        assert_eq!(load.jobs.len(), crate::protocol::LOAD_JOBS_MAX);
        assert_eq!(load.jobs[0].job_id, 299);
        for bad in [
            serde_json::json!("full"),
            serde_json::json!({"running": -3}),
            serde_json::json!({"queued": 1e40}),
            serde_json::json!({"jobs": [{"jobId": "x"}]}),
        ] {
            let body = serde_json::json!({"registryGroup": "EXECUTOR", "registryKey": "app",
                "registryValue": "http://h:1/", "load": bad});
            let r = registry_body(body.to_string().as_bytes()).unwrap();
            assert_eq!((r.app_name.as_str(), r.report.load), ("app", None));
        }
    }

    #[test]
    fn labels_are_kept_when_usable() {
        let body = serde_json::json!({"registryGroup": "EXECUTOR", "registryKey": "app",
            "registryValue": "http://h:1/", "labels": {"gpu": "true", "bad key": "x", "n": 5}});
        let r = registry_body(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            r.report.labels,
            Labels::new(),
            "a non-string value spoils the object"
        );
        let body = serde_json::json!({"registryGroup": "EXECUTOR", "registryKey": "app",
            "registryValue": "http://h:1/", "labels": {"gpu": "true", "bad key": "x"}});
        let r = registry_body(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            r.report.labels,
            Labels::from([("gpu".to_string(), "true".to_string())])
        );
    }

    #[test]
    fn registry_bodies_need_every_field() {
        let ok =
            br#"{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://h:1/"}"#;
        let r = registry_body(ok).unwrap();
        assert_eq!(
            (r.group.as_str(), r.app_name.as_str(), r.address.as_str()),
            ("EXECUTOR", "app", "http://h:1/")
        );
        assert_eq!(r.report, BeatReport::default());
        let blank =
            br#"{"registryGroup":"EXECUTOR","registryKey":" ","registryValue":"http://h:1/"}"#;
        assert_eq!(
            registry_body(blank).unwrap_err().msg.as_deref(),
            Some("Illegal Argument.")
        );
        assert!(registry_body(b"not json").is_err());
        for value in [
            "http://h:1/\r\nX-Evil: 1",
            "<script>alert(1)</script>",
            "javascript:alert(1)",
            "10.0.0.1:9999",
            "http://h:1/\u{7}",
        ] {
            let body =
                json!({"registryGroup": "EXECUTOR", "registryKey": "app", "registryValue": value});
            let err = registry_body(body.to_string().as_bytes()).unwrap_err();
            assert!(
                err.msg
                    .as_deref()
                    .is_some_and(|m| m.contains("registryValue")),
                "{value:?}: {err:?}"
            );
        }
        let long = format!("http://h/{}", "a".repeat(250));
        let body =
            json!({"registryGroup": "EXECUTOR", "registryKey": "app", "registryValue": long});
        assert!(registry_body(body.to_string().as_bytes()).is_err());
        let key = json!({"registryGroup": "EXECUTOR", "registryKey": "a\tb", "registryValue": "http://h:1/"});
        assert!(registry_body(key.to_string().as_bytes()).is_err());
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::web::api::input::strategies::{json_value, object, text};

    fn registry_json() -> BoxedStrategy<Value> {
        object(vec![
            ("registryGroup", text(&["EXECUTOR", " ", "ADMIN"])),
            ("registryKey", text(&["sample-app", "", "a\u{0}b"])),
            (
                "registryValue",
                text(&["http://10.0.0.1:9999/", "", "http://h/\u{0}"]),
            ),
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A registry body from any executor (any bytes, any JSON) gives three storable,
        /// non-blank fields within the columns' widths, or a failure envelope with a message.
        #[test]
        fn registry_bodies_are_storable_or_refused(bytes in prop_oneof![
            registry_json().prop_map(|v| v.to_string().into_bytes()),
            json_value().prop_map(|v| v.to_string().into_bytes()),
            prop::collection::vec(any::<u8>(), 0..40),
            Just(json!({"registryKey": "k".repeat(256), "registryGroup": "EXECUTOR", "registryValue": "v"})
                .to_string().into_bytes()),
        ]) {
            match registry_body(&bytes) {
                Ok(r) => {
                    let (group, key, value) = (r.group, r.app_name, r.address);
                    if let Some(load) = r.report.load {
                        prop_assert!(load.jobs.len() <= crate::protocol::LOAD_JOBS_MAX);
                    }
                    for ((name, max), v) in REGISTRY_FIELDS.iter().zip([&group, &key, &value]) {
                        prop_assert!(!v.is_empty() && v.trim() == v, "{name}");
                        prop_assert!(v.chars().count() <= *max, "{name}");
                        prop_assert!(unstorable(v).is_none(), "{name}");
                        prop_assert!(!v.chars().any(char::is_control), "{name}");
                    }
                    prop_assert!(executor_address_problem(&value).is_none());
                }
                Err(ret) => {
                    prop_assert_eq!(ret.code, crate::protocol::FAIL_CODE);
                    prop_assert!(ret.msg.is_some_and(|m| !m.is_empty()));
                }
            }
        }
    }
}
