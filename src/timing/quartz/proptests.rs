//! Property tests of the cron parser: any text is parsed or refused with a message, never a
//! panic, and every fire time of an accepted expression is later than the one before and is a
//! wall-clock time the expression matches.

use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;

use super::*;

/// Cases per property; CI runs every one of them (`cargo test`).
const CASES: u32 = 10_000;
/// Fire times followed per accepted expression.
const FIRES: usize = 4;
/// 1970-01-01 to 2200-01-01 in epoch ms: the years an expression can fire in.
const SPAN_MS: i64 = 7_258_118_400_000;

/// Zones with daylight saving, half-hour and 45-minute offsets, a 30-minute DST shift and a
/// skipped day, so the gap and fold handling is exercised.
const ZONES: &[Tz] = &[
    Tz::UTC,
    Tz::America__New_York,
    Tz::Europe__London,
    Tz::Australia__Lord_Howe,
    Tz::Pacific__Apia,
    Tz::Asia__Kathmandu,
    Tz::America__Sao_Paulo,
];

fn zone() -> impl Strategy<Value = Tz> {
    prop::sample::select(ZONES)
}

const MONTHS: &[&str] = &[
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: &[&str] = &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// One list item of a numeric field whose values run `lo..=hi`, in every accepted form.
fn item(lo: u32, hi: u32, max_step: u32) -> impl Strategy<Value = String> {
    let v = move || lo..=hi;
    prop_oneof![
        Just("*".to_string()),
        v().prop_map(|a| a.to_string()),
        (v(), v()).prop_map(|(a, b)| format!("{a}-{b}")),
        (v(), 1..=max_step).prop_map(|(a, s)| format!("{a}/{s}")),
        (1..=max_step).prop_map(|s| format!("*/{s}")),
        (1..=max_step).prop_map(|s| format!("/{s}")),
        (v(), v(), 1..=max_step).prop_map(|(a, b, s)| format!("{a}-{b}/{s}")),
    ]
}

fn list(item: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec(item, 1..4).prop_map(|items| items.join(","))
}

fn month_item() -> impl Strategy<Value = String> {
    prop_oneof![
        item(1, 12, 12),
        prop::sample::select(MONTHS).prop_map(str::to_string),
        (prop::sample::select(MONTHS), prop::sample::select(MONTHS))
            .prop_map(|(a, b)| format!("{a}-{b}")),
    ]
}

fn day_of_month() -> impl Strategy<Value = String> {
    list(prop_oneof![
        item(1, 31, 31),
        Just("L".to_string()),
        Just("LW".to_string()),
        (0u32..=30).prop_map(|n| format!("L-{n}")),
        (0u32..=30).prop_map(|n| format!("L-{n}W")),
        (1u32..=31).prop_map(|n| format!("{n}W")),
    ])
}

fn day_of_week() -> impl Strategy<Value = String> {
    let day = || {
        prop_oneof![
            (1u32..=7).prop_map(|d| d.to_string()),
            prop::sample::select(DAYS).prop_map(str::to_string),
        ]
    };
    prop_oneof![
        4 => list(prop_oneof![
            item(1, 7, 7),
            day(),
            (day(), day()).prop_map(|(a, b)| format!("{a}-{b}")),
        ]),
        1 => Just("L".to_string()),
        1 => day().prop_map(|d| format!("{d}L")),
        1 => (day(), 1u32..=5).prop_map(|(d, k)| format!("{d}#{k}")),
    ]
}

fn year() -> impl Strategy<Value = String> {
    let y = || MIN_YEAR as u32..=MAX_YEAR as u32;
    prop_oneof![
        Just(String::new()),
        Just("*".to_string()),
        y().prop_map(|a| a.to_string()),
        (y(), y()).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (y(), 1u32..=229).prop_map(|(a, s)| format!("{a}/{s}")),
    ]
}

/// Expressions Quartz accepts, in every form the syntax allows.
fn valid_cron() -> impl Strategy<Value = String> {
    (
        list(item(0, 59, 59)),
        list(item(0, 59, 59)),
        list(item(0, 23, 23)),
        prop_oneof![
            day_of_month().prop_map(|dom| (dom, "?".to_string())),
            day_of_week().prop_map(|dow| ("?".to_string(), dow)),
        ],
        list(month_item()),
        year(),
        any::<bool>(),
    )
        .prop_map(|(s, m, h, (dom, dow), mon, year, lower)| {
            let expr = format!("{s} {m} {h} {dom} {mon} {dow} {year}");
            if lower {
                expr.to_lowercase()
            } else {
                expr
            }
        })
}

/// Text made of cron tokens in any order: mostly refused, sometimes accepted.
fn cronish() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("*".to_string()),
        Just("?".to_string()),
        Just("L".to_string()),
        Just("W".to_string()),
        Just("LW".to_string()),
        Just("#".to_string()),
        Just(String::new()),
        (0u64..80).prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "4294967296",
            "99999999999999999999",
            "-1",
            "MONDAY",
            "JUL",
            "SUN",
            "SAT",
            "L-31",
            "L-",
            "0W",
            "32W",
            "8L",
            "6#0",
            "6#6",
            "1970",
            "2199",
            "2200",
            "é",
        ])
        .prop_map(str::to_string),
    ];
    let field = prop::collection::vec(
        (
            atom,
            prop::sample::select(vec!["", "", "", "-", "/", ",", "#", "W", "L"]),
        ),
        1..4,
    )
    .prop_map(|parts| {
        parts
            .into_iter()
            .map(|(a, sep)| format!("{a}{sep}"))
            .collect::<String>()
    });
    (
        prop::collection::vec(field, 4..9),
        prop::sample::select(vec![" ", " ", "  ", "\t", "\u{3000}"]),
    )
        .prop_map(|(fields, sep)| fields.join(sep))
}

/// Whether the expression's fields all match this wall-clock time.
fn matches(cron: &CronExpr, local: NaiveDateTime) -> bool {
    let year = local.year();
    let bit = |mask: u64, v: u32| mask & (1 << v) != 0;
    let year_index = (year - MIN_YEAR) as usize;
    (MIN_YEAR..=MAX_YEAR).contains(&year)
        && cron.years[year_index / 64] & (1 << (year_index % 64)) != 0
        && bit(cron.months, local.month())
        && bit(cron.day_mask(year, local.month()), local.day())
        && bit(cron.hours, local.hour())
        && bit(cron.minutes, local.minute())
        && bit(cron.seconds, local.second())
}

/// The fire times after `from`: each later than the last, whole seconds, matched by the
/// expression, and found again when the search starts one second before it.
fn check_fires(cron: &CronExpr, tz: Tz, from_ms: i64) -> Result<(), TestCaseError> {
    let mut at: DateTime<Tz> = Utc
        .timestamp_millis_opt(from_ms)
        .single()
        .expect("the span is in range")
        .with_timezone(&tz);
    for _ in 0..FIRES {
        let Some(fire) = cron.next_after(&at) else {
            break;
        };
        prop_assert!(fire > at, "{} gave {fire} after {at}", cron.as_str());
        prop_assert_eq!(fire.timestamp_subsec_millis(), 0);
        prop_assert!(
            matches(cron, fire.naive_local()),
            "{} does not match its fire time {}",
            cron.as_str(),
            fire
        );
        let before = fire - TimeDelta::seconds(1);
        if before >= at {
            prop_assert_eq!(cron.next_after(&before), Some(fire));
        }
        at = fire;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// Any text: parsed, or refused with the expression and a problem.
    #[test]
    fn any_text_parses_or_is_refused(text in prop_oneof![
        ".{0,40}",
        prop::collection::vec(any::<u8>(), 0..40)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]) {
        match CronExpr::parse(&text) {
            Ok(cron) => prop_assert_eq!(cron.as_str(), text.as_str()),
            Err(e) => {
                prop_assert_eq!(e.expression(), text.as_str());
                prop_assert!(!e.problem().is_empty());
            }
        }
    }

    /// Text of cron tokens: refused with a problem, or accepted and then firing in order at
    /// matching times.
    #[test]
    fn cron_tokens_parse_or_are_refused(
        text in cronish(),
        tz in zone(),
        from in 0..SPAN_MS,
    ) {
        match CronExpr::parse(&text) {
            Ok(cron) => check_fires(&cron, tz, from)?,
            Err(e) => prop_assert!(!e.problem().is_empty()),
        }
    }

    /// Every form of valid expression is accepted, and fires in order at matching times.
    #[test]
    fn valid_expressions_fire_in_order_at_matching_times(
        text in valid_cron(),
        tz in zone(),
        from in 0..SPAN_MS,
    ) {
        let cron = CronExpr::parse(&text);
        prop_assert!(cron.is_ok(), "{text}: {:?}", cron.err());
        if let Ok(cron) = cron {
            check_fires(&cron, tz, from)?;
        }
    }
}
