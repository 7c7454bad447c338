//! Finding fire times: the next matching wall-clock time, field by field, then its instant in the
//! zone (skipping a spring-forward gap, firing a fall-back fold once).

use super::*;

impl CronExpr {
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
    pub(super) fn day_mask(&self, year: i32, month: u32) -> u64 {
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

pub(super) fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

pub(super) fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Bits 1..=n set.
pub(super) fn bits_through(n: u32) -> u64 {
    ((1u64 << (n + 1)) - 1) & !1
}

pub(super) fn bits(mut mask: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let bit = mask.trailing_zeros();
            mask &= mask - 1;
            bit
        })
    })
}

/// The lowest set bit at or above `from`.
pub(super) fn next_bit(mask: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let rest = mask & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros())
}

pub(super) fn next_year(years: &[u64; YEAR_WORDS], from: i32) -> Option<i32> {
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

pub(super) fn offset_secs<Tz: TimeZone>(tz: &Tz, utc: &NaiveDateTime) -> i32 {
    tz.offset_from_utc_datetime(utc).fix().local_minus_utc()
}

/// Smallest whole-second instant in `(lo, hi]` where `pred` holds, given `!pred(lo)` and
/// `pred(hi)` and a predicate that flips once in between.
pub(super) fn bisect(
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
pub(super) fn fold_end<Tz: TimeZone>(
    tz: &Tz,
    first: NaiveDateTime,
    second: NaiveDateTime,
) -> NaiveDateTime {
    let before = offset_secs(tz, &first);
    let transition = bisect(first, second, |u| offset_secs(tz, u) != before);
    transition + TimeDelta::seconds(i64::from(before))
}

/// The first wall time after `missing` that exists, `missing` lying in a spring-forward gap.
pub(super) fn gap_end<Tz: TimeZone>(tz: &Tz, missing: NaiveDateTime) -> NaiveDateTime {
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
