//! `/kill` and `/idleBeat`: calls about one job's worker, by job id.

use serde::{Deserialize, Serialize};

use super::lenient;

/// Body of `/kill`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct KillParam {
    /// The job whose worker is stopped.
    #[serde(deserialize_with = "lenient::int32")]
    pub job_id: i32,
}

/// Body of `/idleBeat`, used by BUSYOVER routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct IdleBeatParam {
    /// The job whose worker must be idle.
    #[serde(deserialize_with = "lenient::int32")]
    pub job_id: i32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;
    use serde_json::json;

    #[test]
    fn kill_answers() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200,"msg":"Success"}"#);
        assert!(r.is_success());

        let observed = r#"{"code":200,"msg":"Success","data":"job thread already killed."}"#;
        let r: StringReturn = envelope_roundtrip(observed);
        assert!(r.is_success());
        assert_eq!(r.msg.as_deref(), Some(MSG_SUCCESS));
        assert_eq!(r.payload.as_deref(), Some(MSG_JOB_ALREADY_KILLED));
        let ours = StringReturn::success_with(MSG_JOB_ALREADY_KILLED.to_string());
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            json!({"code":200,"msg":"Success","content":"job thread already killed.","data":"job thread already killed."})
        );
        // The same answer as a payload-agnostic envelope.
        let any: AnyReturn = decode(observed.as_bytes()).unwrap();
        assert_eq!(any.payload, Some(json!("job thread already killed.")));
    }

    #[test]
    fn kill_2_4_answer_has_message_only() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200,"msg":"job thread already killed."}"#);
        assert!(r.is_success());
        assert_eq!(r.msg.as_deref(), Some(MSG_JOB_ALREADY_KILLED));
    }

    #[test]
    fn kill_and_idle_beat_bodies() {
        for body in [r#"{"jobId":1}"#, r#"{"jobId":6}"#] {
            let k: KillParam = decode(body.as_bytes()).unwrap();
            assert_eq!(serde_json::to_value(k).unwrap(), v(body));
            let i: IdleBeatParam = decode(body.as_bytes()).unwrap();
            assert_eq!(i.job_id, k.job_id);
            assert_eq!(serde_json::to_value(i).unwrap(), v(body));
        }
        let k: KillParam = decode(br#"{"jobId":6}"#).unwrap();
        assert_eq!(k, KillParam { job_id: 6 });
        assert_eq!(
            format!("{MSG_KILLED_BY_ADMIN}{MSG_SUFFIX_RUNNING_KILLED}"),
            "scheduling center kill job. [job running, killed]"
        );
        assert_eq!(
            format!("{MSG_KILLED_BY_ADMIN}{MSG_SUFFIX_QUEUED_KILLED}"),
            "scheduling center kill job. [job not executed, in the job queue, killed.]"
        );
    }
}
