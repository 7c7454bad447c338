//! Quartz `CronExpression`: the cron dialect of XXL-JOB ("borrowed from quartz v2.5.2").
//!
//! Written from scratch rather than on the `cron` crate: that crate has no `L`, `W` or `#`,
//! numbers days of week differently from Quartz (Quartz: 1 = SUN … 7 = SAT) and does not
//! enforce Quartz's "exactly one of day-of-month / day-of-week is `?`" rule, so an expression
//! saved under XXL-JOB would silently mean something else.
//!
//! # Syntax
//! `second minute hour day-of-month month day-of-week [year]`, separated by white space,
//! case-insensitive.
//!
//! | field        | values                 | special characters        |
//! |--------------|------------------------|---------------------------|
//! | second       | 0-59                   | `, - * /`                 |
//! | minute       | 0-59                   | `, - * /`                 |
//! | hour         | 0-23                   | `, - * /`                 |
//! | day-of-month | 1-31                   | `, - * / ? L W`           |
//! | month        | 1-12 or JAN-DEC        | `, - * /`                 |
//! | day-of-week  | 1-7 or SUN-SAT (1=SUN) | `, - * / ? L #`           |
//! | year         | 1970-2199              | `, - * /`                 |
//!
//! `a/b` starts at `a` and steps by `b` to the field's maximum (`7/6` in month is July only,
//! as in Quartz); `*/b` and `/b` start at the minimum; `a-b/c` steps within a range. A range
//! whose end is below its start wraps (`22-2` hours, `FRI-MON`), except for years.
//! Day-of-month accepts lists mixing `n`, ranges, `L` (last day), `L-n` (n days before the
//! last, n ≤ 30), `nW` (weekday nearest to day n, never crossing into another month), `LW` and
//! `L-nW`. Day-of-week accepts a list of days, or exactly one of `L` alone (= 7 = Saturday, as
//! in Quartz), `nL` (last such day of the month) or `n#k` (k-th such day, k = 1..5; no fire in
//! months without a k-th one). Exactly one of day-of-month and day-of-week must be `?`.
//! Day-of-month `L` picks the real last day of every month (XXL-JOB 3.4.0's fix: short months are
//! not skipped); `n` above a month's length and `nW` with `n` above it never match that month.
//!
//! # Time zones and daylight saving
//! [`CronExpr::next_after`] matches wall-clock time in the zone of its argument:
//! - a wall time that does not exist (spring-forward gap) is skipped, not shifted: `0 30 2 * * ?`
//!   in America/New_York does not fire on the day the clocks jump from 02:00 to 03:00. Quartz
//!   does the same for expressions with a fixed hour.
//! - a wall time that occurs twice (fall-back fold) fires once, at its first occurrence (the
//!   earlier, daylight-time offset); the repeated hour fires nothing.
//!
//! # Deliberate differences from Quartz
//! - Stricter parsing. Quartz ignores trailing text in several places (`MONDAY` reads as `MON`,
//!   `1-5W` as `1-5`, `6#3,2` as the 3rd Monday); here these are errors, as are empty list items,
//!   step 0, years outside 1970-2199 and `#` combined with other days of week. More than 7
//!   fields is an error in both.
//! - Names are accepted wherever a number is (`MON-5`, `JAN/3`, `MON-FRI/2`).
//! - `nW` is found even when the search starts between the weekday and `n` (e.g. after the 2nd
//!   when the 1st is a Saturday, `1W` is the 3rd); Quartz 2.5 skips that month.
//! - Years end at 2199 instead of "current year + 100".

use std::fmt;
use std::str::FromStr;

use chrono::{
    DateTime, Datelike, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeDelta, TimeZone,
    Timelike,
};

/// The first year a cron expression can fire in.
pub const MIN_YEAR: i32 = 1970;
/// The last year a cron expression can fire in.
pub const MAX_YEAR: i32 = 2199;

const YEAR_WORDS: usize = ((MAX_YEAR - MIN_YEAR) as usize) / 64 + 1;

/// A cron expression Quartz would reject, or that this implementation cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid cron expression '{expr}': {problem}")]
pub struct CronError {
    expr: String,
    problem: String,
}

impl CronError {
    /// The expression as given.
    pub fn expression(&self) -> &str {
        &self.expr
    }

    /// What is wrong with it, without the expression.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// A parsed Quartz cron expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronExpr {
    source: String,
    seconds: u64,
    minutes: u64,
    hours: u64,
    months: u64,
    days: Days,
    years: [u64; YEAR_WORDS],
}

/// Which days of a month match; bit `n` of a mask stands for value `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Days {
    /// Day-of-month rule (day-of-week is `?`).
    OfMonth {
        days: u64,
        from_last: u64,
        nearest: u64,
        nearest_from_last: u64,
    },
    /// Day-of-week list (day-of-month is `?`); bits 1..=7, 1 = Sunday.
    Weekdays(u64),
    /// `nL`: the last such weekday of the month.
    LastWeekday(u32),
    /// `n#k`: the k-th such weekday of the month.
    NthWeekday(u32, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
    Year,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Second => "second",
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
            Field::Year => "year",
        }
    }

    fn bounds(self) -> (u32, u32) {
        match self {
            Field::Second | Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::DayOfMonth => (1, 31),
            Field::Month => (1, 12),
            Field::DayOfWeek => (1, 7),
            Field::Year => (MIN_YEAR as u32, MAX_YEAR as u32),
        }
    }

    /// Quartz's increment limits ("Increment > 60" etc.).
    fn max_step(self) -> u32 {
        match self {
            Field::Second | Field::Minute => 59,
            Field::Hour => 23,
            Field::DayOfMonth => 31,
            Field::Month => 12,
            Field::DayOfWeek => 7,
            Field::Year => (MAX_YEAR - MIN_YEAR) as u32,
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Field::DayOfWeek => " (1=SUN, 7=SAT)",
            _ => "",
        }
    }

    fn name_value(self, text: &str) -> Option<u32> {
        const MONTHS: [&str; 12] = [
            "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
        ];
        const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
        let names: &[&str] = match self {
            Field::Month => &MONTHS,
            Field::DayOfWeek => &DAYS,
            _ => return None,
        };
        names.iter().position(|n| *n == text).map(|i| i as u32 + 1)
    }
}

impl CronExpr {
    /// Parses a 6- or 7-field Quartz cron expression.
    pub fn parse(expr: &str) -> Result<CronExpr, CronError> {
        build(expr).map_err(|problem| CronError {
            expr: expr.to_string(),
            problem,
        })
    }

    /// The expression as it was given to [`CronExpr::parse`].
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The first fire time strictly after `after`, as wall-clock time in `after`'s zone.
    ///
    /// Fire times are whole seconds; a sub-second `after` is treated as Quartz does (the search
    /// starts at the next whole second). `None` when nothing matches up to [`MAX_YEAR`].
    pub fn next_after<Tz: TimeZone>(&self, after: &DateTime<Tz>) -> Option<DateTime<Tz>> {
        let tz = after.timezone();
        let start = after
            .naive_utc()
            .with_nanosecond(0)?
            .checked_add_signed(TimeDelta::seconds(1))?;
        let mut from = tz.from_utc_datetime(&start).naive_local();
        loop {
            let candidate = self.next_local(from)?;
            let step = candidate.checked_add_signed(TimeDelta::seconds(1))?;
            from = match tz.from_local_datetime(&candidate) {
                LocalResult::Single(fire) if fire.naive_utc() >= start => return Some(fire),
                LocalResult::Ambiguous(first, _) if first.naive_utc() >= start => {
                    return Some(first)
                }
                // The first occurrence of this wall time is already behind us and a fold fires
                // once, so nothing before the fold's end can fire.
                LocalResult::Ambiguous(first, second) => {
                    fold_end(&tz, first.naive_utc(), second.naive_utc()).max(step)
                }
                LocalResult::None => gap_end(&tz, candidate).max(step),
                LocalResult::Single(_) => step,
            };
        }
    }

    /// The first wall-clock time at or after `from` that matches every field.
    fn next_local(&self, from: NaiveDateTime) -> Option<NaiveDateTime> {
        let mut year = from.year();
        let (mut month, mut day) = (from.month(), from.day());
        let (mut hour, mut minute, mut second) = (from.hour(), from.minute(), from.second());
        // Each pass either returns or moves to the first candidate of a later unit, so the loop
        // runs a handful of times per month or year skipped.
        loop {
            let y = next_year(&self.years, year)?;
            if y != year {
                (year, month, day, hour, minute, second) = (y, 1, 1, 0, 0, 0);
            }
            match next_bit(self.months, month) {
                None => {
                    (year, month, day, hour, minute, second) = (year + 1, 1, 1, 0, 0, 0);
                    continue;
                }
                Some(m) if m != month => (month, day, hour, minute, second) = (m, 1, 0, 0, 0),
                Some(_) => {}
            }
            match next_bit(self.day_mask(year, month), day) {
                None => {
                    if month == 12 {
                        (year, month) = (year + 1, 1);
                    } else {
                        month += 1;
                    }
                    (day, hour, minute, second) = (1, 0, 0, 0);
                    continue;
                }
                Some(d) if d != day => (day, hour, minute, second) = (d, 0, 0, 0),
                Some(_) => {}
            }
            match next_bit(self.hours, hour) {
                None => {
                    (day, hour, minute, second) = (day + 1, 0, 0, 0);
                    continue;
                }
                Some(h) if h != hour => (hour, minute, second) = (h, 0, 0),
                Some(_) => {}
            }
            match next_bit(self.minutes, minute) {
                None => {
                    (hour, minute, second) = (hour + 1, 0, 0);
                    continue;
                }
                Some(m) if m != minute => (minute, second) = (m, 0),
                Some(_) => {}
            }
            match next_bit(self.seconds, second) {
                None => {
                    (minute, second) = (minute + 1, 0);
                    continue;
                }
                Some(s) => second = s,
            }
            return NaiveDate::from_ymd_opt(year, month, day)?.and_hms_opt(hour, minute, second);
        }
    }

    /// The matching days of one month, bit `d` for day `d`.
    fn day_mask(&self, year: i32, month: u32) -> u64 {
        let Some(first) = NaiveDate::from_ymd_opt(year, month, 1) else {
            return 0;
        };
        let last = days_in_month(year, month);
        let first_dow = first.weekday().num_days_from_sunday() + 1;
        let dow = |day: u32| (first_dow + day - 2) % 7 + 1;
        let nearest_weekday = |day: u32| match dow(day) {
            7 if day == 1 => 3,
            7 => day - 1,
            1 if day == last => day - 2,
            1 => day + 1,
            _ => day,
        };
        match self.days {
            Days::OfMonth {
                days,
                from_last,
                nearest,
                nearest_from_last,
            } => {
                let mut mask = days & bits_through(last);
                for offset in bits(from_last).filter(|&o| o < last) {
                    mask |= 1 << (last - offset);
                }
                for day in bits(nearest).filter(|&d| d <= last) {
                    mask |= 1 << nearest_weekday(day);
                }
                for offset in bits(nearest_from_last).filter(|&o| o < last) {
                    mask |= 1 << nearest_weekday(last - offset);
                }
                mask
            }
            Days::Weekdays(set) => (1..=last)
                .filter(|&d| set & (1 << dow(d)) != 0)
                .fold(0, |mask, d| mask | 1 << d),
            Days::LastWeekday(weekday) => 1 << (last - (dow(last) + 7 - weekday) % 7),
            Days::NthWeekday(weekday, nth) => {
                let day = 1 + (weekday + 7 - first_dow) % 7 + 7 * (nth - 1);
                if day <= last {
                    1 << day
                } else {
                    0
                }
            }
        }
    }
}

impl FromStr for CronExpr {
    type Err = CronError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CronExpr::parse(s)
    }
}

impl fmt::Display for CronExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn build(expr: &str) -> Result<CronExpr, String> {
    let upper = expr.to_ascii_uppercase();
    let fields: Vec<&str> = upper.split_whitespace().collect();
    if !(6..=7).contains(&fields.len()) {
        return Err(format!(
            "expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), \
             found {}",
            fields.len()
        ));
    }
    let seconds = parse_mask(Field::Second, fields[0])?;
    let minutes = parse_mask(Field::Minute, fields[1])?;
    let hours = parse_mask(Field::Hour, fields[2])?;
    let of_month = match fields[3] {
        "?" => None,
        text => Some(parse_day_of_month(text)?),
    };
    let months = parse_mask(Field::Month, fields[4])?;
    let of_week = match fields[5] {
        "?" => None,
        text => Some(parse_day_of_week(text)?),
    };
    let years = parse_years(fields.get(6).copied().unwrap_or("*"))?;
    let days = match (of_month, of_week) {
        (Some(days), None) | (None, Some(days)) => days,
        (None, None) => {
            return Err("'?' can only be specified for Day-of-Month -OR- Day-of-Week.".into())
        }
        (Some(_), Some(_)) => {
            return Err(
                "Support for specifying both a day-of-week AND a day-of-month parameter \
                        is not implemented. Put '?' in one of the two fields."
                    .into(),
            )
        }
    };
    Ok(CronExpr {
        source: expr.to_string(),
        seconds,
        minutes,
        hours,
        months,
        days,
        years,
    })
}

/// Catches special characters in fields that do not take them, for a clearer message.
fn reject_misplaced(field: Field, text: &str) -> Result<(), String> {
    let day_field = matches!(field, Field::DayOfMonth | Field::DayOfWeek);
    let named = matches!(field, Field::Month | Field::DayOfWeek);
    if text.contains('?') && !day_field {
        return Err(format!(
            "{}: '?' can only be used in day-of-month or day-of-week",
            field.name()
        ));
    }
    // Month and day names contain L (JUL) and W (WED), so only name-less fields are checked.
    if text.contains('L') && !day_field && !named {
        return Err(format!(
            "{}: 'L' can only be used in day-of-month or day-of-week",
            field.name()
        ));
    }
    if text.contains('W') && field != Field::DayOfMonth && field != Field::DayOfWeek {
        return Err(format!(
            "{}: 'W' can only be used in day-of-month",
            field.name()
        ));
    }
    if text.contains('#') && field != Field::DayOfWeek {
        return Err(format!(
            "{}: '#' can only be used in day-of-week",
            field.name()
        ));
    }
    Ok(())
}

fn parse_mask(field: Field, text: &str) -> Result<u64, String> {
    reject_misplaced(field, text)?;
    let mut mask = 0u64;
    parse_list(field, text, &mut |v| mask |= 1 << v)?;
    Ok(mask)
}

fn parse_years(text: &str) -> Result<[u64; YEAR_WORDS], String> {
    reject_misplaced(Field::Year, text)?;
    let mut years = [0u64; YEAR_WORDS];
    parse_list(Field::Year, text, &mut |v| {
        let i = (v - MIN_YEAR as u32) as usize;
        years[i / 64] |= 1 << (i % 64);
    })?;
    Ok(years)
}

fn parse_list(field: Field, text: &str, add: &mut dyn FnMut(u32)) -> Result<(), String> {
    for item in text.split(',') {
        parse_item(field, item, text, add)?;
    }
    Ok(())
}

/// One list item: `*`, `*/s`, `/s`, `a`, `a/s`, `a-b` or `a-b/s`.
fn parse_item(
    field: Field,
    item: &str,
    text: &str,
    add: &mut dyn FnMut(u32),
) -> Result<(), String> {
    if item.is_empty() {
        return Err(format!(
            "{} has an empty list item in '{}'",
            field.name(),
            text
        ));
    }
    let (lo, hi) = field.bounds();
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => (range, Some(parse_step(field, step)?)),
        None => (item, None),
    };
    let (start, end) = if range == "*" || (range.is_empty() && step.is_some()) {
        (lo, hi)
    } else if let Some((a, b)) = range.split_once('-') {
        (parse_value(field, a)?, parse_value(field, b)?)
    } else {
        let a = parse_value(field, range)?;
        (a, if step.is_some() { hi } else { a })
    };
    let span = hi - lo + 1;
    let end = if end >= start {
        end
    } else if field == Field::Year {
        return Err(format!("year range {start}-{end} runs backwards"));
    } else {
        end + span
    };
    let step = step.unwrap_or(1);
    let mut v = start;
    while v <= end {
        add(lo + (v - lo) % span);
        v += step;
    }
    Ok(())
}

fn parse_step(field: Field, text: &str) -> Result<u32, String> {
    let max = field.max_step();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{} step '{}' after '/' must be a number from 1 to {}",
            field.name(),
            text,
            max
        ));
    }
    match text.parse::<u32>() {
        Ok(step) if (1..=max).contains(&step) => Ok(step),
        _ => Err(format!(
            "{} step {} out of range 1-{}",
            field.name(),
            text,
            max
        )),
    }
}

/// A number or (month, day-of-week) a three-letter name, checked against the field's bounds.
fn parse_value(field: Field, text: &str) -> Result<u32, String> {
    if text.is_empty() {
        return Err(format!("{} is missing a value", field.name()));
    }
    let value = if text.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for u32 is simply out of range.
        text.parse::<u32>().unwrap_or(u32::MAX)
    } else if let Some(value) = field.name_value(text) {
        value
    } else {
        return Err(match field {
            Field::Month => format!("unknown month '{text}' (use 1-12 or JAN-DEC)"),
            Field::DayOfWeek => {
                format!("unknown day-of-week '{text}' (use 1-7 or SUN-SAT; 1=SUN)")
            }
            _ => format!("{} value '{}' is not valid", field.name(), text),
        });
    };
    let (lo, hi) = field.bounds();
    if value < lo || value > hi {
        return Err(format!(
            "{} {} out of range {}-{}{}",
            field.name(),
            text,
            lo,
            hi,
            field.hint()
        ));
    }
    Ok(value)
}

fn parse_day_of_month(text: &str) -> Result<Days, String> {
    let field = Field::DayOfMonth;
    reject_misplaced(field, text)?;
    if text.contains('?') {
        return Err("day-of-month: '?' must stand alone".into());
    }
    let (mut days, mut from_last, mut nearest, mut nearest_from_last) = (0u64, 0u64, 0u64, 0u64);
    for item in text.split(',') {
        if let Some(rest) = item.strip_prefix('L') {
            let (offset, weekday) = match rest.strip_suffix('W') {
                Some(offset) => (offset, true),
                None => (rest, false),
            };
            let offset = match offset.strip_prefix('-') {
                None if offset.is_empty() => 0,
                Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    match n.parse::<u32>() {
                        Ok(n) if n <= 30 => n,
                        _ => {
                            return Err(format!(
                                "day-of-month offset '{item}' out of range (at most L-30)"
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "day-of-month '{item}': 'L' must be written L, L-n, LW or L-nW"
                    ))
                }
            };
            if weekday {
                nearest_from_last |= 1 << offset;
            } else {
                from_last |= 1 << offset;
            }
        } else if item.contains('L') {
            return Err(format!(
                "day-of-month '{item}': 'L' must be written L, L-n, LW or L-nW"
            ));
        } else if let Some(day) = item.strip_suffix('W') {
            if day.is_empty() || !day.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "day-of-month '{item}': 'W' must follow a single day (e.g. 15W) or L"
                ));
            }
            nearest |= 1 << parse_value(field, day)?;
        } else if item.contains('W') {
            return Err(format!(
                "day-of-month '{item}': 'W' must follow a single day (e.g. 15W) or L"
            ));
        } else {
            parse_item(field, item, text, &mut |v| days |= 1 << v)?;
        }
    }
    Ok(Days::OfMonth {
        days,
        from_last,
        nearest,
        nearest_from_last,
    })
}

fn parse_day_of_week(text: &str) -> Result<Days, String> {
    let field = Field::DayOfWeek;
    reject_misplaced(field, text)?;
    if text.contains('?') {
        return Err("day-of-week: '?' must stand alone".into());
    }
    // `#` and `L` take one day, as Quartz documents; `example` shows the accepted form.
    let single = |day: &str, mark: char, example: &str| {
        if day.contains(['-', '/', '*']) {
            Err(format!(
                "day-of-week '{text}': '{mark}' must follow a single day (e.g. {example})"
            ))
        } else {
            parse_value(field, day)
        }
    };
    if text.contains('#') {
        if text.contains(',') {
            return Err(format!(
                "day-of-week '{text}': '#' cannot be combined with other days"
            ));
        }
        let (day, nth) = text.split_once('#').unwrap_or((text, ""));
        let weekday = single(day, '#', "6#3")?;
        let nth = Some(nth)
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| (1..=5).contains(n));
        return match nth {
            Some(nth) => Ok(Days::NthWeekday(weekday, nth)),
            None => Err(format!(
                "day-of-week '{text}': the number after '#' must be 1-5 (e.g. 6#3 = third Friday)"
            )),
        };
    }
    if text.contains('L') {
        if text.contains(',') {
            return Err(format!(
                "day-of-week '{text}': 'L' cannot be combined with other days"
            ));
        }
        if text == "L" {
            return Ok(Days::Weekdays(1 << 7));
        }
        return match text.strip_suffix('L') {
            Some(day) if !day.contains('L') => Ok(Days::LastWeekday(single(day, 'L', "6L")?)),
            _ => Err(format!(
                "day-of-week '{text}': 'L' must be alone or follow a single day (e.g. 6L)"
            )),
        };
    }
    let mut mask = 0u64;
    parse_list(field, text, &mut |v| mask |= 1 << v)?;
    Ok(Days::Weekdays(mask))
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Bits 1..=n set.
fn bits_through(n: u32) -> u64 {
    ((1u64 << (n + 1)) - 1) & !1
}

fn bits(mut mask: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let bit = mask.trailing_zeros();
            mask &= mask - 1;
            bit
        })
    })
}

/// The lowest set bit at or above `from`.
fn next_bit(mask: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let rest = mask & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros())
}

fn next_year(years: &[u64; YEAR_WORDS], from: i32) -> Option<i32> {
    let from = from.max(MIN_YEAR);
    if from > MAX_YEAR {
        return None;
    }
    let index = (from - MIN_YEAR) as u32;
    let (mut word, mut bit) = ((index / 64) as usize, index % 64);
    while word < YEAR_WORDS {
        if let Some(b) = next_bit(years[word], bit) {
            return Some(MIN_YEAR + (word as i32) * 64 + b as i32);
        }
        (word, bit) = (word + 1, 0);
    }
    None
}

fn offset_secs<Tz: TimeZone>(tz: &Tz, utc: &NaiveDateTime) -> i32 {
    tz.offset_from_utc_datetime(utc).fix().local_minus_utc()
}

/// Smallest whole-second instant in `(lo, hi]` where `pred` holds, given `!pred(lo)` and
/// `pred(hi)` and a predicate that flips once in between.
fn bisect(
    mut lo: NaiveDateTime,
    mut hi: NaiveDateTime,
    pred: impl Fn(&NaiveDateTime) -> bool,
) -> NaiveDateTime {
    while (hi - lo).num_seconds() > 1 {
        let mid = lo + TimeDelta::seconds((hi - lo).num_seconds() / 2);
        if pred(&mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The wall time at which a fold ends: the clock time, in the earlier offset, of the transition
/// between the two UTC instants that share one wall time.
fn fold_end<Tz: TimeZone>(tz: &Tz, first: NaiveDateTime, second: NaiveDateTime) -> NaiveDateTime {
    let before = offset_secs(tz, &first);
    let transition = bisect(first, second, |u| offset_secs(tz, u) != before);
    transition + TimeDelta::seconds(i64::from(before))
}

/// The first wall time after `missing` that exists, `missing` lying in a spring-forward gap.
fn gap_end<Tz: TimeZone>(tz: &Tz, missing: NaiveDateTime) -> NaiveDateTime {
    // Real offsets lie within ±14 h and gaps last at most a day (Samoa, 2011), so a 26-hour
    // margin brackets the transition.
    let margin = TimeDelta::hours(26);
    let local = |u: &NaiveDateTime| tz.from_utc_datetime(u).naive_local();
    let fallback = missing + TimeDelta::seconds(1);
    let (Some(lo), Some(hi)) = (
        missing.checked_sub_signed(margin),
        missing.checked_add_signed(margin),
    ) else {
        return fallback;
    };
    if local(&lo) > missing || local(&hi) <= missing {
        return fallback;
    }
    local(&bisect(lo, hi, |u| local(u) > missing))
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
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
}
