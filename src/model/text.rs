//! Text as every backend can hold it: what is refused, and what executors send made storable.

/// Why a text cannot be stored as it is, or `None` when every backend can hold it.
///
/// PostgreSQL refuses a NUL character in any text column (MySQL and SQLite keep it, but a value
/// one backend refuses is refused on all, so data moves between them). Rust strings are valid
/// UTF-8, which all three accept; lengths are checked field by field where the value is read.
pub fn unstorable(text: &str) -> Option<String> {
    if !text.as_bytes().contains(&0) {
        return None;
    }
    text.chars().position(|c| c == '\0').map(|at| {
        format!(
            "contains a NUL character (\\u0000) at character {}, which the database cannot store",
            at + 1
        )
    })
}

/// Text an executor sent, made storable: each NUL becomes U+FFFD (the replacement character)
/// and the text is cut to its first `max_chars` characters. What executors say is kept as far as
/// every backend can hold it, rather than refused and lost with the rows written beside it.
pub fn storable_text(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    let cut = match text.char_indices().nth(max_chars) {
        Some((at, _)) => &text[..at],
        None => text,
    };
    if cut.as_bytes().contains(&0) {
        std::borrow::Cow::Owned(cut.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(cut)
    }
}

/// Longest message of a run record (`trigger_msg`, `handle_msg`) in characters, XXL-JOB's limit
/// on `handle_msg`: four bytes a character still fit MySQL's TEXT (65,535 bytes).
pub const MESSAGE_MAX_CHARS: usize = 15_000;

/// Whether [`storable_text`] would change `text`.
pub fn needs_storable(text: &str, max_chars: usize) -> bool {
    // a text of at most max_chars bytes has at most max_chars characters
    text.as_bytes().contains(&0)
        || (text.len() > max_chars && text.chars().nth(max_chars).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_named_where_refused_and_replaced_where_kept() {
        assert_eq!(unstorable("fine"), None);
        let why = unstorable("ab\0c").unwrap();
        assert!(why.contains("at character 3"), "{why}");
        assert_eq!(storable_text("a\0b\0", 10), "a\u{FFFD}b\u{FFFD}");
        assert!(matches!(
            storable_text("plain", 10),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn messages_are_cut_on_characters_not_bytes() {
        assert_eq!(storable_text("é中xyz", 2), "é中");
        assert_eq!(storable_text("abc", 3), "abc");
        assert!(!needs_storable("é中", 2), "two characters in six bytes");
        assert!(needs_storable("é中x", 2));
        assert!(needs_storable("\0", 5));
        let long = "字".repeat(MESSAGE_MAX_CHARS + 1);
        let kept = storable_text(&long, MESSAGE_MAX_CHARS);
        assert_eq!(kept.chars().count(), MESSAGE_MAX_CHARS);
        assert!(kept.len() <= 65_535, "fits MySQL's TEXT");
    }
}
