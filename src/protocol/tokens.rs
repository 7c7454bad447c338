//! The shared access token: which values may not be used, and how two are compared.

/// Tokens published in XXL-JOB's documentation and sample configurations; a deployment that
/// kept one is as open as one without a token, so both sides refuse them.
pub const WELL_KNOWN_TOKENS: &[&str] = &["default_token"];

/// Why an access token cannot be used, or `None` when it can.
pub fn unusable_token(token: &str) -> Option<&'static str> {
    let t = token.trim();
    if t.is_empty() {
        Some("the access token is empty")
    } else if WELL_KNOWN_TOKENS.iter().any(|k| k.eq_ignore_ascii_case(t)) {
        Some("the access token is XXL-JOB's published default, which anyone can send")
    } else {
        None
    }
}

/// Compares secrets without leaking through timing where they differ (only whether the lengths
/// differ, which a token's length does not give away in any useful way).
pub fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_exactly_and_published_ones_are_unusable() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "abcd"));
        assert!(unusable_token("default_token").is_some());
        assert!(unusable_token(" DEFAULT_TOKEN ").is_some());
        assert!(unusable_token("  ").is_some());
        assert!(unusable_token("k3f9Qx1").is_none());
    }
}
