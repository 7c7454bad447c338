//! The builder's settings checked before anything starts: each refusal names the setting.

use super::*;

impl ExecutorBuilder {
    /// The labels, each checked, a key given twice refused.
    pub(super) fn checked_labels(&self) -> Result<Labels, ExecutorError> {
        let mut labels = Labels::new();
        for (key, value) in &self.labels {
            if let Some(why) = label_key_problem(key).or_else(|| label_value_problem(value)) {
                return Err(ExecutorError::Setting(format!(
                    "label {key}={value}: {why}"
                )));
            }
            if labels.insert(key.clone(), value.clone()).is_some() {
                return Err(ExecutorError::Setting(format!(
                    "label '{key}' is given twice"
                )));
            }
        }
        if labels.len() > LABELS_MAX {
            return Err(ExecutorError::Setting(format!(
                "at most {LABELS_MAX} labels, not {}",
                labels.len()
            )));
        }
        Ok(labels)
    }

    /// Every setting usable, or the first that is not, named.
    pub(super) fn validate(&self) -> Result<(), ExecutorError> {
        match &self.access_token {
            Some(token) => {
                if let Some(why) = unusable_token(token) {
                    return Err(ExecutorError::Setting(format!(
                        "{why}; use the admin's own token"
                    )));
                }
            }
            None if self.insecure => {}
            None => return Err(ExecutorError::Setting(NO_TOKEN_LIBRARY.to_string())),
        }
        self.checked_labels()?;
        if self.app_name.trim().is_empty() || self.app_name.len() > 64 {
            return Err(ExecutorError::Setting(format!(
                "app name '{}' must have 1 to 64 characters",
                self.app_name
            )));
        }
        for a in &self.admin_addresses {
            if !(a.starts_with("http://") || a.starts_with("https://")) {
                return Err(ExecutorError::Setting(format!(
                    "admin address '{a}' must start with http:// or https://"
                )));
            }
        }
        if let Some(a) = &self.address {
            if !(a.starts_with("http://") || a.starts_with("https://")) {
                return Err(ExecutorError::Setting(format!(
                    "address '{a}' must start with http:// or https://"
                )));
            }
        }
        if self.max_concurrent_runs > MAX_CONCURRENT_RUNS {
            return Err(ExecutorError::Setting(format!(
                "max_concurrent_runs {} is more than {MAX_CONCURRENT_RUNS}",
                self.max_concurrent_runs
            )));
        }
        if self.idle_timeout.is_zero() {
            return Err(ExecutorError::Setting(
                "idle timeout must be positive".to_string(),
            ));
        }
        Ok(())
    }
}
