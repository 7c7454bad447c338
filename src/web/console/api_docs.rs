//! `GET /api-docs`: the REST API's OpenAPI document as a readable page, rendered here from the
//! same value `GET /api/v1/openapi.json` serves (no script, nothing fetched from elsewhere).

use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use serde_json::Value;

use super::api_schema_text::SCHEMA_TEXTS_ZH;
use super::api_text::{TAGS_ZH, TEXTS_ZH};
use super::{nav, render, Lang, Nav};
use crate::web::api::auth::Principal;
use crate::web::api::openapi::api_doc;

/// A group of operations (the document's tag).
struct Section {
    tag: String,
    /// The tag in the reader's language.
    title: String,
    operations: Vec<Operation>,
}

/// One method of one path.
struct Operation {
    method: &'static str,
    path: String,
    /// An anchor: `get-api-v1-jobs-id`.
    anchor: String,
    summary: String,
    public: bool,
    params: Vec<Param>,
    /// The request body's schema and whether it is required.
    body: Option<(String, bool)>,
    responses: Vec<Answer>,
}

struct Param {
    name: String,
    location: String,
    schema: String,
    required: bool,
    description: String,
}

struct Answer {
    status: String,
    /// `2`, `4` or `5`: the status's class, for its colour.
    class: String,
    description: String,
    schema: String,
    /// The document's schema that `schema` names (the page links to it), or empty.
    target: String,
}

/// A component schema: its properties.
struct Schema {
    name: String,
    description: String,
    properties: Vec<Param>,
}

#[derive(Template)]
#[template(path = "api_docs.html")]
struct ApiDocsPage {
    nav: Nav,
    title: String,
    version: String,
    sections: Vec<Section>,
    schemas: Vec<Schema>,
}

/// `GET /api-docs`.
pub(super) async fn page(req: HttpRequest, principal: Principal) -> HttpResponse {
    let doc = serde_json::to_value(api_doc()).unwrap_or_default();
    let (mut sections, mut schemas) = outline(&doc);
    let nav = nav(&req, &principal, "api_docs");
    if nav.lang == Lang::Zh {
        in_chinese(&mut sections, &mut schemas);
    }
    render(&ApiDocsPage {
        nav,
        title: text(&doc["info"]["title"]),
        version: text(&doc["openapi"]),
        sections,
        schemas,
    })
}

/// The sections' tags, summaries and descriptions, and the schemas' descriptions, in Chinese; a
/// text the catalogue lacks stays English (a test keeps the catalogue complete).
fn in_chinese(sections: &mut [Section], schemas: &mut [Schema]) {
    let zh = |table: &[(&str, &'static str)], english: &mut String| {
        if let Ok(i) = table.binary_search_by(|(k, _)| (*k).cmp(english.as_str())) {
            *english = table[i].1.to_string();
        }
    };
    for schema in schemas {
        zh(SCHEMA_TEXTS_ZH, &mut schema.description);
        for p in &mut schema.properties {
            zh(SCHEMA_TEXTS_ZH, &mut p.description);
        }
    }
    for section in sections {
        zh(TAGS_ZH, &mut section.title);
        for op in &mut section.operations {
            zh(TEXTS_ZH, &mut op.summary);
            for p in &mut op.params {
                zh(TEXTS_ZH, &mut p.description);
            }
            for r in &mut op.responses {
                zh(TEXTS_ZH, &mut r.description);
            }
        }
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// A schema in one word or two: `JobView`, `JobView[]`, `integer (int32)`, `string | null`.
fn schema_name(s: &Value) -> String {
    if let Some(r) = s["$ref"].as_str() {
        return r.rsplit('/').next().unwrap_or(r).to_string();
    }
    for combo in ["oneOf", "anyOf", "allOf"] {
        if let Some(items) = s[combo].as_array() {
            let names: Vec<String> = items.iter().map(schema_name).collect();
            return names.join(if combo == "allOf" { " & " } else { " | " });
        }
    }
    let kind = match &s["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => String::new(),
    };
    if kind.starts_with("array") {
        return format!("{}[]", schema_name(&s["items"]));
    }
    match s["format"].as_str() {
        Some(f) => format!("{kind} ({f})"),
        None if kind.is_empty() => "any".to_string(),
        None => kind,
    }
}

/// The document's operations grouped by tag (in order of first appearance), and its schemas.
fn outline(doc: &Value) -> (Vec<Section>, Vec<Schema>) {
    let mut sections: Vec<Section> = Vec::new();
    let empty = serde_json::Map::new();
    for (path, item) in doc["paths"].as_object().unwrap_or(&empty) {
        for method in ["get", "post", "put", "patch", "delete"] {
            let op = &item[method];
            if !op.is_object() {
                continue;
            }
            let params = op["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| Param {
                            name: text(&p["name"]),
                            location: text(&p["in"]),
                            schema: schema_name(&p["schema"]),
                            required: p["required"].as_bool().unwrap_or(false),
                            description: text(&p["description"]),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let body = op["requestBody"].as_object().map(|b| {
                let schema = b
                    .get("content")
                    .and_then(Value::as_object)
                    .and_then(|c| c.values().next())
                    .map(|c| schema_name(&c["schema"]))
                    .unwrap_or_default();
                (
                    schema,
                    b.get("required").and_then(Value::as_bool).unwrap_or(false),
                )
            });
            let responses = op["responses"]
                .as_object()
                .map(|rs| {
                    rs.iter()
                        .map(|(status, r)| {
                            let schema = r["content"]
                                .as_object()
                                .and_then(|c| c.values().next())
                                .map(|c| schema_name(&c["schema"]))
                                .filter(|s| s != "any")
                                .unwrap_or_default();
                            let component = schema.trim_end_matches("[]");
                            let target = if doc["components"]["schemas"][component].is_object() {
                                component.to_string()
                            } else {
                                String::new()
                            };
                            Answer {
                                status: status.clone(),
                                class: status.chars().take(1).collect(),
                                description: text(&r["description"]),
                                schema,
                                target,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            let public = op["security"].as_array().is_some_and(|s| {
                s.iter()
                    .all(|r| r.as_object().is_some_and(|o| o.is_empty()))
            });
            let tag = op["tags"][0].as_str().unwrap_or("api").to_string();
            let anchor = format!("{method}{path}")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect::<String>()
                .replace("--", "-")
                .trim_end_matches('-')
                .to_string();
            let operation = Operation {
                method: match method {
                    "get" => "GET",
                    "post" => "POST",
                    "put" => "PUT",
                    "patch" => "PATCH",
                    _ => "DELETE",
                },
                path: path.clone(),
                anchor,
                summary: text(&op["summary"]),
                public,
                params,
                body,
                responses,
            };
            match sections.iter_mut().find(|s| s.tag == tag) {
                Some(s) => s.operations.push(operation),
                None => sections.push(Section {
                    title: tag.clone(),
                    tag,
                    operations: vec![operation],
                }),
            }
        }
    }
    let schemas = doc["components"]["schemas"]
        .as_object()
        .unwrap_or(&empty)
        .iter()
        .map(|(name, s)| {
            let required: Vec<&str> = s["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            Schema {
                name: name.clone(),
                description: text(&s["description"]),
                properties: s["properties"]
                    .as_object()
                    .unwrap_or(&empty)
                    .iter()
                    .map(|(prop, p)| Param {
                        name: prop.clone(),
                        location: String::new(),
                        schema: schema_name(p),
                        required: required.contains(&prop.as_str()),
                        description: text(&p["description"]),
                    })
                    .collect(),
            }
        })
        .collect();
    (sections, schemas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outline_lists_every_operation_with_its_parts() {
        let doc = serde_json::to_value(api_doc()).unwrap();
        let (sections, schemas) = outline(&doc);
        let ops: Vec<&Operation> = sections.iter().flat_map(|s| &s.operations).collect();
        assert_eq!(
            ops.len(),
            crate::web::api::openapi::operations_of(api_doc()).len()
        );
        let update = ops
            .iter()
            .find(|o| o.method == "PUT" && o.path == "/api/v1/jobs/{id}")
            .expect("PUT /api/v1/jobs/{id}");
        assert_eq!(update.body.as_ref().map(|b| b.0.as_str()), Some("JobBody"));
        assert!(update
            .params
            .iter()
            .any(|p| p.name == "id" && p.location == "path"));
        assert!(update.responses.iter().any(|r| r.status == "404"
            && r.schema == "ApiErrorBody"
            && r.target == "ApiErrorBody"));
        assert!(ops
            .iter()
            .any(|o| o.path.ends_with("/auth/login") && o.public));
        assert!(schemas
            .iter()
            .any(|s| s.name == "JobView" && !s.properties.is_empty()));
    }

    /// The descriptions of the same parameters in two languages, side by side.
    fn descriptions<'a>(
        english: &'a [Param],
        chinese: &'a [Param],
    ) -> impl Iterator<Item = (&'a String, &'a String)> {
        english
            .iter()
            .zip(chinese)
            .map(|(x, y)| (&x.description, &y.description))
    }

    #[test]
    fn every_summary_tag_and_description_has_its_chinese() {
        for table in [TEXTS_ZH, TAGS_ZH, SCHEMA_TEXTS_ZH] {
            for pair in table.windows(2) {
                assert!(pair[0].0 < pair[1].0, "not sorted: {:?}", pair[1].0);
            }
        }
        let doc = serde_json::to_value(api_doc()).unwrap();
        let (english, english_schemas) = outline(&doc);
        let (mut chinese, mut chinese_schemas) = outline(&doc);
        in_chinese(&mut chinese, &mut chinese_schemas);
        let mut missing = Vec::new();
        for (en, zh) in english_schemas.iter().zip(&chinese_schemas) {
            let texts = std::iter::once((&en.description, &zh.description))
                .chain(descriptions(&en.properties, &zh.properties));
            for (x, y) in texts {
                if !x.is_empty() && x == y {
                    missing.push(format!("{}: {x}", en.name));
                }
            }
        }
        for (en, zh) in english.iter().zip(&chinese) {
            if en.title == zh.title {
                missing.push(en.title.clone());
            }
            for (a, b) in en.operations.iter().zip(&zh.operations) {
                let texts = std::iter::once((&a.summary, &b.summary))
                    .chain(descriptions(&a.params, &b.params))
                    .chain(
                        a.responses
                            .iter()
                            .zip(&b.responses)
                            .map(|(x, y)| (&x.description, &y.description)),
                    );
                for (x, y) in texts {
                    if !x.is_empty() && x == y {
                        missing.push(x.clone());
                    }
                }
            }
        }
        missing.sort();
        missing.dedup();
        assert!(missing.is_empty(), "no Chinese for: {missing:#?}");
    }

    #[test]
    fn schema_names_read_well() {
        let v = serde_json::json!({"type": "array", "items": {"$ref": "#/components/schemas/X"}});
        assert_eq!(schema_name(&v), "X[]");
        let v = serde_json::json!({"type": ["integer", "null"], "format": "int64"});
        assert_eq!(schema_name(&v), "integer | null (int64)");
    }
}
