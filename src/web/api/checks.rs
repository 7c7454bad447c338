//! Field checks the jobs and the workflows share: enum names, lengths, alarm addresses, and where
//! an alarm webhook may point.

use std::borrow::Cow;

use super::check_address;
use super::error::{ApiError, ApiResult};
use crate::alarm::webhook::ALLOW_PRIVATE_FLAG;
use crate::executor::outbound;
use crate::model::{GlueType, MAX_CONCURRENT_INSTANCES_LIMIT};
use crate::web::AppState;

/// `value` read as the enum `T`, or a 400 naming `field` and the allowed names.
pub(super) fn parse_enum<T: std::str::FromStr>(
    field: impl Into<Cow<'static, str>>,
    value: &str,
) -> ApiResult<T>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse()
        .map_err(|e| ApiError::field(field, format!("{e}")))
}

/// A 400 naming `field` when `value` has more than `max` characters.
pub(super) fn max_chars(field: &'static str, value: &str, max: usize) -> ApiResult<()> {
    if value.chars().count() > max {
        Err(ApiError::field(
            field,
            format!("{field} must be at most {max} characters"),
        ))
    } else {
        Ok(())
    }
}

/// Checks `alarmEmail` (comma-separated addresses) and `alarmWebhook` (an http(s) URL).
pub(super) fn check_alarm_fields(alarm_email: &str, alarm_webhook: &str) -> ApiResult<()> {
    max_chars("alarmEmail", alarm_email, 255)?;
    for email in alarm_email
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let valid = email
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && host.contains('.'));
        if !valid {
            return Err(ApiError::field(
                "alarmEmail",
                format!("'{email}' is not an e-mail address"),
            ));
        }
    }
    max_chars("alarmWebhook", alarm_webhook, 1024)?;
    if !alarm_webhook.is_empty() {
        check_address("alarmWebhook", alarm_webhook)?;
    }
    Ok(())
}

/// How long the check of a webhook's host may wait for its name to resolve.
const WEBHOOK_RESOLVE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Refuses an alarm webhook whose host is (or resolves to) a loopback, private or link-local
/// address unless `--alarm-webhook-allow-private`; the admin posts there. A name that does not
/// resolve now is accepted: it is resolved and checked again at each alarm.
pub(super) async fn check_webhook_target(state: &AppState, webhook: &str) -> ApiResult<()> {
    if webhook.is_empty() || state.settings.alarm_webhook_allow_private {
        return Ok(());
    }
    let Ok(url) = url::Url::parse(webhook) else {
        return Ok(()); // check_alarm_fields named the bad URL already
    };
    let resolved = tokio::time::timeout(WEBHOOK_RESOLVE_WAIT, outbound::resolve(&url)).await;
    if let Ok(Ok(addrs)) = resolved {
        outbound::refuse_private(&url, &addrs, ALLOW_PRIVATE_FLAG)
            .map_err(|why| ApiError::field("alarmWebhook", why))?;
    }
    Ok(())
}

/// A job's or a group's `maxConcurrentInstances`: 0 (no cap) to the limit.
pub(super) fn check_instance_cap(field: &'static str, cap: i32) -> ApiResult<()> {
    if !(0..=MAX_CONCURRENT_INSTANCES_LIMIT).contains(&cap) {
        return Err(ApiError::field(
            field,
            format!("{field} must be 0 (no cap) to {MAX_CONCURRENT_INSTANCES_LIMIT}"),
        ));
    }
    Ok(())
}

/// A script job's source must hold something: an empty one would "succeed" without running.
pub(super) fn check_script_source(glue_type: GlueType, source: &str) -> ApiResult<()> {
    if glue_type != GlueType::Bean && source.trim().is_empty() {
        return Err(ApiError::field(
            "glueSource",
            format!(
                "glueSource must not be empty: a {} job with no script would succeed without doing anything",
                glue_type.as_str()
            ),
        ));
    }
    Ok(())
}
