//! The admin's messages in Chinese. The admin words its messages in English (logs, API clients
//! and tests read them so); a reader who chose Chinese gets them through the catalogue, whose
//! English patterns hold `{}` where a message carries its own text (a field, an id, a lower
//! error), put back into the Chinese at `{0}`, `{1}`, ….

use std::borrow::Cow;

use super::messages_zh::MESSAGES_ZH;

/// `message` in Chinese, or unchanged when no pattern matches it. When several patterns match,
/// the one with the most literal text wins (`job {} does not exist` over `{} does not exist`).
pub(super) fn in_chinese(message: &str) -> Cow<'_, str> {
    let mut best: Option<(usize, Vec<&str>, &str)> = None;
    for (pattern, chinese) in MESSAGES_ZH {
        let literal = literal_len(pattern);
        if best.as_ref().is_some_and(|(len, ..)| *len >= literal) {
            continue;
        }
        if let Some(holes) = holes_of(pattern, message) {
            best = Some((literal, holes, chinese));
        }
    }
    match best {
        Some((_, holes, chinese)) => Cow::Owned(fill(chinese, &holes)),
        None => Cow::Borrowed(message),
    }
}

/// The characters of `pattern` outside its holes.
fn literal_len(pattern: &str) -> usize {
    pattern.split("{}").map(|piece| piece.chars().count()).sum()
}

/// What each hole of `pattern` matched in `text` (every hole at least one character), or
/// `None` when `text` is not that message.
fn holes_of<'t>(pattern: &str, text: &'t str) -> Option<Vec<&'t str>> {
    let pieces: Vec<&str> = pattern.split("{}").collect();
    let rest = text.strip_prefix(pieces[0])?;
    let mut holes = Vec::with_capacity(pieces.len() - 1);
    if pieces.len() == 1 {
        return rest.is_empty().then_some(holes);
    }
    match_rest(&pieces[1..], rest, &mut holes).then_some(holes)
}

/// Matches a hole followed by `pieces[0]`, then the rest, trying every place the piece occurs.
fn match_rest<'t>(pieces: &[&str], text: &'t str, holes: &mut Vec<&'t str>) -> bool {
    let (piece, later) = (pieces[0], &pieces[1..]);
    if later.is_empty() {
        let Some(hole) = text.strip_suffix(piece) else {
            return false;
        };
        if hole.is_empty() {
            return false;
        }
        holes.push(hole);
        return true;
    }
    let mut from = 1;
    while from <= text.len() {
        if !text.is_char_boundary(from) {
            from += 1;
            continue;
        }
        let Some(at) = text[from..].find(piece).map(|i| i + from) else {
            return false;
        };
        holes.push(&text[..at]);
        if match_rest(later, &text[at + piece.len()..], holes) {
            return true;
        }
        holes.pop();
        from = at + 1;
    }
    false
}

/// `chinese` with `{0}`, `{1}`, … replaced by the holes' texts.
fn fill(chinese: &str, holes: &[&str]) -> String {
    let mut out =
        String::with_capacity(chinese.len() + holes.iter().map(|h| h.len()).sum::<usize>());
    let mut rest = chinese;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}').unwrap_or(after.len());
        match after[..close]
            .parse::<usize>()
            .ok()
            .and_then(|i| holes.get(i))
        {
            Some(hole) => out.push_str(hole),
            // not a hole: kept as written, braces and all
            None => out.push_str(&rest[open..(open + close + 2).min(rest.len())]),
        }
        rest = after.get(close + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_match_what_the_message_carries() {
        assert_eq!(
            holes_of("{} is required", "jobDesc is required"),
            Some(vec!["jobDesc"])
        );
        assert_eq!(
            holes_of("job {} does not exist", "job 7 does not exist"),
            Some(vec!["7"])
        );
        assert_eq!(holes_of("job {} does not exist", "job  does not"), None);
        assert_eq!(
            holes_of("{} must be {} to {}", "a must be 0 to 5 to 9"),
            Some(vec!["a", "0", "5 to 9"])
        );
        assert_eq!(holes_of("not logged in", "not logged in"), Some(vec![]));
        assert_eq!(holes_of("not logged in", "not logged in!"), None);
        assert_eq!(holes_of("{}: {}", "名字: 太长"), Some(vec!["名字", "太长"]));
    }

    #[test]
    fn the_chinese_puts_the_holes_back_in_its_own_order() {
        assert_eq!(fill("{1} 的 {0}", &["a", "b"]), "b 的 a");
        assert_eq!(fill("无洞", &[]), "无洞");
        assert_eq!(fill("{9} 缺", &["a"]), "{9} 缺");
    }

    #[test]
    fn real_messages_read_in_chinese() {
        assert_eq!(in_chinese("jobDesc is required"), "jobDesc不能为空");
        assert_eq!(
            in_chinese("unknown route strategy 'SOMEWHERE'; allowed: FIRST, LAST"),
            "未知的路由策略 'SOMEWHERE'；可选值：FIRST, LAST"
        );
        assert_eq!(in_chinese("job 7 does not exist"), "任务 7 不存在");
    }

    #[test]
    fn an_unknown_message_stays_english() {
        let text = "a message nobody wrote a pattern for, 42 times";
        assert_eq!(in_chinese(text), text);
    }

    #[test]
    fn the_catalogue_is_sorted_and_each_hole_comes_back_once() {
        for pair in MESSAGES_ZH.windows(2) {
            assert!(
                pair[0].0 < pair[1].0,
                "not sorted or repeated: {:?}",
                pair[1].0
            );
        }
        for (pattern, chinese) in MESSAGES_ZH {
            let holes = pattern.matches("{}").count();
            assert!(literal_len(pattern) >= 8, "too general: {pattern:?}");
            for i in 0..holes {
                assert_eq!(
                    chinese.matches(&format!("{{{i}}}")).count(),
                    1,
                    "{{{i}}} of {pattern:?} in {chinese:?}"
                );
            }
            assert_eq!(
                chinese.matches('{').count(),
                holes,
                "stray braces in {chinese:?}"
            );
            // every pattern translates a message of its own shape
            let sample = pattern.replace("{}", "X1");
            assert_ne!(in_chinese(&sample), sample, "{pattern:?} matches nothing");
        }
    }

    /// Calls that word an API error from a literal at their call site.
    const WORDING_CALLS: [&str; 11] = [
        "ApiError::field(",
        "ApiError::bad_request(",
        "ApiError::not_found(",
        "ApiError::not_found_field(",
        "ApiError::Conflict(",
        "ApiError::Forbidden(",
        "ApiError::Unauthorized(",
        "ApiError::BadGateway(",
        "ApiError::Unavailable(",
        "ApiError::PayloadTooLarge(",
        " problem(",
    ];

    /// Literals that only begin a message another's text completes; the catalogue lists the
    /// whole messages they make.
    const COMPOSED: [&str; 2] = [
        "{why}; choose another",
        "job {id} is a node of workflow {} ({}), {why}",
    ];

    /// Every message the admin words from a literal where it answers an API call reads in
    /// Chinese: a new message without a pattern fails here instead of reaching a Chinese reader
    /// in English. (Messages put together elsewhere are checked by the tests of their pages.)
    #[test]
    fn every_message_worded_at_an_api_call_has_a_pattern() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![root];
        let mut missing = vec![];
        let mut seen = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name == "messages_zh.rs" || name == "tests.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            for call in WORDING_CALLS {
                for (at, _) in code.match_indices(call) {
                    let Some(literal) = longest_literal(&code[at + call.len()..]) else {
                        continue;
                    };
                    let sample = with_holes_filled(&literal);
                    // a field's name, or a message of holes alone, is no wording
                    let words = sample.replace("X1", "");
                    let letters = words.chars().filter(|c| c.is_alphabetic()).count();
                    if COMPOSED.contains(&literal.as_str()) || !words.contains(' ') || letters < 6 {
                        continue;
                    }
                    seen += 1;
                    if in_chinese(&sample) == sample {
                        missing.push(format!("{}: {literal:?}", path.display()));
                    }
                }
            }
        }
        assert!(seen > 100, "the scan found only {seen} messages");
        assert!(
            missing.is_empty(),
            "no Chinese for:\n{}",
            missing.join("\n")
        );
    }

    /// The longest string literal among a call's arguments (`rest` starts after its `(`).
    fn longest_literal(rest: &str) -> Option<String> {
        let mut chars = rest.chars();
        let (mut depth, mut best) = (1, None::<String>);
        while let Some(c) = chars.next() {
            match c {
                '(' => depth += 1,
                ')' if depth == 1 => break,
                ')' => depth -= 1,
                '"' => {
                    let mut literal = String::new();
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => match chars.next() {
                                // a line continuation: the next line's indent is not text
                                Some('\n') => {
                                    let indent =
                                        chars.clone().take_while(|c| c.is_whitespace()).count();
                                    for _ in 0..indent {
                                        chars.next();
                                    }
                                }
                                Some('n') => literal.push('\n'),
                                Some(other) => literal.push(other),
                                None => break,
                            },
                            c => literal.push(c),
                        }
                    }
                    if best.as_ref().is_none_or(|b| b.len() < literal.len()) {
                        best = Some(literal);
                    }
                }
                _ => {}
            }
        }
        best
    }

    /// A format string as a message it makes: each `{…}` one word, `{{` and `}}` braces.
    fn with_holes_filled(format: &str) -> String {
        let mut out = String::new();
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek()) {
                ('{', Some('{')) | ('}', Some('}')) => out.push(chars.next().unwrap_or(c)),
                ('{', _) => {
                    for c in chars.by_ref() {
                        if c == '}' {
                            break;
                        }
                    }
                    out.push_str("X1");
                }
                _ => out.push(c),
            }
        }
        out
    }
}
