//! `/run` and `/trigger`: the trigger body, and what an executor checks before it queues one.

use serde::{Deserialize, Serialize};

use super::lenient;
use super::{BlockStrategy, GlueType};

/// Body of `/run` and `/trigger`; strategy and glue type stay raw so unknown values reach the executor's messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TriggerParam {
    /// Job row id; the executor keeps one worker per jobId.
    #[serde(deserialize_with = "lenient::int32")]
    pub job_id: i32,
    /// BEAN handler name (may be empty for glue jobs).
    #[serde(deserialize_with = "lenient::string")]
    pub executor_handler: String,
    /// Job parameter; plural on the wire unlike the database column.
    #[serde(deserialize_with = "lenient::string")]
    pub executor_params: String,
    /// Raw block strategy name; see [`BlockStrategy::parse_or_serial`].
    #[serde(deserialize_with = "lenient::string")]
    pub executor_block_strategy: String,
    /// Timeout in seconds; ≤0 means none.
    #[serde(deserialize_with = "lenient::int32")]
    pub executor_timeout: i32,
    /// Log row id; the key of de-duplication and of the callback.
    #[serde(deserialize_with = "lenient::int64")]
    pub log_id: i64,
    /// Trigger time in epoch ms; selects the executor's dated log directory.
    #[serde(deserialize_with = "lenient::int64")]
    pub log_date_time: i64,
    /// Raw glue type name; see [`GlueType::parse`].
    #[serde(deserialize_with = "lenient::string")]
    pub glue_type: String,
    /// Script source for glue jobs, empty for BEAN.
    #[serde(deserialize_with = "lenient::string")]
    pub glue_source: String,
    /// Glue version in epoch ms; a new value replaces the job's worker.
    #[serde(deserialize_with = "lenient::int64")]
    pub glue_updatetime: i64,
    /// 0-based shard index of a broadcast.
    #[serde(deserialize_with = "lenient::int32")]
    pub broadcast_index: i32,
    /// Shard count; defaults to 1 because the admin sends `{0,1}` for non-broadcast triggers.
    #[serde(deserialize_with = "lenient::shard_total")]
    pub broadcast_total: i32,
    /// A workflow node's run: the workflow run's context (a JSON object's text). A jobwheel
    /// extension: XXL-JOB's peers ignore the key, and it is sent only when set.
    #[serde(
        deserialize_with = "lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub workflow_context: Option<String>,
    /// Under SERIAL_EXECUTION, the most triggers of this job that may wait behind its running
    /// one; a trigger beyond is refused at once. A jobwheel extension, sent only when set:
    /// XXL-JOB's executors ignore the key and queue without a bound.
    #[serde(
        deserialize_with = "lenient::opt_max_queued",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_queued: Option<u32>,
}

impl Default for TriggerParam {
    fn default() -> Self {
        TriggerParam {
            job_id: 0,
            executor_handler: String::new(),
            executor_params: String::new(),
            executor_block_strategy: String::new(),
            executor_timeout: 0,
            log_id: 0,
            log_date_time: 0,
            glue_type: String::new(),
            glue_source: String::new(),
            glue_updatetime: 0,
            broadcast_index: 0,
            broadcast_total: 1,
            workflow_context: None,
            max_queued: None,
        }
    }
}

impl TriggerParam {
    /// The strategy the executor applies: unknown names mean serial, as in Java.
    pub fn block_strategy_enum(&self) -> BlockStrategy {
        BlockStrategy::parse_or_serial(&self.executor_block_strategy)
    }

    /// The glue type if known; `None` must be answered with [`glue_type_not_valid`](super::glue_type_not_valid).
    pub fn glue_type_enum(&self) -> Option<GlueType> {
        GlueType::parse(&self.glue_type)
    }
}

/// Why a trigger's fields cannot be run, checked before it is queued (Java accepts a shard index
/// past the total, a total of 0 or below and unknown strategies, and runs them as nonsense).
pub fn check_trigger(p: &TriggerParam) -> Result<(), String> {
    if p.broadcast_total < 1 {
        return Err(format!(
            "invalid trigger: broadcastTotal must be 1 or more, got {}",
            p.broadcast_total
        ));
    }
    if p.broadcast_index < 0 || p.broadcast_index >= p.broadcast_total {
        return Err(format!(
            "invalid trigger: broadcastIndex must be from 0 to broadcastTotal - 1 ({}), got {}",
            p.broadcast_total - 1,
            p.broadcast_index
        ));
    }
    // a missing strategy means serial, as in Java; a name must be one of the three
    if !p.executor_block_strategy.is_empty()
        && BlockStrategy::parse(&p.executor_block_strategy).is_none()
    {
        return Err(format!(
            "invalid trigger: unknown executorBlockStrategy [{}], allowed: SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY",
            p.executor_block_strategy
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;

    #[test]
    fn run_body_observed() {
        let body = r#"{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"hello","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":101,"logDateTime":1796010589000,"glueType":"BEAN","glueSource":"","glueUpdatetime":1796010589000,"broadcastIndex":0,"broadcastTotal":1}"#;
        let p: TriggerParam = decode(body.as_bytes()).unwrap();
        assert_eq!(p.job_id, 1);
        assert_eq!(p.executor_handler, "demoJobHandler");
        assert_eq!(p.executor_params, "hello");
        assert_eq!(p.executor_block_strategy, "SERIAL_EXECUTION");
        assert_eq!(p.block_strategy_enum(), BlockStrategy::SerialExecution);
        assert_eq!(p.executor_timeout, 0);
        assert_eq!(p.log_id, 101);
        assert_eq!(p.log_date_time, 1_796_010_589_000);
        assert_eq!(p.glue_type, "BEAN");
        assert_eq!(p.glue_type_enum(), Some(GlueType::Bean));
        assert_eq!(p.glue_source, "");
        assert_eq!(p.glue_updatetime, 1_796_010_589_000);
        assert_eq!(p.broadcast_index, 0);
        assert_eq!(p.broadcast_total, 1);
        assert_eq!(serde_json::to_value(&p).unwrap(), v(body));
    }

    #[test]
    fn trigger_body_reference_example() {
        let body = r#"{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":101,"logDateTime":1700000000000,"glueType":"BEAN","glueSource":"","glueUpdatetime":1541254891000,"broadcastIndex":0,"broadcastTotal":1}"#;
        let p: TriggerParam = decode(body.as_bytes()).unwrap();
        assert_eq!(p.executor_params, "");
        assert_eq!(p.log_date_time, 1_700_000_000_000);
        assert_eq!(p.glue_updatetime, 1_541_254_891_000);
        assert_eq!(p.broadcast_total, 1);
        assert_eq!(serde_json::to_value(&p).unwrap(), v(body));
    }

    #[test]
    fn observed_run_variants() {
        // DISCARD_LATER, COVER_EARLY and executorTimeout 2 from the observed exchanges.
        let p: TriggerParam = decode(
            br#"{"jobId":6,"executorHandler":"sleepJob","executorBlockStrategy":"DISCARD_LATER","executorTimeout":2,"logId":120,"glueType":"BEAN","broadcastTotal":1}"#,
        )
        .unwrap();
        assert_eq!(p.block_strategy_enum(), BlockStrategy::DiscardLater);
        assert_eq!(p.executor_timeout, 2);
        let p: TriggerParam =
            decode(br#"{"jobId":6,"executorBlockStrategy":"COVER_EARLY"}"#).unwrap();
        assert_eq!(p.block_strategy_enum(), BlockStrategy::CoverEarly);
        let p: TriggerParam = decode(br#"{"jobId":1,"executorHandler":"nope"}"#).unwrap();
        assert_eq!(p.executor_handler, "nope");
        assert_eq!(
            handler_not_found(&p.executor_handler),
            "job handler [nope] not found."
        );
    }

    #[test]
    fn trigger_param_is_lenient_like_gson() {
        let p: TriggerParam = decode(br#"{"jobId":7}"#).unwrap();
        assert_eq!(p.job_id, 7);
        assert_eq!(p.executor_handler, "");
        assert_eq!(p.executor_params, "");
        assert_eq!(p.log_id, 0);
        assert_eq!(p.broadcast_index, 0);
        assert_eq!(p.broadcast_total, 1);

        let p: TriggerParam = decode(
            br#"{"jobId":"3","executorHandler":null,"executorParams":null,"glueType":null,"glueSource":null,"logId":"42","logDateTime":1.7e12,"broadcastTotal":null,"executorTimeout":null}"#,
        )
        .unwrap();
        assert_eq!(p.job_id, 3);
        assert_eq!(p.executor_handler, "");
        assert_eq!(p.executor_params, "");
        assert_eq!(p.glue_type, "");
        assert_eq!(p.glue_source, "");
        assert_eq!(p.log_id, 42);
        assert_eq!(p.log_date_time, 1_700_000_000_000);
        assert_eq!(p.broadcast_total, 1);
        assert_eq!(p.executor_timeout, 0);

        // A number where a string is expected reads as its text, as Gson does.
        let p: TriggerParam = decode(br#"{"executorParams":12}"#).unwrap();
        assert_eq!(p.executor_params, "12");

        // An explicit broadcastTotal 0 (the docs' example) is kept as sent.
        let p: TriggerParam = decode(br#"{"broadcastTotal":0}"#).unwrap();
        assert_eq!(p.broadcast_total, 0);

        assert_eq!(TriggerParam::default().broadcast_total, 1);
    }

    #[test]
    fn trigger_param_unknown_values_stay_raw() {
        let p: TriggerParam =
            decode(br#"{"executorBlockStrategy":"WHATEVER","glueType":"GLUE_RUBY"}"#).unwrap();
        assert_eq!(p.executor_block_strategy, "WHATEVER");
        assert_eq!(p.block_strategy_enum(), BlockStrategy::SerialExecution);
        assert_eq!(p.glue_type, "GLUE_RUBY");
        assert_eq!(p.glue_type_enum(), None);
        assert_eq!(
            glue_type_not_valid(&p.glue_type),
            "glueType[GLUE_RUBY] is not valid."
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let p: TriggerParam = decode(br#"{"jobId":1,"somethingNew":{"x":[1]},"logId":5}"#).unwrap();
        assert_eq!((p.job_id, p.log_id), (1, 5));
        let k: KillParam = decode(br#"{"jobId":2,"reason":"x"}"#).unwrap();
        assert_eq!(k.job_id, 2);
        let items = decode_callbacks(br#"[{"logId":1,"handleCode":200,"extra":true}]"#).unwrap();
        assert_eq!(items[0].log_id, 1);
        let l: LogParam = decode(br#"{"logId":1,"fromLineNum":2,"x":null}"#).unwrap();
        assert_eq!((l.log_id, l.from_line_num, l.log_date_time), (1, 2, 0));
        let r: RegistryParam =
            decode(br#"{"registryGroup":"EXECUTOR","registryKey":"a","registryValue":"b","v":1}"#)
                .unwrap();
        assert_eq!(r.registry_key, "a");
    }

    #[test]
    fn triggers_with_impossible_shards_or_strategies_are_refused() {
        let ok = TriggerParam::default();
        assert!(check_trigger(&ok).is_ok(), "defaults: shard 0 of 1, serial");
        let bad = |edit: fn(&mut TriggerParam)| {
            let mut p = TriggerParam::default();
            edit(&mut p);
            check_trigger(&p).unwrap_err()
        };
        assert!(bad(|p| p.broadcast_total = 0).contains("broadcastTotal"));
        assert!(bad(|p| p.broadcast_total = -1).contains("broadcastTotal"));
        assert!(bad(|p| p.broadcast_index = 1).contains("broadcastIndex"));
        assert!(bad(|p| p.broadcast_index = -1).contains("broadcastIndex"));
        assert!(bad(|p| p.executor_block_strategy = "SOMETIMES".into()).contains("SOMETIMES"));
        let p = TriggerParam {
            broadcast_total: 3,
            broadcast_index: 2,
            executor_block_strategy: "COVER_EARLY".into(),
            ..Default::default()
        };
        assert!(check_trigger(&p).is_ok());
    }
}
