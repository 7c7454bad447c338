//! The dialect's cases: Quartz's documented examples, its special forms, errors, and zones.

use super::*;
use chrono::Utc;
use chrono_tz::Tz;

fn utc(s: &str) -> DateTime<Utc> {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
        .unwrap()
        .and_utc()
}

fn next(expr: &str, from: &str) -> Option<String> {
    CronExpr::parse(expr)
        .unwrap()
        .next_after(&utc(from))
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// Successive fire times after `from`.
fn series(expr: &str, from: &str, n: usize) -> Vec<String> {
    let cron = CronExpr::parse(expr).unwrap();
    let mut at = utc(from);
    let mut out = Vec::new();
    for _ in 0..n {
        at = cron.next_after(&at).unwrap();
        out.push(at.format("%Y-%m-%d %H:%M:%S").to_string());
    }
    out
}

fn err(expr: &str) -> String {
    CronExpr::parse(expr).unwrap_err().to_string()
}

fn local(tz: Tz, s: &str) -> DateTime<Tz> {
    let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap();
    tz.from_local_datetime(&naive).earliest().unwrap()
}

fn next_in(expr: &str, after: DateTime<Tz>) -> String {
    CronExpr::parse(expr)
        .unwrap()
        .next_after(&after)
        .unwrap()
        .to_rfc3339()
}

// Quartz CronTrigger tutorial examples. 2026-04-10 is a Friday.

#[test]
fn every_day_at_noon() {
    let e = "0 0 12 * * ?";
    assert_eq!(
        next(e, "2026-04-10 10:00:00").unwrap(),
        "2026-04-10 12:00:00"
    );
    assert_eq!(
        next(e, "2026-04-10 12:00:00").unwrap(),
        "2026-04-11 12:00:00"
    );
    assert_eq!(
        next(e, "2026-12-31 12:00:00").unwrap(),
        "2027-01-01 12:00:00"
    );
}

#[test]
fn ten_fifteen_every_day_in_all_spellings() {
    for e in ["0 15 10 ? * *", "0 15 10 * * ?", "0 15 10 * * ? *"] {
        assert_eq!(
            next(e, "2026-04-10 10:14:59").unwrap(),
            "2026-04-10 10:15:00"
        );
        assert_eq!(
            next(e, "2026-04-10 10:15:00").unwrap(),
            "2026-04-11 10:15:00"
        );
    }
}

#[test]
fn single_year_2005() {
    let e = "0 15 10 * * ? 2005";
    assert_eq!(
        next(e, "2004-06-01 00:00:00").unwrap(),
        "2005-01-01 10:15:00"
    );
    assert_eq!(
        next(e, "2005-06-30 10:15:00").unwrap(),
        "2005-07-01 10:15:00"
    );
    assert_eq!(next(e, "2005-12-31 10:15:00"), None);
    assert_eq!(next(e, "2026-04-10 00:00:00"), None);
}

#[test]
fn every_minute_of_hour_14() {
    let e = "0 * 14 * * ?";
    assert_eq!(
        next(e, "2026-04-10 10:00:00").unwrap(),
        "2026-04-10 14:00:00"
    );
    assert_eq!(
        next(e, "2026-04-10 14:00:00").unwrap(),
        "2026-04-10 14:01:00"
    );
    assert_eq!(
        next(e, "2026-04-10 14:59:00").unwrap(),
        "2026-04-11 14:00:00"
    );
}

#[test]
fn every_five_minutes_in_hour_14_and_18() {
    let e = "0 0/5 14 * * ?";
    assert_eq!(
        next(e, "2026-04-10 14:02:03").unwrap(),
        "2026-04-10 14:05:00"
    );
    assert_eq!(
        next(e, "2026-04-10 14:55:00").unwrap(),
        "2026-04-11 14:00:00"
    );
    let e = "0 0/5 14,18 * * ?";
    assert_eq!(
        next(e, "2026-04-10 14:55:00").unwrap(),
        "2026-04-10 18:00:00"
    );
    assert_eq!(
        next(e, "2026-04-10 18:55:00").unwrap(),
        "2026-04-11 14:00:00"
    );
    assert_eq!(
        series(e, "2026-04-10 18:40:00", 4),
        [
            "2026-04-10 18:45:00",
            "2026-04-10 18:50:00",
            "2026-04-10 18:55:00",
            "2026-04-11 14:00:00"
        ]
    );
}

#[test]
fn minutes_zero_to_five() {
    let e = "0 0-5 14 * * ?";
    assert_eq!(
        next(e, "2026-04-10 14:03:30").unwrap(),
        "2026-04-10 14:04:00"
    );
    assert_eq!(
        next(e, "2026-04-10 14:05:00").unwrap(),
        "2026-04-11 14:00:00"
    );
}

#[test]
fn wednesdays_in_march() {
    // March 2026 Wednesdays: 4, 11, 18, 25. March 2027 starts on a Monday.
    let e = "0 10,44 14 ? 3 WED";
    assert_eq!(
        next(e, "2026-03-04 14:10:00").unwrap(),
        "2026-03-04 14:44:00"
    );
    assert_eq!(
        next(e, "2026-03-04 14:44:00").unwrap(),
        "2026-03-11 14:10:00"
    );
    assert_eq!(
        next(e, "2026-03-25 14:44:00").unwrap(),
        "2027-03-03 14:10:00"
    );
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2027-03-03 14:10:00"
    );
}

#[test]
fn weekdays_only() {
    let e = "0 15 10 ? * MON-FRI";
    assert_eq!(
        next(e, "2026-04-10 10:15:00").unwrap(),
        "2026-04-13 10:15:00"
    );
    assert_eq!(
        next(e, "2026-04-13 10:15:00").unwrap(),
        "2026-04-14 10:15:00"
    );
}

#[test]
fn fifteenth_of_every_month() {
    let e = "0 15 10 15 * ?";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2026-04-15 10:15:00"
    );
    assert_eq!(
        next(e, "2026-04-15 10:15:00").unwrap(),
        "2026-05-15 10:15:00"
    );
}

#[test]
fn last_day_of_month_does_not_skip_short_months() {
    let e = "0 15 10 L * ?";
    assert_eq!(
        series(e, "2026-01-31 10:15:00", 6),
        [
            "2026-02-28 10:15:00",
            "2026-03-31 10:15:00",
            "2026-04-30 10:15:00",
            "2026-05-31 10:15:00",
            "2026-06-30 10:15:00",
            "2026-07-31 10:15:00"
        ]
    );
    assert_eq!(
        next(e, "2028-02-01 00:00:00").unwrap(),
        "2028-02-29 10:15:00"
    );
}

#[test]
fn second_to_last_day() {
    let e = "0 15 10 L-2 * ?";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2026-04-28 10:15:00"
    );
    assert_eq!(
        next(e, "2026-04-28 10:15:00").unwrap(),
        "2026-05-29 10:15:00"
    );
    assert_eq!(
        next(e, "2026-02-01 00:00:00").unwrap(),
        "2026-02-26 10:15:00"
    );
    // L-30 exists only in 31-day months (day 1).
    let e = "0 0 0 L-30 * ?";
    assert_eq!(
        next(e, "2026-02-01 00:00:00").unwrap(),
        "2026-03-01 00:00:00"
    );
    assert_eq!(
        next(e, "2026-03-01 00:00:00").unwrap(),
        "2026-05-01 00:00:00"
    );
}

#[test]
fn last_friday() {
    let e = "0 15 10 ? * 6L";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2026-04-24 10:15:00"
    );
    assert_eq!(
        next(e, "2026-04-24 10:15:00").unwrap(),
        "2026-05-29 10:15:00"
    );
    // July 2026 ends on Friday the 31st.
    assert_eq!(
        next(e, "2026-07-01 00:00:00").unwrap(),
        "2026-07-31 10:15:00"
    );
    let e = "0 15 10 ? * FRIL";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2026-04-24 10:15:00"
    );
}

#[test]
fn last_friday_2002_to_2005() {
    let e = "0 15 10 ? * 6L 2002-2005";
    assert_eq!(
        next(e, "1999-01-01 00:00:00").unwrap(),
        "2002-01-25 10:15:00"
    );
    assert_eq!(
        next(e, "2002-01-25 10:15:00").unwrap(),
        "2002-02-22 10:15:00"
    );
    assert_eq!(
        next(e, "2005-11-30 00:00:00").unwrap(),
        "2005-12-30 10:15:00"
    );
    assert_eq!(next(e, "2005-12-30 10:15:00"), None);
    assert_eq!(next(e, "2026-04-10 00:00:00"), None);
}

#[test]
fn third_friday() {
    let e = "0 15 10 ? * 6#3";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2026-04-17 10:15:00"
    );
    assert_eq!(
        next(e, "2026-04-17 10:15:00").unwrap(),
        "2026-05-15 10:15:00"
    );
    assert_eq!(
        next(e, "2026-05-15 10:15:00").unwrap(),
        "2026-06-19 10:15:00"
    );
}

#[test]
fn every_five_days_from_the_first() {
    let e = "0 0 12 1/5 * ?";
    assert_eq!(
        next(e, "2026-04-10 10:00:00").unwrap(),
        "2026-04-11 12:00:00"
    );
    assert_eq!(
        next(e, "2026-04-26 12:00:00").unwrap(),
        "2026-05-01 12:00:00"
    );
    assert_eq!(
        next(e, "2026-05-26 12:00:00").unwrap(),
        "2026-05-31 12:00:00"
    );
    assert_eq!(
        next(e, "2026-05-31 12:00:00").unwrap(),
        "2026-06-01 12:00:00"
    );
}

#[test]
fn november_eleventh() {
    let e = "0 11 11 11 11 ?";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2026-11-11 11:11:00"
    );
    assert_eq!(
        next(e, "2026-11-11 11:11:00").unwrap(),
        "2027-11-11 11:11:00"
    );
}

#[test]
fn nearest_weekday() {
    // August 2026: the 1st is a Saturday, the 15th a Saturday, the 16th a Sunday.
    let e = "0 0 0 1W * ?";
    assert_eq!(
        next(e, "2026-07-31 00:00:00").unwrap(),
        "2026-08-03 00:00:00"
    );
    assert_eq!(
        next(e, "2026-08-02 12:00:00").unwrap(),
        "2026-08-03 00:00:00"
    );
    assert_eq!(
        next(e, "2026-08-03 00:00:00").unwrap(),
        "2026-09-01 00:00:00"
    );
    assert_eq!(
        next("0 0 0 15W * ?", "2026-08-01 00:00:00").unwrap(),
        "2026-08-14 00:00:00"
    );
    assert_eq!(
        next("0 0 0 16W * ?", "2026-08-01 00:00:00").unwrap(),
        "2026-08-17 00:00:00"
    );
    // A weekday is itself: 2026-04-15 is a Wednesday.
    assert_eq!(
        next("0 0 0 15W * ?", "2026-04-10 00:00:00").unwrap(),
        "2026-04-15 00:00:00"
    );
    // Sunday the 31st of May 2026 goes back to Friday the 29th, not on to June.
    assert_eq!(
        next("0 0 0 31W * ?", "2026-05-01 00:00:00").unwrap(),
        "2026-05-29 00:00:00"
    );
    // 31W never fires in a 30-day month.
    assert_eq!(
        next("0 0 0 31W * ?", "2026-06-01 00:00:00").unwrap(),
        "2026-07-31 00:00:00"
    );
}

#[test]
fn last_weekday() {
    // May 2026 ends on a Sunday, October 2026 on a Saturday, April 2026 on a Thursday.
    let e = "0 0 18 LW * ?";
    assert_eq!(
        next(e, "2026-05-01 00:00:00").unwrap(),
        "2026-05-29 18:00:00"
    );
    assert_eq!(
        next(e, "2026-10-01 00:00:00").unwrap(),
        "2026-10-30 18:00:00"
    );
    assert_eq!(
        next(e, "2026-04-01 00:00:00").unwrap(),
        "2026-04-30 18:00:00"
    );
    // L-1W: May 30 2026 is a Saturday -> Friday 29th.
    assert_eq!(
        next("0 0 18 L-1W * ?", "2026-05-01 00:00:00").unwrap(),
        "2026-05-29 18:00:00"
    );
}

#[test]
fn day_of_month_lists_mix_plain_last_and_weekday() {
    let e = "0 0 0 1,15W,L * ?";
    assert_eq!(
        series(e, "2026-07-31 00:00:00", 4),
        [
            "2026-08-01 00:00:00",
            "2026-08-14 00:00:00",
            "2026-08-31 00:00:00",
            "2026-09-01 00:00:00"
        ]
    );
}

#[test]
fn every_second_and_every_five() {
    let cron = CronExpr::parse("* * * * * ?").unwrap();
    let after = utc("2026-04-10 10:00:00") + TimeDelta::milliseconds(500);
    assert_eq!(cron.next_after(&after).unwrap(), utc("2026-04-10 10:00:01"));
    assert_eq!(
        cron.next_after(&utc("2026-12-31 23:59:59")).unwrap(),
        utc("2027-01-01 00:00:00")
    );
    let e = "0/5 * * * * ?";
    assert_eq!(
        next(e, "2026-04-10 10:00:03").unwrap(),
        "2026-04-10 10:00:05"
    );
    assert_eq!(
        next(e, "2026-04-10 10:00:55").unwrap(),
        "2026-04-10 10:01:00"
    );
    assert_eq!(
        next("*/20 * * * * ?", "2026-04-10 10:00:41").unwrap(),
        "2026-04-10 10:01:00"
    );
    assert_eq!(
        next("/20 * * * * ?", "2026-04-10 10:00:21").unwrap(),
        "2026-04-10 10:00:40"
    );
    assert_eq!(
        next("10-40/15 * * * * ?", "2026-04-10 10:00:26").unwrap(),
        "2026-04-10 10:00:40"
    );
}

#[test]
fn seven_fields_with_year() {
    let e = "0 0 0 1 1 ? 2030";
    assert_eq!(
        next(e, "2026-04-10 00:00:00").unwrap(),
        "2030-01-01 00:00:00"
    );
    assert_eq!(next(e, "2030-01-01 00:00:00"), None);
    assert_eq!(next("0 0 0 1 1 ? 2000", "2026-04-10 00:00:00"), None);
    let e = "0 0 0 1 1 ? 2030/10";
    assert_eq!(
        next(e, "2030-01-01 00:00:00").unwrap(),
        "2040-01-01 00:00:00"
    );
    // Before 1970 the first year is 1970.
    assert_eq!(
        next("0 0 0 1 1 ? *", "1960-05-05 00:00:00").unwrap(),
        "1970-01-01 00:00:00"
    );
}

#[test]
fn names_case_and_wrapping_ranges() {
    // 2026-04-11 is a Saturday.
    assert_eq!(
        next("0 0 9 ? jan,Jul mon-fri", "2026-04-11 00:00:00").unwrap(),
        "2026-07-01 09:00:00"
    );
    assert_eq!(
        next("0 0 0 ? * FRI-MON", "2026-04-13 00:00:00").unwrap(),
        "2026-04-17 00:00:00"
    );
    assert_eq!(
        series("0 0 22-1 * * ?", "2026-04-10 12:00:00", 4),
        [
            "2026-04-10 22:00:00",
            "2026-04-10 23:00:00",
            "2026-04-11 00:00:00",
            "2026-04-11 01:00:00"
        ]
    );
    assert_eq!(
        next("0 0 0 1 NOV-FEB ?", "2026-04-10 00:00:00").unwrap(),
        "2026-11-01 00:00:00"
    );
    // Plain L in day-of-week is Saturday, every week.
    assert_eq!(
        next("0 0 0 ? * L", "2026-04-10 00:00:00").unwrap(),
        "2026-04-11 00:00:00"
    );
    assert_eq!(
        next("0 0 0 ? * L", "2026-04-11 00:00:00").unwrap(),
        "2026-04-18 00:00:00"
    );
    assert_eq!(
        next("0 0 0 ? * 1,7", "2026-04-11 00:00:00").unwrap(),
        "2026-04-12 00:00:00"
    );
}

#[test]
fn feb_29_and_impossible_dates() {
    let e = "0 0 0 29 2 ? *";
    assert_eq!(
        next(e, "2026-03-01 00:00:00").unwrap(),
        "2028-02-29 00:00:00"
    );
    // 2100 is not a leap year.
    assert_eq!(
        next(e, "2096-03-01 00:00:00").unwrap(),
        "2104-02-29 00:00:00"
    );
    assert_eq!(next("0 0 0 30 2 ?", "2026-01-01 00:00:00"), None);
    assert_eq!(next("0 0 0 31 4 ?", "2026-01-01 00:00:00"), None);
}

#[test]
fn fifth_monday_runs_fast_and_right() {
    let cron = CronExpr::parse("0 0 0 ? * 2#5").unwrap();
    // Every fire time from 1970 until the calendar ends.
    let mut at = utc("1970-01-01 00:00:00");
    let mut all = Vec::new();
    while let Some(fire) = cron.next_after(&at) {
        assert!(fire > at);
        assert_eq!(fire.weekday(), chrono::Weekday::Mon);
        assert!(fire.day() >= 29, "{fire}");
        at = fire;
        all.push(fire);
    }
    // Counted independently with Python's calendar module.
    assert_eq!(all.len(), 961);
    assert_eq!(at, utc("2199-12-30 00:00:00"));
    // 10,000 lookups from scattered starts, each giving the first fifth Monday after it.
    let mut start = utc("1971-01-01 00:00:00");
    for _ in 0..10_000 {
        let expected = all[all.partition_point(|t| *t <= start)];
        assert_eq!(cron.next_after(&start), Some(expected), "from {start}");
        start += TimeDelta::hours(127) + TimeDelta::seconds(13);
    }
}

#[test]
fn first_monday_and_weekday_wrap() {
    // 2026-06-01 is a Monday; 2026-07-06 the first Monday of July.
    let e = "0 0 8 ? * MON#1";
    assert_eq!(
        next(e, "2026-05-10 00:00:00").unwrap(),
        "2026-06-01 08:00:00"
    );
    assert_eq!(
        next(e, "2026-06-01 08:00:00").unwrap(),
        "2026-07-06 08:00:00"
    );
}

#[test]
fn parse_errors_name_field_and_problem() {
    assert_eq!(
        err("0 0 25 * * ?"),
        "invalid cron expression '0 0 25 * * ?': hour 25 out of range 0-23"
    );
    assert!(err("0 0 12 * *").ends_with("found 5"));
    assert!(err("0 0 12 * * ? 2026 x").ends_with("found 8"));
    assert!(err("").ends_with("found 0"));
    assert!(err("60 * * * * ?").ends_with("second 60 out of range 0-59"));
    assert!(err("0 99999999999 * * * ?").ends_with("minute 99999999999 out of range 0-59"));
    assert!(err("0 0 12 32 * ?").ends_with("day-of-month 32 out of range 1-31"));
    assert!(err("0 0 12 0 * ?").ends_with("day-of-month 0 out of range 1-31"));
    assert!(err("0 0 12 ? 13 *").ends_with("month 13 out of range 1-12"));
    assert!(err("0 0 12 ? * 8").ends_with("day-of-week 8 out of range 1-7 (1=SUN, 7=SAT)"));
    assert!(err("0 0 12 ? * 0").contains("day-of-week 0 out of range"));
    assert!(err("0 0 12 ? * * 1969").ends_with("year 1969 out of range 1970-2199"));
    assert!(err("0 0 12 ? * * 2005-2002").ends_with("year range 2005-2002 runs backwards"));
    assert!(err("0 0 12 * * *").contains(
        "Support for specifying both a day-of-week AND a day-of-month parameter is not \
         implemented."
    ));
    assert!(err("0 0 12 1 * MON").contains("both a day-of-week AND a day-of-month"));
    assert!(err("0 0 12 ? * ?")
        .ends_with("'?' can only be specified for Day-of-Month -OR- Day-of-Week."));
    assert!(err("0 0 12 ? FOO *").ends_with("unknown month 'FOO' (use 1-12 or JAN-DEC)"));
    assert!(err("0 0 12 ? * FUN").contains("unknown day-of-week 'FUN'"));
    assert!(err("0 0 12 ? * MONDAY").contains("unknown day-of-week 'MONDAY'"));
    assert!(err("0 0 12 ? * 6#6").contains("the number after '#' must be 1-5"));
    assert!(err("0 0 12 ? * 6#0").contains("the number after '#' must be 1-5"));
    assert!(err("0 0 12 ? * 6#").contains("the number after '#' must be 1-5"));
    assert!(err("0 0 12 ? * 1#2,3#4").contains("'#' cannot be combined"));
    assert!(err("0 0 12 ? * 2-4#2").contains("'#' must follow a single day"));
    assert!(err("0 0 12 ? * 2,6L").contains("'L' cannot be combined"));
    assert!(err("0 0 12 ? * 2-6L").contains("'L' must follow a single day"));
    assert!(err("0 0 12 1-5W * ?").contains("'W' must follow a single day"));
    assert!(err("0 0 12 */2W * ?").contains("'W' must follow a single day"));
    assert!(err("0 0 12 32W * ?").ends_with("day-of-month 32 out of range 1-31"));
    assert!(err("0 0 12 L-31 * ?").contains("out of range (at most L-30)"));
    assert!(err("0 0 12 5L * ?").contains("'L' must be written L, L-n, LW or L-nW"));
    assert!(err("0 0 12 L3 * ?").contains("'L' must be written"));
    assert!(err("? 0 12 * * ?").contains("second: '?' can only be used in day-of-month"));
    assert!(err("L 0 12 * * ?").contains("second: 'L' can only be used"));
    assert!(err("0 0 12W * * ?").contains("hour: 'W' can only be used in day-of-month"));
    assert!(err("0 0 12 6#3 * ?").contains("day-of-month: '#' can only be used"));
    assert!(err("0/0 * * * * ?").ends_with("second step 0 out of range 1-59"));
    assert!(err("0/60 * * * * ?").ends_with("second step 60 out of range 1-59"));
    assert!(err("0/x * * * * ?").contains("second step 'X' after '/' must be a number"));
    assert!(err("0 0 0/24 * * ?").ends_with("hour step 24 out of range 1-23"));
    assert!(err("1,,2 * * * * ?").contains("second has an empty list item in '1,,2'"));
    assert!(err("-5 * * * * ?").contains("second is missing a value"));
    assert!(err("0 0 12 ?,1 * MON").contains("'?' must stand alone"));
    assert!(err("0 0 12 ? * MON?").contains("'?' must stand alone"));
}

#[test]
fn display_round_trips_and_from_str() {
    let cron: CronExpr = "0 15 10 ? * 6#3".parse().unwrap();
    assert_eq!(cron.to_string(), "0 15 10 ? * 6#3");
    assert_eq!(cron.as_str(), "0 15 10 ? * 6#3");
    // Leading/trailing/tab white space is accepted, as by Quartz's tokenizer.
    assert!(CronExpr::parse("  0\t0 12 * * ?  ").is_ok());
    let e = CronExpr::parse("0 0 25 * * ?").unwrap_err();
    assert_eq!(e.expression(), "0 0 25 * * ?");
    assert_eq!(e.problem(), "hour 25 out of range 0-23");
}

#[test]
fn zones_change_the_instant() {
    let shanghai: Tz = "Asia/Shanghai".parse().unwrap();
    let new_york: Tz = "America/New_York".parse().unwrap();
    let from = utc("2026-06-01 00:00:00");
    assert_eq!(
        next_in("0 0 9 * * ?", from.with_timezone(&shanghai)),
        "2026-06-01T09:00:00+08:00"
    );
    assert_eq!(
        next_in("0 0 9 * * ?", from.with_timezone(&new_york)),
        "2026-06-01T09:00:00-04:00"
    );
}

#[test]
fn spring_forward_skips_missing_wall_time() {
    let ny: Tz = "America/New_York".parse().unwrap();
    // 2026-03-08 02:00 EST jumps to 03:00 EDT; 02:30 does not exist that day.
    let e = "0 30 2 * * ?";
    assert_eq!(
        next_in(e, local(ny, "2026-03-07 02:30:00")),
        "2026-03-09T02:30:00-04:00"
    );
    assert_eq!(
        next_in(e, local(ny, "2026-03-08 00:00:00")),
        "2026-03-09T02:30:00-04:00"
    );
    // Instants stay contiguous across the gap.
    assert_eq!(
        next_in("* * * * * ?", local(ny, "2026-03-08 01:59:59")),
        "2026-03-08T03:00:00-04:00"
    );
    assert_eq!(
        next_in("0 0/30 * * * ?", local(ny, "2026-03-08 01:30:00")),
        "2026-03-08T03:00:00-04:00"
    );
    // An hour-only schedule that lands in the gap is skipped, the next hour fires.
    assert_eq!(
        next_in("0 0 2,3 * * ?", local(ny, "2026-03-08 00:00:00")),
        "2026-03-08T03:00:00-04:00"
    );
}

#[test]
fn fall_back_fires_once() {
    let ny: Tz = "America/New_York".parse().unwrap();
    // 2026-11-01 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    let e = "0 30 1 * * ?";
    let first = CronExpr::parse(e)
        .unwrap()
        .next_after(&local(ny, "2026-11-01 00:00:00"))
        .unwrap();
    assert_eq!(first.to_rfc3339(), "2026-11-01T01:30:00-04:00");
    assert_eq!(next_in(e, first), "2026-11-02T01:30:00-05:00");
    // From inside the repeated hour (01:10 EST, 06:10Z).
    let in_repeat = utc("2026-11-01 06:10:00").with_timezone(&ny);
    assert_eq!(next_in(e, in_repeat), "2026-11-02T01:30:00-05:00");
    // Quarter-hours inside the repeated hour do not fire again; 02:00 EST is next.
    assert_eq!(
        next_in("0 */15 * * * ?", in_repeat),
        "2026-11-01T02:00:00-05:00"
    );
    assert_eq!(
        next_in("0 */15 * * * ?", local(ny, "2026-11-01 01:50:00")),
        "2026-11-01T02:00:00-05:00"
    );
    assert_eq!(
        next_in("0 */15 * * * ?", local(ny, "2026-11-01 01:40:00")),
        "2026-11-01T01:45:00-04:00"
    );
}

#[test]
fn samoa_skipped_a_whole_day() {
    // Pacific/Apia went from UTC-10 to UTC+14 after 2011-12-29 23:59:59.
    let apia: Tz = "Pacific/Apia".parse().unwrap();
    assert_eq!(
        next_in("0 0 12 * * ?", local(apia, "2011-12-29 12:00:00")),
        "2011-12-31T12:00:00+14:00"
    );
    assert_eq!(
        next_in("* * * * * ?", local(apia, "2011-12-29 23:59:59")),
        "2011-12-31T00:00:00+14:00"
    );
}
