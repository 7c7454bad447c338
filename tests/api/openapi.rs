//! `GET /api/v1/openapi.json` (behind login) parses as OpenAPI 3.1 and matches the code's
//! document; the console's `/api-docs` page renders it.

use std::collections::BTreeSet;

use actix_web::http::Method;
use serde_json::Value;

/// Every `$ref` in `v`.
fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.insert(r.clone());
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

backends!(app: openapi_document_is_served_and_valid, |app| {
    let anon = app.anonymous();
    let res = anon.raw(Method::GET, "/api/v1/openapi.json", None, Vec::new()).await;
    assert_eq!(res.status, 401, "behind login like the rest of /api/v1");

    let res = app
        .api
        .raw(Method::GET, "/api/v1/openapi.json", None, Vec::new())
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let text = serde_json::to_string(&res.body).unwrap();
    let spec = oas3::from_json(&text).expect("parses as an OpenAPI 3.1 document");
    let version = spec.validate_version().expect("a supported OpenAPI version");
    assert_eq!(version.major, 3);

    let ops: Vec<_> = spec.operations().collect();
    assert!(ops.len() >= 42, "{} operations", ops.len());
    for (path, method, op) in &ops {
        assert!(path.starts_with("/api/v1/"), "{path}");
        let responses = op.responses.as_ref().expect("responses");
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{method} {path}: no success answer"
        );
        // every operation on a `{param}` path declares that parameter
        for name in path.split('{').skip(1).map(|s| &s[..s.find('}').unwrap()]) {
            let declared = op.parameters.iter().any(|p| match p {
                oas3::spec::ObjectOrReference::Object(p) => p.name == name,
                _ => false,
            });
            assert!(declared, "{method} {path}: path parameter {name} not declared");
        }
    }
    let paths = spec.paths.as_ref().expect("paths");
    let login = paths["/api/v1/auth/login"].post.as_ref().expect("POST /auth/login");
    assert!(login.request_body.is_some());

    // every reference points at a schema the document defines
    let mut all = BTreeSet::new();
    refs(&res.body, &mut all);
    let schemas = res.body["components"]["schemas"].as_object().expect("schemas");
    for r in &all {
        let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{r}"));
        assert!(schemas.contains_key(name), "{r} is not defined");
    }
    assert!(all.contains("#/components/schemas/ApiErrorBody"));

    // the served document is the code's
    let code = serde_json::to_value(jobwheel::web::api::openapi::api_doc()).unwrap();
    assert_eq!(res.body, code);

    // an error answer has the documented shape
    let bad = app.api.get_job(999_999).await;
    assert_eq!(bad.status, 404);
    let allowed: BTreeSet<&str> = schemas["ApiErrorBody"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in bad.body.as_object().unwrap().keys() {
        assert!(allowed.contains(key.as_str()), "undocumented error field {key}");
    }

    // the console renders it, without scripts of its own
    let page = app.api.page("/api-docs").await;
    assert_eq!(page.status, 200);
    assert!(page.csp.contains("script-src 'self'"));
    assert!(page.html.contains("/api/v1/jobs/{id}/trigger"), "operations listed");
    assert!(page.html.contains("ApiErrorBody") && page.html.contains("JobBody"));
    assert!(!page.html.contains("<script>"), "no inline script");
    let page = anon.page("/api-docs").await;
    assert_eq!(page.status, 303, "the page needs a session");
});
