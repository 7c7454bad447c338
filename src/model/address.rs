//! Executor addresses: what one may be, and when two spellings name the same executor.

/// Longest executor address: what a run record (`job_log.executor_address`) keeps of it.
pub const EXECUTOR_ADDRESS_MAX: usize = 255;

/// Most addresses a group's list may hold (each at most [`EXECUTOR_ADDRESS_MAX`] characters), on
/// every backend: MySQL keeps the list in a MEDIUMTEXT.
pub const ADDRESS_LIST_MAX: usize = 512;

/// Why `address` cannot be an executor's address, or `None` when it can: an absolute http(s)
/// URL with a host, at most [`EXECUTOR_ADDRESS_MAX`] characters, with no control character or
/// blank (the admin calls it and shows it). One rule for addresses typed by users and for those
/// executors register.
pub fn executor_address_problem(address: &str) -> Option<String> {
    if address.chars().count() > EXECUTOR_ADDRESS_MAX {
        return Some(format!(
            "an executor address must be at most {EXECUTOR_ADDRESS_MAX} characters"
        ));
    }
    if let Some(c) = address
        .chars()
        .find(|c| c.is_control() || c.is_whitespace())
    {
        return Some(format!(
            "an executor address may not contain {} (U+{:04X})",
            if c.is_control() {
                "control characters"
            } else {
                "blanks"
            },
            c as u32
        ));
    }
    let lower = address.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Some(format!(
            "address '{address}' must start with http:// or https://"
        ));
    }
    match url::Url::parse(address) {
        Ok(u) if u.host_str().is_some_and(|h| !h.is_empty()) => None,
        _ => Some(format!("address '{address}' is not a valid URL")),
    }
}

/// An executor address a call got no answer from, which routing leaves out until it beats again
/// or answers a probe (a row of `executor_suspect`, shared by the admins of one database).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorSuspect {
    /// The executor's address.
    pub address: String,
    /// When it was marked, epoch ms.
    pub since: i64,
    /// What the call that marked it met.
    pub reason: String,
    /// The admin (node id) that marked it.
    pub noted_by: String,
    /// Its latest registration beat, epoch ms, if it has a registration.
    pub last_beat: Option<i64>,
}

/// An executor address cordoned for a drain: it gets no new runs, its running ones finish (a row
/// of `executor_cordon`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorCordon {
    /// The address as the administrator gave it.
    pub address: String,
    /// Since when, epoch ms.
    pub since: i64,
    /// Why, as given ("" when none).
    pub reason: String,
    /// Who cordoned it (a username).
    pub by_user: String,
}

/// Longest reason kept with a suspect executor (the column's size on MySQL).
pub const SUSPECT_REASON_MAX: usize = 512;

/// The form two spellings of one executor address share (`http://h:1` and `http://h:1/`), for
/// telling whether an address is one a group has.
pub fn address_key(address: &str) -> String {
    address.trim().trim_end_matches('/').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executor_addresses_are_http_urls_without_control_characters() {
        for good in [
            "http://10.0.0.1:9999/",
            "https://exec.example.com/xxl-job/",
            "HTTP://h:1",
        ] {
            assert_eq!(executor_address_problem(good), None, "{good}");
        }
        for (bad, says) in [
            ("10.0.0.1:9999", "must start with http"),
            ("javascript:alert(1)", "must start with http"),
            ("http://h:1/\r\nX: 1", "control characters"),
            ("http://h :1/", "blanks"),
            ("http://", "not a valid URL"),
        ] {
            let why = executor_address_problem(bad).unwrap_or_default();
            assert!(why.contains(says), "{bad:?}: {why}");
        }
        let long = format!("http://h/{}", "a".repeat(EXECUTOR_ADDRESS_MAX));
        assert!(executor_address_problem(&long).is_some());
    }

    #[test]
    fn spellings_of_one_address_share_a_key() {
        assert_eq!(address_key("http://H:1/"), address_key(" http://h:1 "));
        assert_ne!(address_key("http://h:1/"), address_key("http://h:2/"));
    }
}
