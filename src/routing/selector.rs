//! A job's `executorSelector`: which executors of its group it may run on, by their labels.
//! Terms are comma-separated and all must hold: `key=v`, `key!=v`, `key in (a,b)`, `key exists`.
//! An executor without labels (a Java one) satisfies no term but `key!=v`: a required label is
//! never assumed.

use std::fmt;

use crate::protocol::{label_key_problem, label_value_problem, Labels};

/// The longest selector accepted, in characters (the column's width).
pub const SELECTOR_MAX: usize = 512;

/// One term of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    Exists(String),
}

/// A parsed selector; the empty one matches every executor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(Vec<Term>);

impl Selector {
    /// Parses `text`; the error says which term is wrong and how.
    pub fn parse(text: &str) -> Result<Selector, String> {
        if text.chars().count() > SELECTOR_MAX {
            return Err(format!("a selector has at most {SELECTOR_MAX} characters"));
        }
        let terms = split_terms(text)?
            .into_iter()
            .map(parse_term)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selector(terms))
    }

    /// The selector of `{"gpu": "true"}`: each pair an equality term.
    pub fn from_pairs(pairs: &Labels) -> Result<Selector, String> {
        let terms = pairs
            .iter()
            .map(|(k, v)| {
                checked_key(k)?;
                checked_value(v)?;
                Ok(Term::Equals(k.clone(), v.clone()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let selector = Selector(terms);
        if selector.to_string().chars().count() > SELECTOR_MAX {
            return Err(format!("a selector has at most {SELECTOR_MAX} characters"));
        }
        Ok(selector)
    }

    /// Whether it selects nothing out (no terms).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether an executor with `labels` is selected.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.0.iter().all(|term| match term {
            Term::Equals(k, v) => labels.get(k) == Some(v),
            Term::NotEquals(k, v) => labels.get(k) != Some(v),
            Term::In(k, vs) => labels.get(k).is_some_and(|have| vs.contains(have)),
            Term::Exists(k) => labels.contains_key(k),
        })
    }
}

/// The canonical text: terms joined by `, `, as stored and shown.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, term) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match term {
                Term::Equals(k, v) => write!(f, "{k}={v}")?,
                Term::NotEquals(k, v) => write!(f, "{k}!={v}")?,
                Term::In(k, vs) => write!(f, "{k} in ({})", vs.join(","))?,
                Term::Exists(k) => write!(f, "{k} exists")?,
            }
        }
        Ok(())
    }
}

/// The terms of `text`: split at commas outside parentheses.
fn split_terms(text: &str) -> Result<Vec<&str>, String> {
    let (mut terms, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' if depth == 0 => depth = 1,
            '(' => return Err(format!("nested '(' in '{}'", text.trim())),
            ')' if depth == 1 => depth = 0,
            ')' => return Err(format!("')' without '(' in '{}'", text.trim())),
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(format!("'(' without ')' in '{}'", text.trim()));
    }
    terms.push(&text[start..]);
    let terms: Vec<&str> = terms.into_iter().map(str::trim).collect();
    if terms.len() == 1 && terms[0].is_empty() {
        return Ok(Vec::new());
    }
    match terms.iter().find(|t| t.is_empty()) {
        Some(_) => Err("an empty term (two commas, or one at an end)".to_string()),
        None => Ok(terms),
    }
}

fn parse_term(term: &str) -> Result<Term, String> {
    if let Some(key) = term.strip_suffix(" exists") {
        return Ok(Term::Exists(checked_key(key.trim())?));
    }
    if let Some((key, values)) = term.split_once(" in ") {
        let list = values
            .trim()
            .strip_prefix('(')
            .and_then(|v| v.strip_suffix(')'))
            .ok_or_else(|| {
                format!("'{term}': the values of 'in' go in parentheses: key in (a,b)")
            })?;
        let values = list
            .split(',')
            .map(|v| checked_value(v.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Term::In(checked_key(key.trim())?, values));
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(Term::NotEquals(
            checked_key(key.trim())?,
            checked_value(value.trim())?,
        ));
    }
    if let Some((key, value)) = term.split_once('=') {
        return Ok(Term::Equals(
            checked_key(key.trim())?,
            checked_value(value.trim())?,
        ));
    }
    Err(format!(
        "'{term}' is not a term: use key=value, key!=value, key in (a,b) or key exists"
    ))
}

fn checked_key(key: &str) -> Result<String, String> {
    match label_key_problem(key) {
        Some(why) => Err(why),
        None => Ok(key.to_string()),
    }
}

fn checked_value(value: &str) -> Result<String, String> {
    match label_value_problem(value) {
        Some(why) => Err(why),
        None => Ok(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_term_form_selects_as_written() {
        let gpu_eu = labels(&[("gpu", "true"), ("region", "eu")]);
        let cpu_us = labels(&[("region", "us")]);
        let none = Labels::new();
        let cases = [
            ("gpu=true", [true, false, false]),
            ("gpu!=true", [false, true, true]),
            ("region in (eu, asia)", [true, false, false]),
            ("region exists", [true, true, false]),
            ("region in (eu,us), gpu!=false", [true, true, false]),
            ("", [true, true, true]),
        ];
        for (text, expected) in cases {
            let s = Selector::parse(text).unwrap();
            let got = [&gpu_eu, &cpu_us, &none].map(|l| s.matches(l));
            assert_eq!(got, expected, "{text}");
        }
    }

    #[test]
    fn the_canonical_text_parses_back_to_the_same_selector() {
        let s = Selector::parse(" gpu = true ,region in ( eu , us ),zone!=a,ssd exists").unwrap();
        assert_eq!(
            s.to_string(),
            "gpu=true, region in (eu,us), zone!=a, ssd exists"
        );
        assert_eq!(Selector::parse(&s.to_string()).unwrap(), s);
        let pairs = labels(&[("gpu", "true")]);
        assert_eq!(
            Selector::from_pairs(&pairs).unwrap().to_string(),
            "gpu=true"
        );
    }

    #[test]
    fn malformed_selectors_say_what_is_wrong() {
        for (bad, why) in [
            ("gpu", "not a term"),
            ("gpu=true,,x=y", "empty term"),
            ("region in eu", "parentheses"),
            ("region in (eu", "without ')'"),
            ("region in ((eu))", "nested"),
            ("a)=b", "without '('"),
            ("g pu=x", "may not contain ' '"),
            ("gpu=", "1 to 63"),
            ("region in (eu,)", "1 to 63"),
        ] {
            let err = Selector::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(Selector::parse(&"a=b,".repeat(200)).is_err());
        let bad_pair = labels(&[("bad key", "x")]);
        assert!(Selector::from_pairs(&bad_pair).is_err());
    }
}
