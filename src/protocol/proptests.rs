//! Property tests of the wire decoders: whatever a peer sends, decoding answers `Ok` or a
//! [`ProtocolError`] with a message, and what our encoders write decodes to the same value.

use proptest::prelude::*;
use serde_json::{json, Value};

use serde::de::DeserializeOwned;

use super::*;

/// Cases per property; CI runs every one of them (`cargo test`).
const CASES: u32 = 10_000;

/// Every key the decoders read, so generated objects hit the lenient paths, not just `default`.
const KEYS: &[&str] = &[
    "jobId",
    "executorHandler",
    "executorParams",
    "executorBlockStrategy",
    "executorTimeout",
    "logId",
    "logDateTime",
    "logDateTim",
    "glueType",
    "glueSource",
    "glueUpdatetime",
    "broadcastIndex",
    "broadcastTotal",
    "fromLineNum",
    "toLineNum",
    "logContent",
    "isEnd",
    "end",
    "handleCode",
    "handleMsg",
    "registryGroup",
    "registryKey",
    "registryValue",
    "code",
    "msg",
    "content",
    "data",
    "callbackList",
];

/// Numbers of every kind serde_json can hold, the edges of i32/i64 in particular.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        prop::sample::select(vec![
            json!(i64::MAX),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(i32::MAX as i64 + 1),
            json!(i32::MIN as i64 - 1),
            json!(9.223372036854776e18),
            json!(-9.223372036854776e18),
            json!(1e300),
            json!(0.5),
            json!(-0.0),
        ]),
    ]
}

/// Strings a lenient integer reader sees: numbers, almost-numbers and junk.
fn numeric_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        any::<f64>().prop_map(|f| f.to_string()),
        "[ +-]?[0-9]{0,25}(\\.[0-9]{0,5})?([eE][+-]?[0-9]{1,4})?[ ]?",
        prop::sample::select(vec![
            "NaN".to_string(),
            "inf".to_string(),
            "-inf".to_string(),
            "1e400".to_string(),
            "".to_string(),
            " ".to_string(),
        ]),
        ".{0,12}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        numeric_text().prop_map(Value::String),
        ".{0,10}".prop_map(Value::String),
    ]
}

/// Any JSON value, at most three levels deep and about a dozen nodes (kept small: each of the
/// 10,000 cases is generated in a debug build).
fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    prop::sample::select(KEYS).prop_map(str::to_string),
                    ".{0,6}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An object of the decoders' own keys with values of any type, mostly scalars.
fn keyed_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        prop::sample::select(KEYS),
        prop_oneof![4 => scalar(), 1 => json_value()],
        0..8,
    )
    .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

/// Bodies as they may arrive: JSON of any shape, or bytes that are not JSON (or not UTF-8).
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        json_value().prop_map(|v| v.to_string().into_bytes()),
        keyed_object().prop_map(|v| v.to_string().into_bytes()),
        prop::collection::vec(keyed_object(), 0..3)
            .prop_map(|l| Value::Array(l).to_string().into_bytes()),
        prop::collection::vec(keyed_object(), 0..3)
            .prop_map(|l| json!({ "callbackList": l }).to_string().into_bytes()),
        prop::collection::vec(any::<u8>(), 0..64),
        // a valid body cut short or with a byte changed
        (keyed_object(), any::<usize>(), any::<u8>()).prop_map(|(v, at, b)| {
            let mut bytes = v.to_string().into_bytes();
            if !bytes.is_empty() {
                let at = at % bytes.len();
                if b % 2 == 0 {
                    bytes.truncate(at);
                } else {
                    bytes[at] = b;
                }
            }
            bytes
        }),
    ]
}

/// A decode either succeeds or fails with a message that explains the body.
fn decodes_cleanly<T: DeserializeOwned>(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Err(e) = decode::<T>(bytes) {
        prop_assert!(e.to_string().starts_with("malformed body: "), "{e}");
    }
    Ok(())
}

fn trigger_param() -> impl Strategy<Value = TriggerParam> {
    (
        (any::<i32>(), ".{0,12}", ".{0,24}", ".{0,20}", any::<i32>()),
        (
            any::<i64>(),
            any::<i64>(),
            ".{0,16}",
            ".{0,40}",
            any::<i64>(),
        ),
        (
            any::<i32>(),
            any::<i32>(),
            prop::option::of(".{0,24}"),
            prop::option::of(1u32..),
        ),
    )
        .prop_map(
            |(
                (job_id, executor_handler, executor_params, executor_block_strategy, timeout),
                (log_id, log_date_time, glue_type, glue_source, glue_updatetime),
                (broadcast_index, broadcast_total, workflow_context, max_queued),
            )| TriggerParam {
                job_id,
                executor_handler,
                executor_params,
                executor_block_strategy,
                executor_timeout: timeout,
                log_id,
                log_date_time,
                glue_type,
                glue_source,
                glue_updatetime,
                broadcast_index,
                broadcast_total,
                workflow_context,
                max_queued,
            },
        )
}

fn callback() -> impl Strategy<Value = HandleCallbackParam> {
    (
        any::<i64>(),
        any::<i64>(),
        any::<i32>(),
        prop::option::of(".{0,24}"),
    )
        .prop_map(|(log_id, log_date_time, handle_code, handle_msg)| {
            HandleCallbackParam::new(log_id, log_date_time, handle_code, handle_msg)
        })
}

fn log_result() -> impl Strategy<Value = LogResult> {
    (any::<i32>(), any::<i32>(), ".{0,40}", any::<bool>()).prop_map(
        |(from_line_num, to_line_num, log_content, is_end)| LogResult {
            from_line_num,
            to_line_num,
            log_content,
            is_end,
        },
    )
}

/// Log text with many short lines, control characters and the odd long line.
fn log_text() -> impl Strategy<Value = String> {
    prop_oneof![
        50 => "(.{0,6}\n){0,40}",
        50 => "([a-z\"\\\\\t\u{1}é中]{0,8}\r?\n?){0,30}",
        // past the byte bound (rare: each such case handles a quarter megabyte)
        1 => (0usize..3, any::<bool>()).prop_map(|(short, own_line)| {
            let mut text = "x\n".repeat(short);
            let huge = "\"".repeat(LOG_PAGE_MAX_BYTES / 2 + 1);
            if own_line {
                text.push_str(&huge);
                text.push('\n');
            } else {
                // split over two lines, each within the bound
                text.push_str(&huge[..huge.len() / 2]);
                text.push('\n');
                text.push_str(&huge[huge.len() / 2..]);
                text.push('\n');
            }
            text
        }),
    ]
}

/// First line numbers, the edges (where numbering the kept lines can overflow) included.
fn line_number() -> impl Strategy<Value = i32> {
    prop_oneof![
        any::<i32>(),
        (i32::MAX - 3)..=i32::MAX,
        i32::MIN..(i32::MIN + 3),
        -2i32..5,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// `/run`, `/idleBeat`, `/kill`, `/log` bodies and both registry shapes decode or fail with
    /// a message, whatever the bytes.
    #[test]
    fn executor_request_bodies_never_panic(bytes in body()) {
        decodes_cleanly::<TriggerParam>(&bytes)?;
        decodes_cleanly::<IdleBeatParam>(&bytes)?;
        decodes_cleanly::<KillParam>(&bytes)?;
        decodes_cleanly::<LogParam>(&bytes)?;
        decodes_cleanly::<RegistryParam>(&bytes)?;
        if let Ok(p) = decode::<TriggerParam>(&bytes) {
            // a decoded trigger is either runnable or refused with a reason
            if let Err(why) = check_trigger(&p) {
                prop_assert!(why.starts_with("invalid trigger: "), "{why}");
            } else {
                prop_assert!(p.broadcast_total >= 1);
                prop_assert!((0..p.broadcast_total).contains(&p.broadcast_index));
            }
            let _ = (p.block_strategy_enum(), p.glue_type_enum());
        }
    }

    /// Answers from either peer (`/log`, `/kill`, envelopes of any payload) and `/api/callback`
    /// bodies of both generations decode or fail with a message.
    #[test]
    fn answers_and_callbacks_never_panic(bytes in body()) {
        decodes_cleanly::<AnyReturn>(&bytes)?;
        decodes_cleanly::<StringReturn>(&bytes)?;
        decodes_cleanly::<LogReturn>(&bytes)?;
        if let Err(e) = decode_callbacks(&bytes) {
            prop_assert!(e.to_string().starts_with("malformed body: "), "{e}");
        }
    }

    /// Integers arrive as numbers or as text (Gson); each is read exactly or refused.
    #[test]
    fn lenient_integers_are_exact_or_refused(n in number(), text in numeric_text()) {
        for v in [n, Value::String(text)] {
            let body = json!({ "logId": v.clone(), "jobId": v.clone() }).to_string();
            match decode::<TriggerParam>(body.as_bytes()) {
                Ok(p) => {
                    if let Some(i) = v.as_i64() {
                        prop_assert_eq!(p.log_id, i);
                    }
                    if let Some(s) = v.as_str().and_then(|s| s.trim().parse::<i64>().ok()) {
                        prop_assert_eq!(p.log_id, s);
                    }
                    prop_assert_eq!(i64::from(p.job_id), p.log_id);
                }
                Err(e) => prop_assert!(e.to_string().contains("expected an integer")
                    || e.to_string().contains("out of range for i32"), "{e}"),
            }
        }
    }

    /// What the admin sends to `/run` decodes to the same trigger.
    #[test]
    fn trigger_params_round_trip(p in trigger_param()) {
        let bytes = serde_json::to_vec(&p).expect("a trigger encodes");
        prop_assert_eq!(decode::<TriggerParam>(&bytes).expect("a trigger decodes"), p);
    }

    /// What an executor sends to `/api/callback` decodes to the same results, in either
    /// generation's shape; a NUL in a message is already replaced when the result is made.
    #[test]
    fn callbacks_round_trip(items in prop::collection::vec(callback(), 0..5)) {
        for proto in AdminProtocol::ALL {
            let body = encode_callbacks(&items, *proto).to_string();
            prop_assert_eq!(&decode_callbacks(body.as_bytes()).expect("callbacks decode"), &items);
        }
        for item in &items {
            prop_assert!(!item.handle_msg.as_deref().unwrap_or_default().contains('\0'));
        }
    }

    /// `/log`, `/kill`, `/idleBeat` and registry requests decode to what was encoded.
    #[test]
    fn small_requests_round_trip(
        log_date_time in any::<i64>(),
        log_id in any::<i64>(),
        from_line_num in any::<i32>(),
        job_id in any::<i32>(),
        app in ".{0,20}",
        address in ".{0,30}",
    ) {
        let log = LogParam { log_date_time, log_id, from_line_num, reads_data: true };
        let bytes = log.to_json().to_string().into_bytes();
        prop_assert_eq!(decode::<LogParam>(&bytes).expect("a /log request decodes"), log);
        let kill = KillParam { job_id };
        prop_assert_eq!(decode::<KillParam>(&serde_json::to_vec(&kill).expect("encodes")).expect("decodes"), kill);
        let idle = IdleBeatParam { job_id };
        prop_assert_eq!(decode::<IdleBeatParam>(&serde_json::to_vec(&idle).expect("encodes")).expect("decodes"), idle);
        let reg = RegistryParam::executor(app, address);
        prop_assert_eq!(decode::<RegistryParam>(&serde_json::to_vec(&reg).expect("encodes")).expect("decodes"), reg);
    }

    /// An envelope written under any payload key reads back the same.
    #[test]
    fn envelopes_round_trip(
        code in any::<i32>(),
        msg in prop::option::of(".{0,20}"),
        payload in prop::option::of(log_result()),
    ) {
        let ret = ReturnT { code, msg, payload };
        for key in [PayloadKey::Both, PayloadKey::Content, PayloadKey::Data] {
            let bytes = serde_json::to_vec(&Keyed { ret: &ret, key }).expect("encodes");
            prop_assert_eq!(&decode::<LogReturn>(&bytes).expect("decodes"), &ret);
        }
    }

    /// A page from any executor is cut to the bound without panicking, keeps a prefix of what
    /// was sent, and names the lines it kept within `i32`.
    #[test]
    fn log_pages_are_bounded(from in line_number(), extra in 0i32..3, text in log_text()) {
        let to = from.saturating_add(extra);
        let page = LogResult { from_line_num: from, to_line_num: to, log_content: text.clone(), is_end: false };
        let bounded = page.clone().bounded();
        prop_assert_eq!(bounded.from_line_num, from);
        if bounded.log_content != text {
            prop_assert!(bounded.to_line_num >= from);
            let cut = bounded.log_content.strip_suffix(" [line cut]\n").unwrap_or(&bounded.log_content);
            prop_assert!(text.starts_with(cut));
            prop_assert!(json_len(&bounded.log_content) <= LOG_PAGE_MAX_BYTES);
        }
    }

    /// The JSON length helpers agree with serde_json and cut at a character boundary.
    #[test]
    fn json_lengths_match_serde(text in ".{0,40}", max in 0usize..80) {
        let written = serde_json::to_string(&text).expect("a string encodes");
        prop_assert_eq!(json_len(&text), written.len() - 2);
        let cut = cut_to_json_len(&text, max);
        prop_assert!(text.starts_with(cut));
        prop_assert!(json_len(cut) <= max);
        if let Some(next) = text[cut.len()..].chars().next() {
            prop_assert!(json_len(cut) + json_len(&next.to_string()) > max);
        }
    }

    /// Names from configs and the wire: known ones round-trip, anything else is refused with
    /// the value and the allowed list.
    #[test]
    fn enum_names_parse_or_explain(text in prop_oneof![
        ".{0,20}",
        prop::sample::select(vec![
            "SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY", "BEAN", "GLUE_SHELL",
            "GLUE_GROOVY", "glue_shell", "v2", "V3.5", " v3.5 ", "v3",
        ]).prop_map(str::to_string),
    ]) {
        match text.parse::<BlockStrategy>() {
            Ok(b) => prop_assert_eq!(b.as_str(), text.as_str()),
            Err(e) => prop_assert!(e.to_string().contains("allowed values")),
        }
        match text.parse::<GlueType>() {
            Ok(g) => prop_assert_eq!(g.as_str(), text.as_str()),
            Err(e) => prop_assert!(e.to_string().contains("allowed values")),
        }
        match text.parse::<AdminProtocol>() {
            Ok(p) => prop_assert!(p.as_str().eq_ignore_ascii_case(text.trim())),
            Err(e) => prop_assert!(e.to_string().contains("allowed values")),
        }
        prop_assert_eq!(BlockStrategy::parse_or_serial(&text), BlockStrategy::parse(&text).unwrap_or(BlockStrategy::SerialExecution));
    }

    /// Tokens compare equal exactly when they are equal.
    #[test]
    fn token_comparison_is_equality(a in ".{0,12}", b in ".{0,12}") {
        prop_assert_eq!(constant_time_eq(&a, &b), a == b);
        prop_assert!(constant_time_eq(&a, &a));
        if let Some(why) = unusable_token(&a) {
            prop_assert!(!why.is_empty());
        }
    }
}

/// Found by `log_pages_are_bounded`: a page whose `fromLineNum` is near `i32::MAX` overflowed
/// when its last kept line was numbered (a panic in a debug build, a negative `toLineNum` in a
/// release one). An executor's answer is outside input to the admin.
#[test]
fn a_page_starting_near_i32_max_is_cut_without_overflow() {
    let page = LogResult {
        from_line_num: i32::MAX,
        to_line_num: i32::MAX,
        log_content: "\n".repeat(LOG_PAGE_MAX_LINES + 1),
        is_end: false,
    };
    let bounded = page.bounded();
    assert_eq!(bounded.to_line_num, i32::MAX);
    assert_eq!(bounded.log_content.len(), LOG_PAGE_MAX_LINES);
}
