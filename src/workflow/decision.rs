//! DECISION nodes: a CEL expression (the `cel` crate: a maintained interpreter of Google's Common
//! Expression Language, rather than a parser of our own) over `context` (the run's context) and
//! `workflow.params`, which must evaluate to a boolean.

use serde_json::{json, Value};

/// Deepest nesting of brackets an expression may have.
pub const NESTING_MAX: usize = 32;
/// Stack of the thread that parses and evaluates an expression: the parser recurses deeply (a
/// few dozen nested parentheses take megabytes in a debug build), and an overflow would abort
/// the admin. Only the pages used are ever allocated.
const CEL_STACK: usize = 512 << 20;

/// Runs `work` on a thread of its own with a stack deep enough for any expression of at most
/// `EXPRESSION_MAX` bytes; a panic in the interpreter becomes an error.
fn on_deep_stack<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    std::thread::Builder::new()
        .name("decision".into())
        .stack_size(CEL_STACK)
        .spawn(work)
        .map_err(|e| format!("expression not evaluated: no thread for it ({e})"))?
        .join()
        .map_err(|_| "the expression interpreter failed on this expression".to_string())
}

/// How deep `expression` nests brackets, outside string literals.
fn nesting(expression: &str) -> usize {
    let (mut depth, mut deepest, mut quote, mut escaped) = (0usize, 0usize, None, false);
    for c in expression.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

/// Compiles `expression`, refusing one that nests too deep.
fn compile(expression: &str) -> Result<cel::Program, String> {
    if nesting(expression) > NESTING_MAX {
        return Err(format!(
            "expression nests brackets more than {NESTING_MAX} deep"
        ));
    }
    cel::Program::compile(expression).map_err(|e| format!("expression does not compile: {e}"))
}

/// Why `expression` cannot be compiled (a syntax error, with where), or `None`.
pub fn syntax_error(expression: &str) -> Option<String> {
    syntax_errors(vec![expression.to_string()]).pop().flatten()
}

/// [`syntax_error`] of each of `expressions`, in order, all compiled on one thread.
pub fn syntax_errors(expressions: Vec<String>) -> Vec<Option<String>> {
    let count = expressions.len();
    let found = on_deep_stack(move || {
        expressions
            .iter()
            .map(|e| compile(e).err())
            .collect::<Vec<_>>()
    });
    match found {
        Ok(found) => found,
        Err(why) => vec![Some(why); count],
    }
}

/// The expression's value over the run's `context` (a JSON object's text) and `params`: true
/// or false, or why it has none (it does not compile, fails, or is not a boolean).
pub fn evaluate(expression: &str, context: &str, params: &str) -> Result<bool, String> {
    let (expression, context, params) = (
        expression.to_string(),
        context.to_string(),
        params.to_string(),
    );
    on_deep_stack(move || evaluate_here(&expression, &context, &params))?
}

fn evaluate_here(expression: &str, context: &str, params: &str) -> Result<bool, String> {
    let program = compile(expression)?;
    let context: Value = serde_json::from_str(context).unwrap_or_else(|_| json!({}));
    let mut vars = cel::Context::default();
    vars.add_variable_from_value("context", cel_value(&context));
    vars.add_variable_from_value("workflow", cel_value(&json!({ "params": params })));
    match program.execute(&vars) {
        Ok(cel::Value::Bool(b)) => Ok(b),
        Ok(other) => Err(format!("expression gave {other:?}, not true or false")),
        Err(e) => Err(format!("expression failed: {e}")),
    }
}

/// A JSON value as CEL sees it: whole numbers are `int` (so `context.rows + 1` and
/// `context.rows > 10` work as written), larger ones `uint`, others `double`.
fn cel_value(json: &Value) -> cel::Value {
    match json {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(s.clone().into()),
        Value::Array(items) => {
            cel::Value::List(items.iter().map(cel_value).collect::<Vec<_>>().into())
        }
        Value::Object(map) => {
            let entries: std::collections::HashMap<String, cel::Value> =
                map.iter().map(|(k, v)| (k.clone(), cel_value(v))).collect();
            cel::Value::from(entries)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_read_the_context_and_the_params() {
        let ctx = r#"{"rows": 42, "env": {"name": "prod"}}"#;
        assert_eq!(evaluate("context.rows > 10", ctx, ""), Ok(true));
        assert_eq!(evaluate("context.env.name == 'test'", ctx, ""), Ok(false));
        assert_eq!(evaluate("workflow.params == 'full'", ctx, "full"), Ok(true));
        assert_eq!(evaluate("has(context.missing)", ctx, ""), Ok(false));
    }

    #[test]
    fn the_deepest_expressions_that_fit_are_answered_not_a_crash() {
        let max = super::super::graph::EXPRESSION_MAX;
        let half = (max - 8) / 2;
        let shapes = [
            format!("{}1{}", "(".repeat(NESTING_MAX), ")".repeat(NESTING_MAX)),
            format!("{}1{}", "[".repeat(NESTING_MAX), "]".repeat(NESTING_MAX)),
            format!(
                "{}1{}",
                "size(".repeat(NESTING_MAX),
                ")".repeat(NESTING_MAX)
            ),
            format!("{}true", "!".repeat(max - 4)),
            format!("{}1 == 2", "-".repeat(max - 6)),
            format!("{}1 == 1", "1+".repeat(half)),
            format!("{}true", "true&&".repeat((max - 4) / 6)),
            format!("{}1", "a.".repeat(half)),
        ];
        for e in shapes {
            assert!(e.len() <= max, "{}", e.len());
            let _ = syntax_error(&e);
            let _ = evaluate(&e, "{}", "");
        }
        let deep = format!(
            "{}1{} == 1",
            "(".repeat(NESTING_MAX + 1),
            ")".repeat(NESTING_MAX + 1)
        );
        let err = syntax_error(&deep).unwrap();
        assert!(err.contains("nests"), "{err}");
    }

    #[test]
    fn errors_say_why() {
        assert!(syntax_error("context.rows >").is_some());
        assert!(syntax_error("context.rows > 1").is_none());
        assert_eq!(
            evaluate("context.rows + 1 == 2", r#"{"rows": 1}"#, ""),
            Ok(true)
        );
        let err = evaluate("context.rows + 1", r#"{"rows": 1}"#, "").unwrap_err();
        assert!(err.contains("not true or false"), "{err}");
        let err = evaluate("context.missing == 1", "{}", "").unwrap_err();
        assert!(err.contains("failed"), "{err}");
    }
}
