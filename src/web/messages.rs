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
}
