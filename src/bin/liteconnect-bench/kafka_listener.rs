//! The Kafka listener's scenarios. `kafka-produce`: one librdkafka producer sends 100-byte records with
//! acks=all, against a bare batched SQLite insert of the same rows and against librdkafka's mock cluster,
//! with the latency of single records at linger.ms=0. `kafka-consume`: one consumer reads them back with
//! `assign()`, against a bare SQLite read and the mock cluster.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{Offset, TopicPartitionList};

use crate::baseline::{sqlite_insert_baseline, sqlite_read_baseline};
use crate::report::{fmt_num, median, micros_since, percentile, Row, Target};
use crate::worker::{TempDir, Worker};
use crate::{Res, Settings};

const TOPIC: &str = "bench";
/// Bytes per record value.
const RECORD_BYTES: usize = 100;
const MOCK: &str = "librdkafka mock cluster";

/// Counts acknowledged and failed deliveries.
#[derive(Default)]
struct Acks {
    ok: AtomicUsize,
    failed: AtomicUsize,
}

impl ClientContext for Acks {}

impl ProducerContext for Acks {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        let counter = if result.is_ok() {
            &self.ok
        } else {
            &self.failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

fn producer(bootstrap: &str, linger_ms: &str) -> Res<BaseProducer<Acks>> {
    Ok(ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("linger.ms", linger_ms)
        .set("queue.buffering.max.messages", "1000000")
        .create_with_context(Acks::default())?)
}

fn values(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{i:0width$}", width = RECORD_BYTES).into_bytes())
        .collect()
}

/// Produces every value with acks=all; returns records per second.
fn produce_rate(bootstrap: &str, values: &[Vec<u8>]) -> Res<f64> {
    let p = producer(bootstrap, "5")?;
    let started = Instant::now();
    for v in values {
        let mut record = BaseRecord::<(), _>::to(TOPIC).partition(0).payload(v);
        loop {
            match p.send(record) {
                Ok(()) => break,
                Err((_, r)) => {
                    record = r;
                    p.poll(Duration::from_millis(1));
                }
            }
        }
    }
    p.flush(Duration::from_secs(600))?;
    let elapsed = started.elapsed().as_secs_f64();
    let failed = p.context().failed.load(Ordering::Relaxed);
    if failed > 0 {
        return Err(format!("{failed} records were not acknowledged").into());
    }
    Ok(values.len() as f64 / elapsed)
}

/// Sends `n` records one at a time with linger.ms=0, each after the last was acknowledged; returns the
/// p50 and p99 latencies in ms.
fn produce_latency(bootstrap: &str, n: usize) -> Res<(f64, f64)> {
    let p = producer(bootstrap, "0")?;
    let value = vec![b'x'; RECORD_BYTES];
    let mut latencies = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        p.send(BaseRecord::<(), _>::to(TOPIC).partition(0).payload(&value))
            .map_err(|(e, _)| e)?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while p.context().ok.load(Ordering::Relaxed) + p.context().failed.load(Ordering::Relaxed)
            <= i
        {
            if Instant::now() > deadline {
                return Err("a record was not acknowledged within 30 s".into());
            }
            p.poll(Duration::from_millis(1));
        }
        latencies.push(micros_since(t));
    }
    latencies.sort_unstable();
    Ok((
        percentile(&latencies, 0.5) / 1000.0,
        percentile(&latencies, 0.99) / 1000.0,
    ))
}

/// Reads up to `n` records of partition 0 from the beginning, until 10 s pass without a record; returns
/// records per second and how many were read.
fn consume_rate(bootstrap: &str, n: usize) -> Res<(f64, usize)> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "bench")
        .set("enable.auto.commit", "false")
        .create()?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(TOPIC, 0, Offset::Beginning)?;
    c.assign(&tpl)?;
    let started = Instant::now();
    let (mut got, mut last) = (0, Instant::now());
    while got < n && last.elapsed() < Duration::from_secs(10) {
        if let Some(Ok(_)) = c.poll(Duration::from_millis(100)) {
            got += 1;
            last = Instant::now();
        }
    }
    let elapsed = if got < n {
        last - started
    } else {
        started.elapsed()
    };
    Ok((got as f64 / elapsed.as_secs_f64().max(1e-9), got))
}

/// A worker with a Kafka listener on a free loopback port; returns it with its bootstrap address.
async fn worker(s: &Settings, dir: &TempDir) -> Res<(Worker, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let bootstrap = format!("127.0.0.1:{port}");
    let listener = format!("PLAINTEXT://{bootstrap}");
    let w = Worker::spawn(
        s,
        dir.path(),
        &dir.path().join("bench.db"),
        &[("kafka.listeners", listener.as_str())],
    )
    .await?;
    w.wait_healthy().await?;
    Ok((w, bootstrap))
}

/// Runs `f` on a blocking thread (the clients block).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Res<T> + Send + 'static) -> Res<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("a client thread panicked: {e}"))?
}

/// What one produce run measured: (records/s, p50 ms, p99 ms), against the listener and the mock.
type ProduceRun = ((f64, f64, f64), (f64, f64, f64));

async fn produce_run(s: &Settings, n: usize, samples: usize) -> Res<ProduceRun> {
    let dir = TempDir::new(s, "kafka-produce")?;
    let (w, bootstrap) = worker(s, &dir).await?;
    let vals = values(n);
    let measured = blocking(move || {
        let rate = produce_rate(&bootstrap, &vals)?;
        let (p50, p99) = produce_latency(&bootstrap, samples)?;
        let mock = MockCluster::new(1)?;
        let mock_bootstrap = mock.bootstrap_servers();
        let mock_rate = produce_rate(&mock_bootstrap, &vals)?;
        let (m50, m99) = produce_latency(&mock_bootstrap, samples)?;
        Ok(((rate, p50, p99), (mock_rate, m50, m99)))
    })
    .await;
    w.stop()?;
    measured
}

pub(crate) async fn produce_scenario(ctx: &mut crate::Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let n = s.lines;
    let samples = (n / 100).clamp(100, 5_000);
    let (mut runs, mut bases) = (Vec::new(), Vec::new());
    for run in 0..s.runs {
        let r = produce_run(&s, n, samples).await?;
        let vals = values(n);
        let base = n as f64 / sqlite_insert_baseline(&s, &vals, None, false)?;
        eprintln!(
            "  kafka-produce run {}/{}: {} records/s (p50 {:.2} ms, p99 {:.2} ms); mock cluster {} records/s; bare insert {} rows/s",
            run + 1,
            s.runs,
            fmt_num(r.0 .0),
            r.0 .1,
            r.0 .2,
            fmt_num(r.1 .0),
            fmt_num(base)
        );
        runs.push(r);
        bases.push(base);
    }
    let med = |f: fn(&ProduceRun) -> f64| median(runs.iter().map(f).collect());
    rows.push(
        Row::new(
            "kafka-produce",
            "one client, 100-byte records, acks=all",
            "records/s",
            med(|r| r.0 .0),
        )
        .baseline("batched SQLite insert", median(bases))
        .target(Target::AtLeast(250_000.0))
        .target(Target::RatioAtLeast(0.5)),
    );
    rows.push(
        Row::new(
            "kafka-produce",
            "  the same client",
            "records/s",
            med(|r| r.0 .0),
        )
        .baseline(MOCK, med(|r| r.1 .0)),
    );
    rows.push(
        Row::new(
            "kafka-produce",
            "  p50 latency, linger.ms=0",
            "ms",
            med(|r| r.0 .1),
        )
        .baseline(MOCK, med(|r| r.1 .1)),
    );
    rows.push(
        Row::new(
            "kafka-produce",
            "  p99 latency, linger.ms=0",
            "ms",
            med(|r| r.0 .2),
        )
        .baseline(MOCK, med(|r| r.1 .2)),
    );
    Ok(())
}

async fn consume_run(s: &Settings, n: usize) -> Res<(f64, f64)> {
    let dir = TempDir::new(s, "kafka-consume")?;
    let (w, bootstrap) = worker(s, &dir).await?;
    let vals = values(n);
    let measured = blocking(move || {
        produce_rate(&bootstrap, &vals)?;
        let (rate, got) = consume_rate(&bootstrap, n)?;
        if got < n {
            return Err(format!("the listener gave {got} of {n} records").into());
        }
        let mock = MockCluster::new(1)?;
        let mock_bootstrap = mock.bootstrap_servers();
        produce_rate(&mock_bootstrap, &vals)?;
        let (mock_rate, mock_got) = consume_rate(&mock_bootstrap, n)?;
        if mock_got < n {
            // The mock cluster stops answering fetches on large partitions; its rate is over what it gave.
            eprintln!("  kafka-consume: the mock cluster gave {mock_got} of {n} records");
        }
        Ok((rate, mock_rate))
    })
    .await;
    w.stop()?;
    measured
}

pub(crate) async fn consume_scenario(ctx: &mut crate::Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let n = s.lines;
    let (mut runs, mut bases) = (Vec::new(), Vec::new());
    for run in 0..s.runs {
        let r = consume_run(&s, n).await?;
        let base = n as f64 / sqlite_read_baseline(&s, n)?;
        eprintln!(
            "  kafka-consume run {}/{}: {} records/s; mock cluster {} records/s; bare read {} rows/s",
            run + 1,
            s.runs,
            fmt_num(r.0),
            fmt_num(r.1),
            fmt_num(base)
        );
        runs.push(r);
        bases.push(base);
    }
    let rate = median(runs.iter().map(|r| r.0).collect());
    rows.push(
        Row::new(
            "kafka-consume",
            "one consumer, assign(), 100-byte records",
            "records/s",
            rate,
        )
        .baseline("bare SQLite read", median(bases))
        .target(Target::AtLeast(500_000.0)),
    );
    rows.push(
        Row::new("kafka-consume", "  the same consumer", "records/s", rate)
            .baseline(MOCK, median(runs.iter().map(|r| r.1).collect())),
    );
    Ok(())
}
