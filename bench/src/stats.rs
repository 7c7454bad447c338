//! Figures from raw samples: percentiles, duplicate/gap checks of fires, markdown tables and a
//! hand-written SVG histogram.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// Order statistics of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// How many values.
    pub count: usize,
    /// Smallest value.
    pub min: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

/// The nearest-rank percentile `p` (0-100) of an ascending, non-empty sample.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Lateness of fires (ms) by their scheduled second, within a run's window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lateness {
    /// Every fire scheduled in the window.
    pub all: Vec<f64>,
    /// The fires of the steady window only (the window without its first and last seconds).
    pub steady: Vec<f64>,
    /// Lateness p99 of each scheduled second of the window, in order.
    pub per_second_p99: Vec<f64>,
}

impl Lateness {
    /// Keeps the `(scheduled second ms, lateness ms)` fires scheduled in `[start, end)`; the
    /// steady window skips `skip_ms` at each end.
    pub fn of(
        fires: impl IntoIterator<Item = (i64, f64)>,
        (start, end): (i64, i64),
        skip_ms: i64,
    ) -> Lateness {
        let mut out = Lateness::default();
        let mut by_second: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
        for (second, late) in fires {
            if second < start || second >= end {
                continue;
            }
            out.all.push(late);
            by_second.entry(second).or_default().push(late);
            if second >= start + skip_ms && second < end - skip_ms {
                out.steady.push(late);
            }
        }
        out.per_second_p99 = by_second
            .values()
            .filter_map(|v| summarize(v).map(|s| s.p99))
            .collect();
        out
    }
}

/// Summary of a sample, `None` when it is empty.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(Summary {
        count: sorted.len(),
        min: sorted[0],
        p50: percentile(&sorted, 50.0),
        p99: percentile(&sorted, 99.0),
        max: sorted[sorted.len() - 1],
        mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
    })
}

/// Duplicates and gaps among fires `(job, scheduled second in epoch ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FireCheck {
    /// Fires beyond the first for the same job and second (anywhere in the run).
    pub duplicates: usize,
    /// (job, second) pairs of the window with no fire.
    pub gaps: usize,
    /// (job, second) pairs the window should hold: jobs x seconds.
    pub expected: usize,
    /// (job, second) pairs of the window that fired at least once.
    pub seen: usize,
}

/// Checks fires against "every job fires every second of `[from_ms, to_ms)`" (whole seconds).
pub fn check_fires(
    fires: impl IntoIterator<Item = (i32, i64)>,
    jobs: &[i32],
    from_ms: i64,
    to_ms: i64,
) -> FireCheck {
    let mut count: HashMap<(i32, i64), usize> = HashMap::new();
    for key in fires {
        *count.entry(key).or_default() += 1;
    }
    let duplicates = count.values().map(|n| n - 1).sum();
    let first = from_ms.div_euclid(1_000) * 1_000 + if from_ms % 1_000 == 0 { 0 } else { 1_000 };
    let seconds: Vec<i64> = (first..to_ms).step_by(1_000).collect();
    let jobs: HashSet<i32> = jobs.iter().copied().collect();
    let mut seen = 0;
    for job in &jobs {
        for s in &seconds {
            if count.contains_key(&(*job, *s)) {
                seen += 1;
            }
        }
    }
    let expected = jobs.len() * seconds.len();
    FireCheck {
        duplicates,
        gaps: expected - seen,
        expected,
        seen,
    }
}

/// A table printed as markdown, so it can be pasted into BENCHMARKS.md as is.
#[derive(Debug, Clone)]
pub struct Table {
    title: String,
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with a title and column headers.
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells print empty, extra cells are kept).
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as aligned markdown, title first.
    pub fn render(&self) -> String {
        let cols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.headers.len()])
            .max()
            .unwrap_or(0);
        let cell = |row: &[String], i: usize| row.get(i).cloned().unwrap_or_default();
        let mut width = vec![3; cols];
        for row in self.rows.iter().chain([&self.headers]) {
            for (i, w) in width.iter_mut().enumerate() {
                *w = (*w).max(cell(row, i).chars().count());
            }
        }
        let line = |row: &[String]| {
            let mut s = String::from("|");
            for (i, w) in width.iter().enumerate() {
                let c = cell(row, i);
                let pad = w - c.chars().count();
                let _ = write!(s, " {c}{} |", " ".repeat(pad));
            }
            s
        };
        let mut out = format!("### {}\n\n{}\n|", self.title, line(&self.headers));
        for w in &width {
            let _ = write!(out, "{}|", "-".repeat(w + 2));
        }
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }
}

/// Milliseconds with one decimal.
pub fn ms(v: f64) -> String {
    format!("{v:.1}")
}

/// One sample series of a histogram.
pub struct Series<'a> {
    /// Legend text.
    pub label: &'a str,
    /// The values (ms).
    pub values: &'a [f64],
    /// Fill colour, e.g. `#1f77b4`.
    pub color: &'a str,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An SVG histogram of several series over `bins` equal bins from 0 to `upper` ms; values at or
/// above `upper` land in a last "overflow" bin. Bar heights are each series' share of its values.
pub fn histogram_svg(title: &str, series: &[Series<'_>], upper: f64, bins: usize) -> String {
    let bins = bins.max(1);
    let upper = if upper > 0.0 { upper } else { 1.0 };
    let (w, h, left, right, top, bottom) = (900.0, 420.0, 60.0, 20.0, 50.0, 60.0);
    let plot_w = w - left - right;
    let plot_h = h - top - bottom;
    let slots = bins + 1; // + overflow
    let mut shares: Vec<Vec<f64>> = Vec::new();
    for s in series {
        let mut counts = vec![0usize; slots];
        for v in s.values {
            let i = if *v >= upper || !v.is_finite() {
                bins
            } else {
                ((v.max(0.0) / upper) * bins as f64) as usize
            };
            counts[i.min(bins)] += 1;
        }
        let n = s.values.len().max(1) as f64;
        shares.push(counts.iter().map(|c| *c as f64 / n * 100.0).collect());
    }
    let top_share = shares
        .iter()
        .flatten()
        .copied()
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let y_max = (top_share / 10.0).ceil() * 10.0;
    let slot_w = plot_w / slots as f64;
    let bar_w = slot_w / series.len().max(1) as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    // y grid and labels
    for k in 0..=5 {
        let share = y_max * k as f64 / 5.0;
        let y = top + plot_h - plot_h * k as f64 / 5.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{share:.0}%</text>"##,
            left + plot_w,
            left - 6.0,
            y + 4.0
        );
    }
    for (si, s) in series.iter().enumerate() {
        for (i, share) in shares[si].iter().enumerate() {
            if *share <= 0.0 {
                continue;
            }
            let bh = plot_h * share / y_max;
            let x = left + slot_w * i as f64 + bar_w * si as f64;
            let _ = writeln!(
                svg,
                r#"<rect x="{x:.2}" y="{:.2}" width="{:.2}" height="{bh:.2}" fill="{}"/>"#,
                top + plot_h - bh,
                (bar_w - 0.5).max(0.5),
                escape(s.color)
            );
        }
    }
    // x labels: every few bins, plus the overflow bin
    let step = (bins / 10).max(1);
    for i in (0..=bins).step_by(step) {
        let x = left + slot_w * i as f64;
        let _ = writeln!(
            svg,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            top + plot_h + 16.0,
            trim_number(upper * i as f64 / bins as f64)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">&gt;{}</text>"#,
        left + slot_w * (bins as f64 + 0.5),
        top + plot_h + 32.0,
        trim_number(upper)
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">lateness after the scheduled second (ms)</text>"#,
        left + plot_w / 2.0,
        h - 10.0
    );
    for (si, s) in series.iter().enumerate() {
        let y = top + 8.0 + 18.0 * si as f64;
        let x = left + 20.0;
        let _ = writeln!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{} (n={})</text>"#,
            y - 10.0,
            escape(s.color),
            x + 18.0,
            y,
            escape(s.label),
            s.values.len()
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The smallest of 1, 2, 5 x 10^k at or above `v` (a round axis end), at least 1.
pub fn nice_ceiling(v: f64) -> f64 {
    if v.is_nan() || v <= 1.0 {
        return 1.0;
    }
    let mut base = 10f64.powf(v.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            if base * m >= v - 1e-9 {
                return base * m;
            }
        }
        base *= 10.0;
    }
}

fn trim_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_keeps_the_window_and_groups_by_second() {
        let fires = [
            (0, 50.0), // before the window
            (1_000, 1.0),
            (1_000, 3.0),
            (2_000, 2.0),
            (3_000, 4.0),
            (4_000, 9.0), // at its end: outside
        ];
        let l = Lateness::of(fires, (1_000, 4_000), 1_000);
        assert_eq!(l.all, vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(l.steady, vec![2.0]);
        assert_eq!(l.per_second_p99, vec![3.0, 2.0, 4.0]);
        assert_eq!(Lateness::of([], (0, 1_000), 0), Lateness::default());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (s.count, s.min, s.p50, s.max, s.mean),
            (3, 1.0, 2.0, 3.0, 2.0)
        );
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn fires_are_checked_for_duplicates_and_gaps() {
        // jobs 1 and 2 over seconds 10..14 (window [10_000, 14_000)): 8 expected pairs
        let mut fires = Vec::new();
        for s in 10..14 {
            fires.push((1, s * 1_000));
        }
        fires.push((1, 11_000)); // duplicate
        fires.push((2, 10_000));
        fires.push((2, 13_000)); // job 2 misses 11 and 12
        fires.push((2, 20_000)); // outside the window: no gap filled, no duplicate
        let c = check_fires(fires, &[1, 2], 10_000, 14_000);
        assert_eq!(
            c,
            FireCheck {
                duplicates: 1,
                gaps: 2,
                expected: 8,
                seen: 6
            }
        );
        // a window not on whole seconds starts at the next one
        let c = check_fires([(1, 11_000)], &[1], 10_500, 12_000);
        assert_eq!((c.expected, c.gaps), (1, 0));
        // a job that never fired is all gaps
        let c = check_fires(Vec::new(), &[5], 0, 3_000);
        assert_eq!((c.expected, c.gaps, c.duplicates), (3, 3, 0));
    }

    #[test]
    fn axis_ends_are_round() {
        assert_eq!(nice_ceiling(703.0), 1_000.0);
        assert_eq!(nice_ceiling(120.0), 200.0);
        assert_eq!(nice_ceiling(45.0), 50.0);
        assert_eq!(nice_ceiling(20.0), 20.0);
        assert_eq!(nice_ceiling(0.3), 1.0);
        assert_eq!(nice_ceiling(f64::NAN), 1.0);
    }

    #[test]
    fn tables_render_as_aligned_markdown() {
        let mut t = Table::new("T", &["a", "long header"]);
        t.row(["1", "x"]);
        t.row(["12345"]);
        let out = t.render();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "### T");
        assert_eq!(lines[2], "| a     | long header |");
        assert_eq!(lines[3], "|-------|-------------|");
        assert_eq!(lines[4], "| 1     | x           |");
        assert_eq!(lines[5], "| 12345 |             |");
    }

    #[test]
    fn histogram_is_svg_with_one_bar_per_filled_bin() {
        let a = [0.5, 0.7, 1.5, 99.0];
        let b = [2.5];
        let svg = histogram_svg(
            "lateness <p99>",
            &[
                Series {
                    label: "jobwheel",
                    values: &a,
                    color: "#1f77b4",
                },
                Series {
                    label: "other & co",
                    values: &b,
                    color: "#ff7f0e",
                },
            ],
            4.0,
            4,
        );
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("lateness &lt;p99&gt;"));
        assert!(svg.contains("other &amp; co (n=1)"));
        // a: bins 0, 1 and overflow; b: bin 2 -> 4 bars, plus background and 2 legend boxes
        assert_eq!(svg.matches("<rect").count(), 4 + 1 + 2);
        // the tallest share (b's only bin: 100%) sets the axis end
        assert!(svg.contains(">100%<"));
        assert!(!svg.contains(">120%<"));
        // empty input still yields a valid document
        let empty = histogram_svg("none", &[], 0.0, 0);
        assert!(empty.contains("</svg>"));
    }
}
