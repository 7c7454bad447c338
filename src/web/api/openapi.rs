//! `GET /api/v1/openapi.json`: the REST API as an OpenAPI 3.1 document.
//!
//! The document is derived from the code: each handler carries a `#[utoipa::path]` annotation
//! (method, path, parameters, body, answers) and each request and answer type derives
//! `ToSchema`, so a changed type changes the document. [`ApiDoc`] lists every handler; a test
//! below reads the routes the modules register and fails when one is missing from the document
//! (or the document lists one that is not served). Served behind login like the rest of
//! `/api/v1`; the console's `/api-docs` page renders the same value.

use std::sync::OnceLock;

use actix_web::HttpResponse;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Components, Paths, Required};
use utoipa::{Modify, OpenApi};

use super::{
    audit, auth, cordons, glue, groups, jobs, logs, registry, reports, schedule, system, tokens,
    users, workflows,
};

/// Where the API is mounted; the annotations' paths are relative to it.
pub const PREFIX: &str = "/api/v1";

/// The document: every `/api/v1` handler.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "jobwheel REST API",
        description = "The scheduling center's REST API. Times are epoch milliseconds; field \
                       names are camelCase. Every error answers `{error, field?}` (ApiErrorBody). A request \
                       body is at most 2 MiB (2,097,152 bytes; more answers 413); a body that is \
                       not UTF-8 JSON, or nests arrays and objects more than 128 deep, answers 400.",
    ),
    paths(
        auth::login,
        auth::logout,
        auth::me,
        auth::change_password,
        audit::list,
        glue::get,
        glue::save,
        glue::version,
        glue::restore,
        groups::list,
        groups::create,
        groups::get,
        groups::update,
        groups::delete,
        jobs::list,
        jobs::create,
        jobs::get,
        jobs::update,
        jobs::delete,
        jobs::start,
        jobs::stop,
        jobs::run_now::trigger,
        jobs::fire_times::next_fire_times,
        logs::list,
        logs::clear,
        logs::get,
        logs::content,
        logs::kill,
        registry::list,
        registry::suspects,
        cordons::cordons,
        cordons::cordon,
        cordons::uncordon,
        reports::daily,
        schedule::preview,
        system::access_token,
        system::actors,
        tokens::list,
        tokens::create,
        tokens::revoke,
        users::list,
        users::create,
        users::get,
        users::update,
        users::delete,
        users::reset_password,
        workflows::list,
        workflows::create,
        workflows::validate,
        workflows::get,
        workflows::update,
        workflows::delete,
        workflows::start,
        workflows::stop,
        workflows::graph_svg,
        workflows::runs::trigger,
        workflows::runs::list,
        workflows::runs::get,
        workflows::runs::graph_svg,
        workflows::runs::cancel,
        workflows::runs::retry,
        workflows::runs::pause,
        workflows::runs::resume,
        workflows::runs::mark_success,
        document,
    ),
    components(schemas(super::error::ApiErrorBody)),
    security(("bearer" = []), ("session" = [])),
    modifiers(&Common),
)]
pub struct ApiDoc;

/// What every operation shares: the mount prefix, the security schemes, and the answers any
/// call can give (401 without login, 413 for a body too large, 500).
struct Common;

impl Modify for Common {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Components::new);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API token: `Authorization: Bearer jw_…`"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                auth::SESSION_COOKIE,
                "The console's session cookie, set by `POST /api/v1/auth/login`",
            ))),
        );
        let error = |description: &str| {
            utoipa::openapi::ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    utoipa::openapi::ContentBuilder::new()
                        .schema(Some(utoipa::openapi::Ref::from_schema_name("ApiErrorBody")))
                        .build(),
                )
                .build()
        };
        let mut paths = Paths::new();
        for (path, mut item) in std::mem::take(&mut doc.paths.paths) {
            for op in operations(&mut item) {
                let public = op
                    .security
                    .as_ref()
                    .is_some_and(|s| s.iter().all(is_empty_requirement));
                let responses = &mut op.responses.responses;
                if !public {
                    responses.entry("401".into()).or_insert_with(|| {
                        error("Not logged in (no valid session or token)").into()
                    });
                }
                if op.request_body.is_some() {
                    responses.entry("413".into()).or_insert_with(|| {
                        error("The body is larger than 2 MiB (2,097,152 bytes)").into()
                    });
                }
                responses
                    .entry("500".into())
                    .or_insert_with(|| error("Internal failure (logged, not shown)").into());
                // a body that may be `null` (an `Option`) may also be left out
                if let Some(body) = op.request_body.as_mut() {
                    let nullable = serde_json::to_value(&body.content)
                        .is_ok_and(|c| c.to_string().contains(r#"{"type":"null"}"#));
                    body.required = Some(if nullable {
                        Required::False
                    } else {
                        Required::True
                    });
                }
                // handler names repeat across modules (`list`, `get`); operation ids may not
                let tag = op.tags.as_ref().and_then(|t| t.first()).cloned();
                if let (Some(tag), Some(id)) = (tag, op.operation_id.as_mut()) {
                    *id = format!("{tag}.{id}");
                }
            }
            paths.paths.insert(format!("{PREFIX}{path}"), item);
        }
        doc.paths = paths;
    }
}

/// Whether a security requirement is the empty one (`{}`: no login needed).
fn is_empty_requirement(req: &utoipa::openapi::security::SecurityRequirement) -> bool {
    serde_json::to_value(req).is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()))
}

/// The operations of a path item.
fn operations(item: &mut utoipa::openapi::PathItem) -> Vec<&mut utoipa::openapi::path::Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.patch.as_mut(),
        item.head.as_mut(),
        item.options.as_mut(),
        item.trace.as_mut(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The document, built once.
pub fn api_doc() -> &'static utoipa::openapi::OpenApi {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    DOC.get_or_init(ApiDoc::openapi)
}

/// `GET /api/v1/openapi.json`.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "system",
    summary = "This API as an OpenAPI 3.1 document",
    responses((status = 200, description = "The document", content_type = "application/json"))
)]
pub(super) async fn document() -> HttpResponse {
    HttpResponse::Ok().json(api_doc())
}

/// `(METHOD, path)` of every operation in the document, paths as in the document.
pub fn operations_of(doc: &utoipa::openapi::OpenApi) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (path, item) in &doc.paths.paths {
        for (method, op) in [
            ("GET", &item.get),
            ("PUT", &item.put),
            ("POST", &item.post),
            ("DELETE", &item.delete),
            ("PATCH", &item.patch),
            ("HEAD", &item.head),
            ("OPTIONS", &item.options),
            ("TRACE", &item.trace),
        ] {
            if op.is_some() {
                out.push((method, path.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// `{anything}` → `{}`, so parameter names do not matter.
    fn normalize(path: &str) -> String {
        let mut out = String::new();
        let mut in_param = false;
        for c in path.chars() {
            match c {
                '{' => {
                    in_param = true;
                    out.push('{');
                }
                '}' => {
                    in_param = false;
                    out.push('}');
                }
                _ if in_param => {}
                _ => out.push(c),
            }
        }
        out
    }

    /// `(METHOD, /api/v1/path)` of every `.route("path", web::method()…)` in the API's sources.
    /// A route registered any other way (a `format!` path, `web::resource`, a macro) fails the
    /// test, so that it cannot slip past the comparison.
    fn served_routes() -> BTreeSet<(String, String)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/web/api");
        let mut routes = BTreeSet::new();
        let mut files = Vec::new();
        let mut folders = vec![std::path::PathBuf::from(dir)];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("src/web/api") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            // the XXL-JOB compatible endpoints are mounted under /api, not /api/v1
            if name == "xxl_jobs.rs" || name == "openapi.rs" {
                continue;
            }
            let source = std::fs::read_to_string(&file).expect("source");
            let code = source.split("#[cfg(test)]").next().unwrap_or_default();
            for bad in [
                "web::resource(",
                "#[get(",
                "#[post(",
                "#[put(",
                "#[delete(",
                "route(&",
            ] {
                assert!(
                    !code.contains(bad),
                    "{name}: `{bad}` registers a route this test cannot read; use \
                     .route(\"/path\", web::method().to(handler))"
                );
            }
            let mut rest = code;
            while let Some(at) = rest.find(".route(") {
                rest = &rest[at + ".route(".len()..];
                let literal = rest.trim_start();
                assert!(
                    literal.starts_with('"'),
                    "{name}: a route whose path is not a string literal: {}",
                    &literal[..literal.len().min(60)]
                );
                let path = &literal[1..literal[1..].find('"').expect("closing quote") + 1];
                let after = &literal[path.len() + 2..];
                let method_at = after.find("web::").expect("web::method() after the path");
                let method = &after[method_at + 5..];
                let method = &method[..method.find('(').expect("method call")];
                assert!(
                    ["get", "post", "put", "delete", "patch"].contains(&method),
                    "{name}: route {path} with web::{method}()"
                );
                routes.insert((method.to_uppercase(), normalize(&format!("{PREFIX}{path}"))));
            }
        }
        routes
    }

    #[test]
    fn every_served_route_is_documented_and_no_other() {
        let served = served_routes();
        assert!(served.len() > 40, "too few routes found: {served:?}");
        assert!(served.contains(&("GET".into(), "/api/v1/openapi.json".into())));
        let documented: BTreeSet<(String, String)> = operations_of(api_doc())
            .into_iter()
            .map(|(m, p)| (m.to_string(), normalize(&p)))
            .collect();
        let undocumented: Vec<_> = served.difference(&documented).collect();
        assert!(
            undocumented.is_empty(),
            "routes served but missing from the OpenAPI document (add #[utoipa::path] and list \
             the handler in ApiDoc): {undocumented:?}"
        );
        let unserved: Vec<_> = documented.difference(&served).collect();
        assert!(
            unserved.is_empty(),
            "documented but not served: {unserved:?}"
        );
    }

    #[test]
    fn operations_have_answers_errors_and_security() {
        let doc = serde_json::to_value(api_doc()).expect("serializes");
        if let Ok(out) = std::env::var("JOBWHEEL_OPENAPI_DUMP") {
            std::fs::write(out, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        }
        assert!(doc["openapi"]
            .as_str()
            .unwrap_or_default()
            .starts_with("3."));
        assert!(doc["components"]["schemas"]["ApiErrorBody"].is_object());
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        assert_eq!(
            doc["components"]["securitySchemes"]["session"]["in"],
            "cookie"
        );
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                let responses = op["responses"].as_object().expect("responses");
                assert!(
                    responses.keys().any(|k| k.starts_with('2')),
                    "{method} {path}: no success answer"
                );
                assert!(responses.contains_key("500"), "{method} {path}: no 500");
                let public = path.ends_with("/auth/login") || path.ends_with("/auth/logout");
                if public {
                    assert_eq!(op["security"], serde_json::json!([{}]), "{method} {path}");
                } else {
                    assert!(responses.contains_key("401"), "{method} {path}: no 401");
                    assert!(
                        op.get("security").is_none(),
                        "{method} {path}: own security"
                    );
                }
                assert!(op["summary"].is_string(), "{method} {path}: no summary");
            }
        }
        let mut ids = BTreeSet::new();
        for (_, item) in doc["paths"].as_object().expect("paths") {
            for (_, op) in item.as_object().expect("path item") {
                let id = op["operationId"].as_str().expect("operationId");
                assert!(ids.insert(id.to_string()), "operationId {id} repeats");
            }
        }
        // a limited login says how long to wait; every error answer carries ApiErrorBody
        let login = &doc["paths"]["/api/v1/auth/login"]["post"]["responses"];
        assert!(
            login["429"]["headers"]["Retry-After"].is_object(),
            "{login}"
        );
        let not_found = &doc["paths"]["/api/v1/users/{id}"]["get"]["responses"]["404"];
        assert_eq!(
            not_found["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ApiErrorBody"
        );
        let trigger = &doc["paths"]["/api/v1/jobs/{id}/trigger"]["post"]["requestBody"];
        assert_eq!(
            trigger["required"], false,
            "an empty trigger body is allowed"
        );
        let create = &doc["paths"]["/api/v1/jobs"]["post"]["requestBody"];
        assert_eq!(create["required"], true);
        // a request schema is camelCase, as the handlers read it
        let job_body = &doc["components"]["schemas"]["JobBody"]["properties"];
        assert!(job_body["executorHandler"].is_object(), "{job_body}");
        // query parameters are camelCase too
        let params = doc["paths"]["/api/v1/jobs"]["get"]["parameters"]
            .as_array()
            .expect("parameters");
        assert!(params
            .iter()
            .any(|p| p["name"] == "jobGroup" && p["in"] == "query"));
    }
}
