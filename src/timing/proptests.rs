//! Property tests of the schedule rules as the REST API calls them (job create/update, the
//! preview endpoint): any type, configuration, zone and start time answers fire times in order
//! or a [`ScheduleError`] with a message.

use proptest::prelude::*;

use super::*;

/// Cases per property; CI runs every one of them (`cargo test`).
const CASES: u32 = 10_000;

fn schedule_type() -> impl Strategy<Value = ScheduleType> {
    prop::sample::select(ScheduleType::ALL)
}

/// Configurations of every type: interval text, cron text and junk.
fn conf() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "[ ]?[+-]?[0-9]{1,20}[ ]?",
        prop::sample::select(vec![
            "0 0 12 * * ?",
            "*/5 * * * * ?",
            "0 0 0 L * ?",
            "0 30 2 ? * 1#2",
            "0 0 0 29 2 ? 2100-2199",
            "0 0 0 31 2 ?",
        ])
        .prop_map(str::to_string),
        ".{0,30}",
    ]
}

/// Start times anywhere in `i64`, with the edges and the span cron works in well represented.
fn from_ms() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        0i64..7_258_118_400_000,
        prop::sample::select(vec![
            i64::MIN,
            i64::MAX,
            i64::MAX - 999,
            -1,
            8_210_298_412_799_999,
            -8_334_632_851_200_000,
        ]),
    ]
}

fn zone_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "UTC",
            " Asia/Shanghai ",
            "America/New_York",
            "Pacific/Apia",
            "Etc/GMT+12",
            "Etc/GMT-14",
            "utc",
        ])
        .prop_map(str::to_string),
        ".{0,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// Validation and preview agree, and a preview's times are strictly increasing after `from`.
    #[test]
    fn previews_are_in_order_or_refused(
        kind in schedule_type(),
        conf in conf(),
        zone in zone_name(),
        from in from_ms(),
        count in 0usize..6,
    ) {
        let tz = match parse_timezone(&zone, Tz::UTC) {
            Ok(tz) => tz,
            Err(e) => {
                prop_assert!(e.0.contains("unknown time zone"), "{}", e.0);
                Tz::UTC
            }
        };
        let valid = validate(kind, &conf);
        match preview(kind, &conf, tz, from, count) {
            Ok(times) => {
                prop_assert!(valid.is_ok());
                prop_assert!(times.len() <= count);
                let mut last = from;
                for t in times {
                    prop_assert!(t > last, "{kind} {conf:?} from {from}: {t} after {last}");
                    last = t;
                }
                if kind == ScheduleType::None {
                    prop_assert_eq!(next_fire_time(kind, &conf, tz, from), Ok(None));
                }
            }
            Err(e) => {
                prop_assert!(!e.0.is_empty());
                // a usable schedule fails only for a start time out of range
                if valid.is_ok() {
                    prop_assert!(e.0.contains("outside the range"), "{}", e.0);
                }
            }
        }
    }

    /// An interval is accepted exactly when it is a whole number of seconds in range.
    #[test]
    fn intervals_are_whole_seconds_in_range(conf in conf()) {
        for kind in [ScheduleType::FixRate, ScheduleType::FixDelay] {
            let expected = conf
                .trim()
                .parse::<i64>()
                .is_ok_and(|n| (1..=MAX_INTERVAL_SECS).contains(&n));
            prop_assert_eq!(validate(kind, &conf).is_ok(), expected, "{:?}", conf);
        }
    }
}
