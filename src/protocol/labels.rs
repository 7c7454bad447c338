//! Executor labels (`region=eu`, `gpu=true`): what an executor registers with, and what a job's
//! `executorSelector` chooses executors by. A jobwheel extension of the registry call.

use std::collections::BTreeMap;

/// An executor's labels, by key.
pub type Labels = BTreeMap<String, String>;

/// The most labels one executor registers; more are a configuration mistake.
pub const LABELS_MAX: usize = 32;
/// The longest label key or value, in characters (Kubernetes' bound).
pub const LABEL_PART_MAX: usize = 63;

/// Why `key` cannot be a label key, if it cannot: 1 to 63 characters of letters, digits, `.`,
/// `_`, `-` and `/`, starting and ending with a letter or digit.
pub fn label_key_problem(key: &str) -> Option<String> {
    part_problem("key", key, |c| matches!(c, '.' | '_' | '-' | '/'))
}

/// Why `value` cannot be a label value, if it cannot: as a key, without `/`.
pub fn label_value_problem(value: &str) -> Option<String> {
    part_problem("value", value, |c| matches!(c, '.' | '_' | '-'))
}

fn part_problem(what: &str, text: &str, punctuation: impl Fn(char) -> bool) -> Option<String> {
    let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if text.is_empty() || text.chars().count() > LABEL_PART_MAX {
        Some(format!(
            "a label {what} has 1 to {LABEL_PART_MAX} characters, not {}",
            text.chars().count()
        ))
    } else if let Some(c) = text
        .chars()
        .find(|c| !c.is_ascii_alphanumeric() && !punctuation(*c))
    {
        Some(format!("a label {what} may not contain '{c}' ('{text}')"))
    } else if !edge_ok(text.chars().next()) || !edge_ok(text.chars().last()) {
        Some(format!(
            "a label {what} starts and ends with a letter or digit ('{text}')"
        ))
    } else {
        None
    }
}

/// `key=value` → the pair, checked.
pub fn parse_label(text: &str) -> Result<(String, String), String> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(format!("expected KEY=VALUE, e.g. gpu=true, not '{text}'"));
    };
    let (key, value) = (key.trim(), value.trim());
    if let Some(why) = label_key_problem(key).or_else(|| label_value_problem(value)) {
        return Err(why);
    }
    Ok((key.to_string(), value.to_string()))
}

/// Comma-separated `key=value` pairs → the labels, checked (a key given twice is refused).
pub fn parse_labels(text: &str) -> Result<Labels, String> {
    let mut labels = Labels::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = parse_label(part)?;
        if labels.insert(key.clone(), value).is_some() {
            return Err(format!("label '{key}' is given twice"));
        }
    }
    if labels.len() > LABELS_MAX {
        return Err(format!("at most {LABELS_MAX} labels, not {}", labels.len()));
    }
    Ok(labels)
}

/// The labels of a registration as an admin keeps them: the well-formed ones, at most
/// [`LABELS_MAX`]; anything else is dropped.
pub fn usable_labels(labels: Labels) -> Labels {
    labels
        .into_iter()
        .filter(|(k, v)| label_key_problem(k).is_none() && label_value_problem(v).is_none())
        .take(LABELS_MAX)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_checked_as_kubernetes_checks_them() {
        assert_eq!(
            parse_labels(" gpu=true, region=eu-west.1 ,zone/a=x_y").unwrap(),
            Labels::from([
                ("gpu".into(), "true".into()),
                ("region".into(), "eu-west.1".into()),
                ("zone/a".into(), "x_y".into()),
            ])
        );
        assert!(parse_labels("").unwrap().is_empty());
        for (bad, why) in [
            ("gpu", "KEY=VALUE"),
            ("=x", "1 to 63"),
            ("gpu=", "1 to 63"),
            ("g pu=x", "may not contain ' '"),
            ("-gpu=x", "starts and ends"),
            ("gpu=x/y", "may not contain '/'"),
            ("gpu=a,gpu=b", "twice"),
        ] {
            let err = parse_labels(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert!(parse_labels(&many.join(","))
            .unwrap_err()
            .contains("at most 32"));
        assert!(label_key_problem(&"k".repeat(64)).is_some());
    }

    #[test]
    fn an_admin_keeps_only_usable_labels() {
        let sent = Labels::from([
            ("ok".into(), "yes".into()),
            ("bad key".into(), "x".into()),
            ("k".into(), "".into()),
        ]);
        assert_eq!(
            usable_labels(sent),
            Labels::from([("ok".into(), "yes".into())])
        );
    }
}
