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
}

impl FromStr for CronExpr {
    type Err = CronError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CronExpr::parse(s)
    }
}

impl fmt::Display for CronExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

mod evaluator;
mod parser;

use parser::build;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
