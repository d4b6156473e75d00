//! Kafka's sampled statistics: rates, averages and maxima over two samples of 30 seconds each (Kafka's
//! `metrics.sample.window.ms` and `metrics.num.samples` defaults), so a rate is "per second over the last
//! 30 to 60 seconds" as Kafka Connect reports it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One sample's window (Kafka's `metrics.sample.window.ms` default).
pub const WINDOW: Duration = Duration::from_secs(30);
/// How many samples are kept (Kafka's `metrics.num.samples` default).
const SAMPLES: usize = 2;

#[derive(Clone, Copy, Debug)]
struct Sample {
    start: Instant,
    events: u64,
    sum: f64,
    max: f64,
}

impl Sample {
    fn new(start: Instant) -> Sample {
        Sample {
            start,
            events: 0,
            sum: 0.0,
            max: f64::NEG_INFINITY,
        }
    }
}

#[derive(Debug)]
struct Samples {
    samples: [Sample; SAMPLES],
    current: usize,
}

/// Values recorded into rolling samples: their sum per second ([`Sampled::rate`]), their mean
/// ([`Sampled::avg`]) and their largest ([`Sampled::max`]). Recording takes an uncontended lock once
/// per batch, never per record.
#[derive(Debug)]
pub struct Sampled {
    inner: Mutex<Samples>,
}

impl Default for Sampled {
    fn default() -> Self {
        Sampled::new(Instant::now())
    }
}

impl Sampled {
    /// Empty samples starting at `now`.
    pub fn new(now: Instant) -> Sampled {
        Sampled {
            inner: Mutex::new(Samples {
                samples: [Sample::new(now); SAMPLES],
                current: 0,
            }),
        }
    }

    /// Records one value.
    pub fn record(&self, value: f64) {
        self.record_at(value, Instant::now());
    }

    /// Records one value at `now`.
    pub fn record_at(&self, value: f64, now: Instant) {
        let mut s = self.inner.lock().expect("sample lock");
        let current = s.current;
        if now.saturating_duration_since(s.samples[current].start) >= WINDOW {
            let next = (current + 1) % SAMPLES;
            s.samples[next] = Sample::new(now);
            s.current = next;
        }
        let c = s.current;
        let sample = &mut s.samples[c];
        sample.events += 1;
        sample.sum += value;
        sample.max = sample.max.max(value);
    }

    /// The samples still inside the window at `now` (others left empty), and the start of the oldest.
    fn live(&self, now: Instant) -> ([Option<Sample>; SAMPLES], Instant) {
        let s = self.inner.lock().expect("sample lock");
        let horizon = WINDOW * SAMPLES as u32;
        let mut live = [None; SAMPLES];
        let mut oldest: Option<Instant> = None;
        for (slot, x) in live.iter_mut().zip(&s.samples) {
            if now.saturating_duration_since(x.start) < horizon {
                *slot = Some(*x);
                oldest = Some(oldest.map_or(x.start, |o| o.min(x.start)));
            }
        }
        (live, oldest.unwrap_or(now))
    }

    /// The sum of the recorded values per second, as Kafka's `Rate` measures it: over the time since the
    /// oldest sample began, counted as at least one full window more than a partial first one.
    pub fn rate(&self, now: Instant) -> f64 {
        let (live, oldest) = self.live(now);
        let sum: f64 = live.iter().flatten().map(|x| x.sum).sum();
        let mut elapsed = now.saturating_duration_since(oldest);
        let full = (elapsed.as_millis() / WINDOW.as_millis()) as usize;
        if full < SAMPLES - 1 {
            elapsed += WINDOW * (SAMPLES - 1 - full) as u32;
        }
        sum / elapsed.as_secs_f64()
    }

    /// The mean of the values recorded in the window; NaN when there are none (as Kafka reports it).
    pub fn avg(&self, now: Instant) -> f64 {
        let (live, _) = self.live(now);
        let events: u64 = live.iter().flatten().map(|x| x.events).sum();
        if events == 0 {
            return f64::NAN;
        }
        live.iter().flatten().map(|x| x.sum).sum::<f64>() / events as f64
    }

    /// The largest value recorded in the window; NaN when there is none.
    pub fn max(&self, now: Instant) -> f64 {
        let (live, _) = self.live(now);
        live.iter()
            .flatten()
            .filter(|x| x.events > 0)
            .map(|x| x.max)
            .fold(f64::NAN, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_per_second_over_the_window_and_forgets_old_samples() {
        let t0 = Instant::now();
        let s = Sampled::new(t0);
        // 300 records in the first 10 s: the elapsed time counts as 10 s + one window = 40 s.
        s.record_at(300.0, t0 + Duration::from_secs(10));
        let r = s.rate(t0 + Duration::from_secs(10));
        assert!((r - 300.0 / 40.0).abs() < 1e-9, "{r}");
        // After both samples have aged out, nothing is left.
        assert_eq!(s.rate(t0 + Duration::from_secs(200)), 0.0);
        assert!(s.avg(t0 + Duration::from_secs(200)).is_nan());
    }

    #[test]
    fn avg_and_max_cover_both_samples() {
        let t0 = Instant::now();
        let s = Sampled::new(t0);
        s.record_at(2.0, t0);
        s.record_at(10.0, t0 + Duration::from_secs(35));
        s.record_at(6.0, t0 + Duration::from_secs(40));
        let at = t0 + Duration::from_secs(45);
        assert_eq!(s.max(at), 10.0);
        assert_eq!(s.avg(at), 6.0);
        // A third window replaces the first sample; the second ages out a window later.
        s.record_at(1.0, t0 + Duration::from_secs(70));
        assert_eq!(s.avg(t0 + Duration::from_secs(71)), 17.0 / 3.0);
        assert_eq!(s.avg(t0 + Duration::from_secs(96)), 1.0);
    }
}
