//! `/api/registry` and `/api/registryRemove`: an executor's registration.

use serde::{Deserialize, Serialize};

use super::lenient;
use super::REGISTRY_GROUP_EXECUTOR;

/// Body of `/api/registry` and `/api/registryRemove`; the admin keys executors by all three fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RegistryParam {
    /// Always `EXECUTOR` from executors.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_group: String,
    /// The executor app name, i.e. the group's `app_name`.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_key: String,
    /// The executor base URL, with the trailing slash the admin appends paths to.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_value: String,
}

impl RegistryParam {
    /// Registration of an executor, so callers cannot get the group name wrong.
    pub fn executor(app_name: impl Into<String>, address: impl Into<String>) -> Self {
        RegistryParam {
            registry_group: REGISTRY_GROUP_EXECUTOR.to_string(),
            registry_key: app_name.into(),
            registry_value: address.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;

    #[test]
    fn registry_body() {
        let body = r#"{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:9999/"}"#;
        let r: RegistryParam = decode(body.as_bytes()).unwrap();
        assert_eq!(r.registry_group, REGISTRY_GROUP_EXECUTOR);
        assert_eq!(r.registry_key, "xxl-job-executor-sample");
        assert_eq!(r.registry_value, "http://127.0.0.1:9999/");
        assert_eq!(
            r,
            RegistryParam::executor("xxl-job-executor-sample", "http://127.0.0.1:9999/")
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), v(body));
    }
}
