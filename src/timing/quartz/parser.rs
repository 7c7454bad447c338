//! Reading a cron expression: its fields, lists, ranges, steps, names and the special day forms,
//! each error naming its field.

use super::*;

pub(super) fn build(expr: &str) -> Result<CronExpr, String> {
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
pub(super) fn reject_misplaced(field: Field, text: &str) -> Result<(), String> {
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

pub(super) fn parse_mask(field: Field, text: &str) -> Result<u64, String> {
    reject_misplaced(field, text)?;
    let mut mask = 0u64;
    parse_list(field, text, &mut |v| mask |= 1 << v)?;
    Ok(mask)
}

pub(super) fn parse_years(text: &str) -> Result<[u64; YEAR_WORDS], String> {
    reject_misplaced(Field::Year, text)?;
    let mut years = [0u64; YEAR_WORDS];
    parse_list(Field::Year, text, &mut |v| {
        let i = (v - MIN_YEAR as u32) as usize;
        years[i / 64] |= 1 << (i % 64);
    })?;
    Ok(years)
}

pub(super) fn parse_list(field: Field, text: &str, add: &mut dyn FnMut(u32)) -> Result<(), String> {
    for item in text.split(',') {
        parse_item(field, item, text, add)?;
    }
    Ok(())
}

/// One list item: `*`, `*/s`, `/s`, `a`, `a/s`, `a-b` or `a-b/s`.
pub(super) fn parse_item(
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

pub(super) fn parse_step(field: Field, text: &str) -> Result<u32, String> {
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
pub(super) fn parse_value(field: Field, text: &str) -> Result<u32, String> {
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

pub(super) fn parse_day_of_month(text: &str) -> Result<Days, String> {
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

pub(super) fn parse_day_of_week(text: &str) -> Result<Days, String> {
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
