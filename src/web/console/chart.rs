//! The dashboard's chart of runs per day, laid out here and drawn as SVG by its template (so
//! no chart library reaches the browser, and every label passes the template's escaping).

use chrono::NaiveDate;

/// One day's run counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayCounts {
    /// The day, in the admin's zone.
    pub day: NaiveDate,
    /// Successful runs.
    pub success: i64,
    /// Failed runs.
    pub fail: i64,
    /// Runs without a result yet.
    pub running: i64,
}

/// A filled rectangle of one bar: one outcome of one day.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Top edge.
    pub y: f64,
    /// Height.
    pub h: f64,
    /// CSS class naming the outcome (`ok`, `fail`, `run`).
    pub class: &'static str,
}

/// One day's stacked bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Left edge.
    pub x: f64,
    /// Width.
    pub w: f64,
    /// Centre, where the day's label goes.
    pub mid: f64,
    /// Outcomes from the bottom up; empty for a day without runs.
    pub segments: Vec<Segment>,
    /// The day's label under the bar (`MM-DD`), or empty where labels would crowd.
    pub label: String,
    /// The bar's tooltip: date and the three counts.
    pub title: String,
}

/// A horizontal grid line with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Height of the line.
    pub y: f64,
    /// The count it marks.
    pub value: i64,
}

/// The laid-out chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Drawing width (the SVG's viewBox).
    pub width: f64,
    /// Drawing height.
    pub height: f64,
    /// Left edge of the plot (room for the tick labels).
    pub left: f64,
    /// Bottom of the plot.
    pub base: f64,
    /// One per day, oldest first.
    pub bars: Vec<Bar>,
    /// Grid lines from 0 up.
    pub ticks: Vec<Tick>,
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 48.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 24.0;
/// Most day labels under the bars before every n-th is left out.
const MAX_LABELS: usize = 15;

/// The smallest "round" step (1, 2 or 5 × 10ⁿ) that covers `max` in at most four steps.
fn tick_step(max: i64) -> i64 {
    let mut unit = 1;
    loop {
        for m in [1, 2, 5] {
            if m * unit * 4 >= max {
                return m * unit;
            }
        }
        unit *= 10;
    }
}

/// Lays out `days` (oldest first) as stacked bars scaled to the busiest day.
pub fn lay_out(days: &[DayCounts]) -> Chart {
    let total = |d: &DayCounts| d.success + d.fail + d.running;
    let max = days.iter().map(total).max().unwrap_or(0).max(1);
    let step = tick_step(max);
    let top_value = step * ((max + step - 1) / step);
    let base = HEIGHT - BOTTOM;
    let scale = (base - TOP) / top_value as f64;
    let slot = (WIDTH - LEFT) / days.len().max(1) as f64;
    let every = days.len().div_ceil(MAX_LABELS).max(1);
    let bars = days
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut y = base;
            let mut segments = Vec::new();
            for (count, class) in [(d.success, "ok"), (d.fail, "fail"), (d.running, "run")] {
                if count > 0 {
                    let h = count as f64 * scale;
                    y -= h;
                    segments.push(Segment { y, h, class });
                }
            }
            let x = LEFT + slot * i as f64 + slot * 0.15;
            Bar {
                x,
                w: slot * 0.7,
                mid: x + slot * 0.35,
                segments,
                label: if (days.len() - 1 - i) % every == 0 {
                    d.day.format("%m-%d").to_string()
                } else {
                    String::new()
                },
                title: format!("{}: {} ✓ {} ✗ {} …", d.day, d.success, d.fail, d.running),
            }
        })
        .collect();
    let ticks = (0..=top_value / step)
        .map(|k| Tick {
            y: base - (k * step) as f64 * scale,
            value: k * step,
        })
        .collect();
    Chart {
        width: WIDTH,
        height: HEIGHT,
        left: LEFT,
        base,
        bars,
        ticks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(n: u32, success: i64, fail: i64, running: i64) -> DayCounts {
        DayCounts {
            day: NaiveDate::from_ymd_opt(2026, 11, n).unwrap(),
            success,
            fail,
            running,
        }
    }

    #[test]
    fn steps_are_round_and_cover_the_maximum() {
        assert_eq!(tick_step(1), 1);
        assert_eq!(tick_step(7), 2);
        assert_eq!(tick_step(13), 5);
        assert_eq!(tick_step(1_000), 500);
        assert_eq!(tick_step(86_400), 50_000);
    }

    #[test]
    fn bars_stack_outcomes_scaled_to_the_busiest_day() {
        let chart = lay_out(&[day(1, 30, 10, 0), day(2, 0, 0, 0), day(3, 5, 0, 5)]);
        assert_eq!(chart.bars.len(), 3);
        let busiest = &chart.bars[0];
        assert_eq!(busiest.segments.len(), 2);
        assert_eq!(busiest.segments[0].class, "ok");
        assert_eq!(busiest.segments[1].class, "fail");
        // success sits on the base line, failures on top of it
        let ok = &busiest.segments[0];
        assert!((ok.y + ok.h - chart.base).abs() < 1e-9);
        assert!((busiest.segments[1].y + busiest.segments[1].h - ok.y).abs() < 1e-9);
        // 30 is three times 10: heights keep the ratio
        assert!((ok.h / busiest.segments[1].h - 3.0).abs() < 1e-9);
        assert!(chart.bars[1].segments.is_empty());
        assert_eq!(chart.bars[2].segments[1].class, "run");
        // the top grid line is at or above the busiest day
        let top = chart.ticks.last().unwrap();
        assert!(top.value >= 40 && top.y <= busiest.segments[1].y);
        assert_eq!(chart.bars[0].label, "11-01");
        assert!(chart.bars[0].title.contains("30 ✓ 10 ✗"));
    }

    #[test]
    fn long_ranges_label_some_days_and_end_on_the_newest() {
        let days: Vec<_> = (1..=30).map(|n| day(n, n.into(), 0, 0)).collect();
        let chart = lay_out(&days);
        let labelled = chart.bars.iter().filter(|b| !b.label.is_empty()).count();
        assert!(labelled <= MAX_LABELS, "{labelled} labels");
        assert_eq!(chart.bars.last().unwrap().label, "11-30");
        assert!(chart.bars.iter().all(|b| b.x >= LEFT && b.x + b.w <= WIDTH));
    }

    #[test]
    fn no_runs_at_all_still_draws_a_scale() {
        let chart = lay_out(&[day(1, 0, 0, 0)]);
        assert_eq!(chart.ticks.first().unwrap().value, 0);
        assert!(chart.ticks.len() >= 2);
    }
}
