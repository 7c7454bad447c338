//! How one changed field reads in the audit log: times in the reader's zone (the page's script
//! turns `data-ms` into local time), and a script or other multi-line text as the lines that
//! changed, not one run-together line.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::utc_text;

/// Unchanged lines kept around each change; longer unchanged runs are folded.
const CONTEXT_LINES: usize = 2;

/// One side of a change as shown.
pub(super) enum Shown {
    /// Plain text (`—` for nothing).
    Text(String),
    /// An instant: epoch ms and its UTC text, for the page to show in the reader's zone.
    Time(i64, String),
}

/// One line of a multi-line change.
pub(super) struct DiffLine {
    /// `" "`, `"-"` or `"+"`; `"…"` where unchanged lines were left out.
    pub mark: &'static str,
    /// The line (empty for `"…"`).
    pub text: String,
}

/// One changed field.
pub(super) struct FieldChange {
    pub field: String,
    pub before: Shown,
    pub after: Shown,
    /// For multi-line text: the lines that changed, with a little context.
    pub lines: Vec<DiffLine>,
}

impl FieldChange {
    /// The change of `field` from the audit entry's `{before, after}` pair.
    pub(super) fn of(field: String, pair: &Value) -> FieldChange {
        let (before, after) = (&pair["before"], &pair["after"]);
        let lines = match (before, after) {
            (Value::String(b), Value::String(a)) if b.contains('\n') || a.contains('\n') => {
                line_diff(b, a)
            }
            // a script set or cleared: every line added or removed
            (Value::Null, Value::String(a)) if a.contains('\n') => line_diff("", a),
            (Value::String(b), Value::Null) if b.contains('\n') => line_diff(b, ""),
            _ => Vec::new(),
        };
        FieldChange {
            before: shown(&field, before),
            after: shown(&field, after),
            field,
            lines,
        }
    }
}

/// Whether `field` names an instant (`addTime`, `glueUpdatetime`, `cordonedSince`, …).
fn is_time_field(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    lower.ends_with("time") || lower.ends_with("since") || lower.ends_with("at")
}

/// A JSON value as a person reads it: strings without quotes, `null` as a dash, epoch ms of a
/// time field as a time.
fn shown(field: &str, v: &Value) -> Shown {
    match v {
        Value::Null => Shown::Text("—".into()),
        Value::String(s) => Shown::Text(s.clone()),
        // after 2001-09-09: a time, not a count that happens to sit in such a field
        Value::Number(n)
            if is_time_field(field) && n.as_i64().is_some_and(|ms| ms > 1e12 as i64) =>
        {
            let ms = n.as_i64().unwrap_or_default();
            Shown::Time(ms, utc_text(ms))
        }
        other => Shown::Text(other.to_string()),
    }
}

/// The lines of `before` → `after` that changed, with [`CONTEXT_LINES`] around each change.
fn line_diff(before: &str, after: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if i > 0 {
            out.push(DiffLine {
                mark: "…",
                text: String::new(),
            });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let mark = match change.tag() {
                    ChangeTag::Equal => " ",
                    ChangeTag::Delete => "-",
                    ChangeTag::Insert => "+",
                };
                let text = change.value().trim_end_matches(['\n', '\r']).to_string();
                out.push(DiffLine { mark, text });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scripts_change_line_by_line_with_context() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 10\n", "line ten\n");
        let change = FieldChange::of(
            "glueSource".into(),
            &json!({"before": before, "after": after}),
        );
        let lines: Vec<(&str, &str)> = change
            .lines
            .iter()
            .map(|l| (l.mark, l.text.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (" ", "line 8"),
                (" ", "line 9"),
                ("-", "line 10"),
                ("+", "line ten"),
                (" ", "line 11"),
                (" ", "line 12"),
            ]
        );
        // a new script shows all its lines as added
        let created = FieldChange::of(
            "glueSource".into(),
            &json!({"before": null, "after": "a\nb\n"}),
        );
        assert_eq!(
            created.lines.iter().map(|l| l.mark).collect::<Vec<_>>(),
            ["+", "+"]
        );
        // one-line values are shown as they are
        let plain = FieldChange::of("jobDesc".into(), &json!({"before": "a", "after": "b"}));
        assert!(plain.lines.is_empty());
    }

    #[test]
    fn instants_are_times_and_other_numbers_stay_numbers() {
        let change = FieldChange::of(
            "addTime".into(),
            &json!({"before": null, "after": 1_764_633_600_000i64}),
        );
        assert!(
            matches!(change.after, Shown::Time(1_764_633_600_000, ref t) if t.starts_with("2025-12-02"))
        );
        let count = FieldChange::of("executorTimeout".into(), &json!({"before": 0, "after": 30}));
        assert!(matches!(count.after, Shown::Text(ref t) if t == "30"));
        let small = FieldChange::of("retryAt".into(), &json!({"before": 0, "after": 5}));
        assert!(matches!(small.after, Shown::Text(ref t) if t == "5"));
    }
}
