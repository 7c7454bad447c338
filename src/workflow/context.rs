//! A run's context: the outputs of its nodes merged in the order they ended, what node
//! parameters refer to (`${context.KEY}`, dotted paths, and `${workflow.params}`), and the limits
//! that keep it small. An output over its limit fails its node; nothing is truncated.

use serde_json::{Map, Value};

/// Default most bytes one node's output may have.
pub const NODE_OUTPUT_MAX: usize = 64 * 1024;
/// Default most bytes a run's whole context may have.
pub const RUN_CONTEXT_MAX: usize = 1024 * 1024;

/// The limits on outputs and contexts (settings `--workflow-node-output-max`,
/// `--workflow-context-max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextLimits {
    /// Most bytes of one node's output.
    pub node_output: usize,
    /// Most bytes of a run's context.
    pub run_context: usize,
}

impl Default for ContextLimits {
    fn default() -> Self {
        ContextLimits {
            node_output: NODE_OUTPUT_MAX,
            run_context: RUN_CONTEXT_MAX,
        }
    }
}

/// A node's output: its result message when that, trimmed, is a JSON object.
pub fn output_of(message: &str) -> Option<Map<String, Value>> {
    let text = message.trim();
    if !text.starts_with('{') {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Characters an executor cuts every result message to (then adds `...`), as Java's does.
pub const EXECUTOR_MESSAGE_CUT: usize = 50_000;

/// Whether `message` is a JSON object its executor cut: it opens like one, does not parse, and
/// ends with the executor's `...` after 50,000 characters. Such a node fails: its output is lost.
pub fn cut_by_executor(message: &str) -> bool {
    let text = message.trim();
    text.starts_with('{')
        && text.ends_with("...")
        && text.chars().count() == EXECUTOR_MESSAGE_CUT + 3
        && output_of(text).is_none()
}

/// `context` with `output`'s keys merged in (a later output's key replaces an earlier one's),
/// or why it cannot be: the output or the merged context is over its limit.
pub fn merged(
    context: &str,
    output: &Map<String, Value>,
    limits: ContextLimits,
) -> Result<String, String> {
    let size = serde_json::to_string(output)
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if size > limits.node_output {
        return Err(format!(
            "the node's output has {size} bytes, more than the limit of {} (--workflow-node-output-max); it is not cut",
            limits.node_output
        ));
    }
    let mut map = match serde_json::from_str::<Value>(context) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for (k, v) in output {
        map.insert(k.clone(), v.clone());
    }
    let text = Value::Object(map).to_string();
    if text.len() > limits.run_context {
        return Err(format!(
            "with this node's output the run's context would have {} bytes, more than the limit of {} (--workflow-context-max)",
            text.len(),
            limits.run_context
        ));
    }
    Ok(text)
}

/// The value at `path` (dotted: `a.b.c`, array items by index) in `context`.
fn lookup<'a>(context: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(context, |at, part| match at {
        Value::Object(map) => map.get(part),
        Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// `template` with each `${context.PATH}` replaced by that value of `context` (a string as it
/// is, anything else as JSON) and `${workflow.params}` by `params`; any other `${…}` is left as
/// it is (a script's own variables). A path the context does not have is an error naming it,
/// and so is a result longer than `max` bytes: found as it grows, so a template repeating a
/// large value never builds more than `max` bytes.
pub fn substitute(
    template: &str,
    context: &str,
    params: &str,
    max: usize,
) -> Result<String, String> {
    let too_long = || format!("the parameter has more than {max} bytes with the context's values");
    if template.len() > max {
        return Err(too_long());
    }
    if !template.contains("${") {
        return Ok(template.to_string());
    }
    let context: Value = serde_json::from_str(context).unwrap_or(Value::Object(Map::new()));
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        if out.len() > max {
            return Err(too_long());
        }
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = after[..end].trim();
        if name == "workflow.params" {
            out.push_str(params);
        } else if let Some(path) = name.strip_prefix("context.") {
            match lookup(&context, path) {
                Some(Value::String(s)) => out.push_str(s),
                Some(v) => out.push_str(&v.to_string()),
                None => {
                    return Err(format!(
                        "${{context.{path}}}: the run's context has no '{path}'"
                    ))
                }
            }
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if out.len() > max {
        return Err(too_long());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_json_objects_are_outputs() {
        assert_eq!(output_of(r#" {"rows": 3} "#).unwrap()["rows"], 3);
        for not in ["", "done", "[1,2]", "42", "{broken", r#""{}""#] {
            assert!(output_of(not).is_none(), "{not}");
        }
    }

    #[test]
    fn an_output_cut_by_its_executor_is_recognised() {
        let whole = format!("{{\"rows\": \"{}\"}}", "x".repeat(60_000));
        let cut: String = whole.chars().take(EXECUTOR_MESSAGE_CUT).collect::<String>() + "...";
        assert!(cut_by_executor(&cut));
        assert!(!cut_by_executor(&whole));
        assert!(!cut_by_executor("{\"a\": 1}"));
        assert!(!cut_by_executor(&"y".repeat(EXECUTOR_MESSAGE_CUT + 3)));
    }

    #[test]
    fn outputs_merge_in_order_within_limits() {
        let limits = ContextLimits::default();
        let a = output_of(r#"{"rows": 3, "who": "a"}"#).unwrap();
        let b = output_of(r#"{"who": "b"}"#).unwrap();
        let ctx = merged("{}", &a, limits).unwrap();
        let ctx = merged(&ctx, &b, limits).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&ctx).unwrap(),
            json!({"rows": 3, "who": "b"})
        );
        let small = ContextLimits {
            node_output: 12,
            run_context: 30,
        };
        let err = merged("{}", &a, small).unwrap_err();
        assert!(err.contains("more than the limit of 12"), "{err}");
        let err = merged(r#"{"big": "xxxxxxxxxxxxxxxxxxxxxxx"}"#, &b, small).unwrap_err();
        assert!(err.contains("context would have"), "{err}");
    }

    #[test]
    fn parameters_take_context_values_and_the_run_params() {
        const MAX: usize = 1_000;
        let ctx = r#"{"rows": 42, "name": "x", "db": {"host": "h", "ports": [1, 2]}, "ok": true}"#;
        assert_eq!(
            substitute("count=${context.rows} n=${context.name}", ctx, "", MAX).unwrap(),
            "count=42 n=x"
        );
        assert_eq!(
            substitute("${context.db.host}:${context.db.ports.1}", ctx, "", MAX).unwrap(),
            "h:2"
        );
        assert_eq!(
            substitute("${context.db}", ctx, "", MAX).unwrap(),
            r#"{"host":"h","ports":[1,2]}"#
        );
        assert_eq!(
            substitute("p=${workflow.params}", ctx, "--all", MAX).unwrap(),
            "p=--all"
        );
        assert_eq!(
            substitute("$HOME ${HOME} ${x", ctx, "", MAX).unwrap(),
            "$HOME ${HOME} ${x"
        );
        let err = substitute("${context.missing}", ctx, "", MAX).unwrap_err();
        assert!(err.contains("no 'missing'"), "{err}");
    }

    #[test]
    fn a_parameter_that_grows_past_the_limit_is_refused_as_it_grows() {
        let template = "${workflow.params}".repeat(3_600);
        let params = "p".repeat(65_535);
        let err = substitute(&template, "{}", &params, 65_535).unwrap_err();
        assert!(err.contains("more than 65535 bytes"), "{err}");
        let ctx = json!({"big": "b".repeat(1_000)}).to_string();
        let err = substitute(&"${context.big}".repeat(100), &ctx, "", 10_000).unwrap_err();
        assert!(err.contains("more than 10000 bytes"), "{err}");
        let fits = substitute(&"${context.big}".repeat(10), &ctx, "", 10_000).unwrap();
        assert_eq!(fits.len(), 10_000);
        assert!(substitute(&"x".repeat(11), "{}", "", 10).is_err());
    }
}
