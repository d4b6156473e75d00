//! The results table: rows with their baselines and targets, medians, and repeated measurements.

use std::fmt::Write as _;

use crate::Res;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    AtLeast(f64),
    AtMost(f64),
    Below(f64),
    /// The value divided by the baseline is at least this.
    RatioAtLeast(f64),
}

#[derive(Clone, Debug)]
pub(crate) struct Row {
    scenario: &'static str,
    metric: String,
    unit: &'static str,
    value: f64,
    baseline: Option<(String, f64)>,
    targets: Vec<Target>,
}

pub(crate) fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        let s = format!("{:.0}", v);
        let bytes = s.as_bytes();
        let mut out = String::new();
        for (i, c) in bytes.iter().enumerate() {
            if i > 0 && (bytes.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(*c as char);
        }
        out
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

impl Row {
    pub(crate) fn new(
        scenario: &'static str,
        metric: impl Into<String>,
        unit: &'static str,
        value: f64,
    ) -> Row {
        Row {
            scenario,
            metric: metric.into(),
            unit,
            value,
            baseline: None,
            targets: Vec::new(),
        }
    }
    /// The `  p50 latency` and `  p99 latency` rows (ms) under a throughput row; `medians` gives a
    /// figure of [`Load`] as `(measured, baseline)` medians.
    pub(crate) fn latencies(
        scenario: &'static str,
        baseline: &str,
        medians: impl Fn(fn(&Load) -> f64) -> (f64, f64),
    ) -> [Row; 2] {
        let p50: fn(&Load) -> f64 = |l| l.p50_ms;
        let p99: fn(&Load) -> f64 = |l| l.p99_ms;
        [("  p50 latency", p50), ("  p99 latency", p99)].map(|(metric, figure)| {
            let (value, base) = medians(figure);
            Row::new(scenario, metric, "ms", value).baseline(baseline, base)
        })
    }
    pub(crate) fn baseline(mut self, what: impl Into<String>, value: f64) -> Row {
        self.baseline = Some((what.into(), value));
        self
    }
    pub(crate) fn target(mut self, t: Target) -> Row {
        self.targets.push(t);
        self
    }
    fn ratio(&self) -> Option<f64> {
        self.baseline
            .as_ref()
            .map(|(_, b)| if *b == 0.0 { f64::NAN } else { self.value / b })
    }
    fn verdict(&self) -> (String, String) {
        let mut text = Vec::new();
        let mut met = true;
        for t in &self.targets {
            let (desc, ok) = match *t {
                Target::AtLeast(x) => (format!("≥ {} {}", fmt_num(x), self.unit), self.value >= x),
                Target::AtMost(x) => (format!("≤ {} {}", fmt_num(x), self.unit), self.value <= x),
                Target::Below(x) => (format!("< {} {}", fmt_num(x), self.unit), self.value < x),
                Target::RatioAtLeast(x) => (
                    format!("≥ {:.0}% of baseline", x * 100.0),
                    self.ratio().is_some_and(|r| r >= x),
                ),
            };
            met &= ok;
            text.push(desc);
        }
        if text.is_empty() {
            (String::new(), String::new())
        } else {
            (
                text.join(", "),
                if met { "met".into() } else { "MISSED".into() },
            )
        }
    }
}

pub(crate) fn print_table(rows: &[Row]) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| scenario | metric | liteconnect | baseline | ratio | target | |"
    );
    let _ = writeln!(out, "| --- | --- | ---: | --- | ---: | --- | --- |");
    for r in rows {
        let baseline = r
            .baseline
            .as_ref()
            .map(|(what, v)| format!("{} {} ({what})", fmt_num(*v), r.unit))
            .unwrap_or_default();
        let ratio = r.ratio().map(|x| format!("{x:.2}")).unwrap_or_default();
        let (target, verdict) = r.verdict();
        let _ = writeln!(
            out,
            "| {} | {} | {} {} | {} | {} | {} | {} |",
            r.scenario,
            r.metric,
            fmt_num(r.value),
            r.unit,
            baseline,
            ratio,
            target,
            verdict
        );
    }
    println!("{out}");
}

pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// What one load window of HTTP requests measured.
pub(crate) struct Load {
    /// Requests answered per second.
    pub(crate) rate: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    /// Requests that failed or got an unexpected status.
    pub(crate) errors: usize,
}

impl Load {
    /// The figures of a window that took `elapsed` seconds, from each request's latency in µs.
    pub(crate) fn of(mut latencies: Vec<u32>, errors: usize, elapsed: f64) -> Load {
        latencies.sort_unstable();
        Load {
            rate: latencies.len() as f64 / elapsed,
            p50_ms: percentile(&latencies, 0.50) / 1000.0,
            p99_ms: percentile(&latencies, 0.99) / 1000.0,
            errors,
        }
    }
}

/// The µs since `t`, for a latency sample.
pub(crate) fn micros_since(t: std::time::Instant) -> u32 {
    t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32
}

pub(crate) fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i.min(sorted.len() - 1)])
}

pub(crate) async fn measure<F, Fut>(label: &str, runs: usize, mut f: F) -> Res<f64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Res<f64>>,
{
    let mut xs = Vec::new();
    for i in 0..runs {
        let x = f().await?;
        eprintln!("  {label} run {}/{runs}: {}", i + 1, fmt_num(x));
        xs.push(x);
    }
    Ok(median(xs))
}
