//! Producing and consuming through the listener: codecs, idempotent retries, kill -9, limits, SSL, and
//! connectors on either side.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rdkafka::error::RDKafkaErrorCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;
use crate::common::{append_lines, create_through, file_sink, file_source, lines, tempdir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_codec_produced_with_acks_all_is_consumed_with_assign() {
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[], 0).await;
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let topic = format!("codec-{codec}");
        let values = numbered(codec, 300);
        let (b, t, v) = (w.bootstrap.clone(), topic.clone(), values.clone());
        blocking(move || {
            let p = producer(&b, &[("compression.codec", codec)]);
            produce_all(&p, &t, &v);
        })
        .await;
        let b = w.bootstrap.clone();
        let t = topic.clone();
        let got = blocking(move || consume(&b, &[], &t, 1, 300)).await;
        let offsets: Vec<i64> = got.iter().map(|g| g.1).collect();
        assert_eq!(offsets, (0..300).collect::<Vec<i64>>(), "{codec}");
        let got_values: Vec<String> = got.iter().map(|g| g.3.clone()).collect();
        assert_eq!(got_values, values, "{codec}");
        assert_eq!(got[7].2.as_deref(), Some("k7"), "{codec}");
    }
    // The same records over REST, with the same offsets.
    let (status, body) = w
        .api
        .get("/topics/codec-zstd/partitions/0")
        .await
        .expect("request");
    assert_eq!(status, 200, "{body}");
    w.stop().await;
}

/// A TCP relay between clients and the listener that can lose the next answer and cut the connection,
/// as a network failure after the broker stored a batch does.
struct Proxy {
    listener: TcpListener,
    drop_next: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl Proxy {
    async fn bind() -> Proxy {
        Proxy {
            listener: TcpListener::bind("127.0.0.1:0").await.unwrap(),
            drop_next: Arc::new(AtomicUsize::new(0)),
            dropped: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn port(&self) -> u16 {
        self.listener.local_addr().unwrap().port()
    }

    fn run(self, upstream: String) -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let (drop_next, dropped) = (self.drop_next.clone(), self.dropped.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = self.listener.accept().await {
                let server = TcpStream::connect(&upstream).await.unwrap();
                let (drop_next, dropped) = (self.drop_next.clone(), self.dropped.clone());
                tokio::spawn(relay(client, server, drop_next, dropped));
            }
        });
        (drop_next, dropped)
    }
}

async fn relay(
    client: TcpStream,
    server: TcpStream,
    drop_next: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
) {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let up = tokio::spawn(async move { tokio::io::copy(&mut cr, &mut sw).await });
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match sr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let lose = drop_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |d| d.checked_sub(1))
            .is_ok();
        if lose {
            dropped.fetch_add(1, Ordering::SeqCst);
            break;
        }
        if cw.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    up.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_batch_retried_after_a_lost_answer_is_stored_once() {
    let dir = tempdir();
    let proxy = Proxy::bind().await;
    let advertised = format!("PLAINTEXT://127.0.0.1:{}", proxy.port());
    let w = KafkaWorker::start(
        dir.path(),
        &[("kafka.advertised.listeners", advertised.as_str())],
        0,
    )
    .await;
    let via = format!("127.0.0.1:{}", proxy.port());
    let (drop_next, dropped) = proxy.run(w.bootstrap.clone());
    let p = {
        let via = via.clone();
        blocking(move || {
            producer(
                &via,
                &[("enable.idempotence", "true"), ("retry.backoff.ms", "50")],
            )
        })
        .await
    };
    let p = Arc::new(p);
    let first = numbered("first", 10);
    let (p1, f) = (p.clone(), first.clone());
    blocking(move || produce_all(&p1, "idem", &f)).await;
    // The answer to the next request (the produce below) is lost with its connection.
    drop_next.store(1, Ordering::SeqCst);
    let second = numbered("second", 50);
    let (p2, s) = (p.clone(), second.clone());
    blocking(move || produce_all(&p2, "idem", &s)).await;
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "an answer was lost");
    wait_for_records(&w.db, "idem", 60).await;
    let b = w.bootstrap.clone();
    let got = blocking(move || consume(&b, &[], "idem", 1, 61)).await;
    let values: Vec<String> = got.iter().map(|g| g.3.clone()).collect();
    let expected: Vec<String> = first.into_iter().chain(second).collect();
    assert_eq!(values, expected, "each record once, in order");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_acknowledged_before_kill_9_are_all_there_after_restart() {
    let dir = tempdir();
    let props = format!(
        "{}kafka.listeners=PLAINTEXT://127.0.0.1:0\n",
        common::binary_props(dir.path())
    );
    let bin = common::start_binary_with(dir.path(), &props, &[], 2);
    let bootstrap = bin.urls[1].trim_start_matches("PLAINTEXT://").to_string();
    bin.healthy_api().await;
    let values = numbered("acked", 500);
    let (b, v) = (bootstrap.clone(), values.clone());
    blocking(move || produce_all(&producer(&b, &[("linger.ms", "0")]), "durable", &v)).await;
    bin.kill();
    let bin = common::start_binary_with(dir.path(), &props, &[], 2);
    let bootstrap = bin.urls[1].trim_start_matches("PLAINTEXT://").to_string();
    bin.healthy_api().await;
    let got = blocking(move || consume(&bootstrap, &[], "durable", 1, 500)).await;
    let got: Vec<String> = got.into_iter().map(|g| g.3).collect();
    assert_eq!(got, values);
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_over_message_max_bytes_is_refused_and_others_go_on() {
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[("message.max.bytes", "10000")], 0).await;
    let value = "x".repeat(50_000);
    let b = w.bootstrap.clone();
    let outcomes = blocking(move || {
        let big: BaseProducer<Deliveries> = ClientConfig::new()
            .set("bootstrap.servers", &b)
            .set("message.send.max.retries", "0")
            .create_with_context(Deliveries::default())
            .unwrap();
        big.send(BaseRecord::<(), _>::to("limits").payload(&value))
            .map_err(|(e, _)| e)
            .unwrap();
        let _ = big.flush(DEADLINE);
        let got = big.context().0.lock().unwrap().clone();
        got
    })
    .await;
    assert_eq!(
        outcomes,
        vec![Err(KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageSizeTooLarge
        ))]
    );
    // A raw frame bigger than the limit allows closes that connection only.
    let mut raw = TcpStream::connect(&w.bootstrap).await.unwrap();
    raw.write_all(&(64i32 << 20).to_be_bytes()).await.unwrap();
    let mut buf = [0u8; 1];
    assert_eq!(raw.read(&mut buf).await.unwrap_or(0), 0, "closed");
    let small = numbered("small", 5);
    let (b, s) = (w.bootstrap.clone(), small.clone());
    blocking(move || produce_all(&producer(&b, &[]), "limits", &s)).await;
    let b = w.bootstrap.clone();
    let got = blocking(move || consume(&b, &[], "limits", 1, 5)).await;
    assert_eq!(got.into_iter().map(|g| g.3).collect::<Vec<_>>(), small);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ssl_listener_serves_clients_that_trust_its_ca() {
    let dir = tempdir();
    let ca = common::certs::Ca::new("kafka-listener-test-ca");
    let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"]);
    let w = KafkaWorker::start(
        dir.path(),
        &[
            ("kafka.listeners", "SSL://127.0.0.1:0"),
            (
                "kafka.listeners.ssl.ssl.keystore.certificate.chain",
                cert.as_str(),
            ),
            ("kafka.listeners.ssl.ssl.keystore.key", key.as_str()),
        ],
        0,
    )
    .await;
    let ca_pem = ca.pem();
    let values = numbered("tls", 20);
    let (b, v, pem) = (w.bootstrap.clone(), values.clone(), ca_pem.clone());
    let got = blocking(move || {
        let tls = [
            ("security.protocol", "ssl"),
            ("ssl.ca.pem", pem.as_str()),
            ("ssl.endpoint.identification.algorithm", "none"),
        ];
        produce_all(&producer(&b, &tls), "secure", &v);
        consume(&b, &tls, "secure", 1, 20)
    })
    .await;
    assert_eq!(got.into_iter().map(|g| g.3).collect::<Vec<_>>(), values);
    // A plaintext client gets nothing from it.
    let b = w.bootstrap.clone();
    let plain = blocking(move || deliver_one(&b, "secure")).await;
    assert!(plain.is_err(), "a plaintext client is not served");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kafka_client_feeds_a_file_sink_and_reads_a_file_source() {
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[], 0).await;
    let (input, output) = (dir.path().join("in.txt"), dir.path().join("out.txt"));
    create_through(&w.api, file_sink("sink", &output, "from-client")).await;
    let values = numbered("to-file", 40);
    let (b, v) = (w.bootstrap.clone(), values.clone());
    blocking(move || produce_all(&producer(&b, &[]), "from-client", &v)).await;
    let out = output.clone();
    wait_for("the sink to write every record", DEADLINE, || {
        let out = out.clone();
        let expected = values.clone();
        async move { (lines(&out) == expected).then_some(()) }
    })
    .await;
    create_through(&w.api, file_source("source", &input, "to-client")).await;
    let from_file = numbered("from-file", 30);
    append_lines(&input, from_file.clone());
    let b = w.bootstrap.clone();
    let got = blocking(move || consume(&b, &[], "to-client", 1, 30)).await;
    assert_eq!(
        got.iter().map(|g| g.3.clone()).collect::<Vec<_>>(),
        from_file
    );
    assert_eq!(got.last().map(|g| g.1), Some(29), "the log's offsets");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_fetch_is_answered_when_a_record_is_appended() {
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[], 0).await;
    let b = w.bootstrap.clone();
    blocking(move || produce_all(&producer(&b, &[]), "poll", &numbered("before", 1))).await;
    let b = w.bootstrap.clone();
    // Fetches wait up to 20 s for a record; the one produced below must end the wait long before.
    let reader = tokio::task::spawn_blocking(move || {
        let settings = [("fetch.wait.max.ms", "20000")];
        let started = std::time::Instant::now();
        let got = consume(&b, &settings, "poll", 1, 2);
        (got, started.elapsed())
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let b = w.bootstrap.clone();
    blocking(move || produce_all(&producer(&b, &[]), "poll", &numbered("after", 1))).await;
    let (got, took) = reader.await.unwrap();
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        took < Duration::from_secs(12),
        "woken by the append, not by max_wait_ms: {took:?}"
    );
    w.stop().await;
}

/// Small fetches (a few records each) make the listener read ahead after every answer; a seek back
/// mid-stream must drop what was read ahead and answer from the new offset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_fetches_and_a_seek_back_read_every_record_in_order() {
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[], 0).await;
    let values = numbered("ahead", 3000);
    let (b, v) = (w.bootstrap.clone(), values.clone());
    blocking(move || produce_all(&producer(&b, &[]), "ahead", &v)).await;
    let b = w.bootstrap.clone();
    // librdkafka wants fetch.max.bytes at least message.max.bytes, whose least is 1000.
    let small = [
        ("message.max.bytes", "1000"),
        ("fetch.max.bytes", "2000"),
        ("max.partition.fetch.bytes", "2000"),
    ];
    let got = blocking(move || consume(&b, &small, "ahead", 1, 3000)).await;
    let offsets: Vec<i64> = got.iter().map(|g| g.1).collect();
    assert_eq!(offsets, (0..3000).collect::<Vec<i64>>());
    let got_values: Vec<String> = got.iter().map(|g| g.3.clone()).collect();
    assert_eq!(got_values, values);

    let b = w.bootstrap.clone();
    let (first, again) = blocking(move || {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &b)
            .set("group.id", "read-ahead-seek")
            .set("enable.auto.commit", "false")
            .set("message.max.bytes", "1000")
            .set("fetch.max.bytes", "2000")
            .set("max.partition.fetch.bytes", "2000")
            .create()
            .expect("consumer");
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("ahead", 0, Offset::Beginning)
            .unwrap();
        consumer.assign(&tpl).expect("assign");
        let next = |consumer: &BaseConsumer, n: usize| {
            let mut got = Vec::new();
            let end = std::time::Instant::now() + DEADLINE;
            while got.len() < n && std::time::Instant::now() < end {
                if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                    got.push((
                        m.offset(),
                        String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
                    ));
                }
            }
            got
        };
        let first = next(&consumer, 500);
        consumer
            .seek("ahead", 0, Offset::Offset(100), Duration::from_secs(10))
            .expect("seek");
        (first, next(&consumer, 200))
    })
    .await;
    assert_eq!(
        first.iter().map(|g| g.0).collect::<Vec<_>>(),
        (0..500).collect::<Vec<i64>>()
    );
    // Records already fetched before the seek may still be queued in the client; from the first record
    // at offset 100 on, the answers follow the new position.
    let from = again
        .iter()
        .position(|g| g.0 == 100)
        .expect("offset 100 read again after the seek");
    let after: Vec<(i64, String)> = again[from..].to_vec();
    assert!(after.len() >= 100, "{} records after the seek", after.len());
    for (i, (offset, value)) in after.iter().enumerate() {
        assert_eq!(*offset, 100 + i as i64);
        assert_eq!(value, &values[*offset as usize]);
    }
    w.stop().await;
}
