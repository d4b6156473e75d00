//! What tools and UIs ask a broker: Metadata, ListOffsets, DescribeConfigs, topic creation and deletion;
//! and the listener's settings checked at start-up.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;

use super::*;
use crate::common::tempdir;

fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_offsets_and_configs_answer_what_a_ui_needs() {
    let dir = tempdir();
    let w = KafkaWorker::start(
        dir.path(),
        &[("num.partitions", "3"), ("retention.ms", "86400000")],
        0,
    )
    .await;
    let values = numbered("ui", 10);
    let (b, v) = (w.bootstrap.clone(), values.clone());
    let before = liteconnect::model::now_ms();
    blocking(move || produce_all(&producer(&b, &[]), "shown", &v)).await;
    let b = w.bootstrap.clone();
    let (topics, brokers, watermarks, by_time, future) = blocking(move || {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &b)
            .create()
            .unwrap();
        let md = c.fetch_metadata(None, DEADLINE).expect("metadata");
        let topics: Vec<(String, usize, Vec<i32>)> = md
            .topics()
            .iter()
            .map(|t| {
                let leaders = t.partitions().iter().map(|p| p.leader()).collect();
                (t.name().to_string(), t.partitions().len(), leaders)
            })
            .collect();
        let brokers: Vec<(i32, String, i32)> = md
            .brokers()
            .iter()
            .map(|b| (b.id(), b.host().to_string(), b.port()))
            .collect();
        let watermarks = c
            .fetch_watermarks("shown", 0, DEADLINE)
            .expect("watermarks");
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("shown", 0, Offset::Offset(before - 1000))
            .unwrap();
        let by_time = c
            .offsets_for_times(tpl, DEADLINE)
            .expect("offsets for times");
        let by_time = by_time.find_partition("shown", 0).unwrap().offset();
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("shown", 0, Offset::Offset(i64::MAX / 2))
            .unwrap();
        let future = c
            .offsets_for_times(tpl, DEADLINE)
            .expect("offsets for times");
        let future = future.find_partition("shown", 0).unwrap().offset();
        (topics, brokers, watermarks, by_time, future)
    })
    .await;
    assert_eq!(topics, vec![("shown".to_string(), 3, vec![1, 1, 1])]);
    let port: i32 = w.bootstrap.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(brokers, vec![(1, "127.0.0.1".to_string(), port)]);
    assert_eq!(watermarks, (0, 10));
    assert_eq!(by_time, Offset::Offset(0));
    assert_eq!(future, Offset::End, "no record that late: the end");
    let a = admin(&w.bootstrap);
    let described = a
        .describe_configs(&[ResourceSpecifier::Topic("shown")], &AdminOptions::new())
        .await
        .expect("describe");
    let resource = described[0].as_ref().expect("topic configs");
    let value = |k: &str| resource.get(k).and_then(|e| e.value.clone());
    assert_eq!(value("cleanup.policy").as_deref(), Some("delete"));
    assert_eq!(value("retention.ms").as_deref(), Some("86400000"));
    let missing = a
        .describe_configs(&[ResourceSpecifier::Topic("absent")], &AdminOptions::new())
        .await
        .expect("describe");
    // librdkafka reports the error of an unknown topic as a resource without entries.
    assert!(
        missing[0].as_ref().map_or(true, |r| r.entries.is_empty()),
        "an unknown topic shows no configs"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_are_created_and_deleted_and_auto_creation_can_be_off() {
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[("auto.create.topics.enable", "false")], 0).await;
    let a = admin(&w.bootstrap);
    let opts = AdminOptions::new();
    let made = a
        .create_topics(
            &[NewTopic::new("made", 4, TopicReplication::Fixed(1))],
            &opts,
        )
        .await
        .expect("create");
    assert_eq!(made, vec![Ok("made".to_string())]);
    let again = a
        .create_topics(
            &[NewTopic::new("made", 4, TopicReplication::Fixed(1))],
            &opts,
        )
        .await
        .expect("create");
    assert!(again[0].is_err(), "{again:?}");
    let (status, body) = w.api.get("/topics/made").await.expect("request");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["partitions"].as_array().map(Vec::len),
        Some(4),
        "{body}"
    );
    // With auto-creation off, producing to an unknown topic fails and creates nothing.
    let b = w.bootstrap.clone();
    let refused = blocking(move || deliver_one(&b, "never")).await;
    assert!(refused.is_err(), "nothing to deliver to");
    let (status, _) = w.api.get("/topics/never").await.expect("request");
    assert_eq!(status, 404);
    let deleted = a.delete_topics(&["made"], &opts).await.expect("delete");
    assert_eq!(deleted, vec![Ok("made".to_string())]);
    let (status, _) = w.api.get("/topics/made").await.expect("request");
    assert_eq!(status, 404);
    w.stop().await;
}

fn run_with(dir: &Path, props: &str) -> (i32, String) {
    let path = dir.join("worker.properties");
    std::fs::write(&path, props).unwrap();
    let (code, _, stderr) = common::run_binary(dir, &[path.to_str().unwrap()]);
    (code, stderr)
}

#[test]
fn a_taken_port_and_a_remote_plaintext_listener_stop_the_worker_with_exit_2() {
    let dir = tempdir();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let base = common::binary_props(dir.path());
    let (code, stderr) = run_with(
        dir.path(),
        &format!("{base}kafka.listeners=PLAINTEXT://127.0.0.1:{port}\n"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("kafka.listeners"), "{stderr}");
    let (code, stderr) = run_with(
        dir.path(),
        &format!("{base}kafka.listeners=PLAINTEXT://0.0.0.0:0\n"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("kafka.listeners.allow.plaintext.remote"),
        "{stderr}"
    );
    drop(taken);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_api_versions_version_gets_unsupported_version_with_the_list() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempdir();
    let w = KafkaWorker::start(dir.path(), &[], 0).await;
    let mut frame = liteconnect::kafka::codec::samples::api_versions(3).to_vec();
    frame[2..4].copy_from_slice(&99i16.to_be_bytes());
    let mut sock = tokio::net::TcpStream::connect(&w.bootstrap).await.unwrap();
    sock.write_all(&(frame.len() as i32).to_be_bytes())
        .await
        .unwrap();
    sock.write_all(&frame).await.unwrap();
    let len = sock.read_i32().await.unwrap();
    let mut body = vec![0u8; len as usize];
    sock.read_exact(&mut body).await.unwrap();
    // A v0 header (the correlation id alone), then a v0 body: error code, then the keys.
    assert_eq!(i32::from_be_bytes(body[0..4].try_into().unwrap()), 7);
    assert_eq!(i16::from_be_bytes(body[4..6].try_into().unwrap()), 35);
    let keys = i32::from_be_bytes(body[6..10].try_into().unwrap());
    let first: Vec<i16> = (0..3)
        .map(|i| i16::from_be_bytes(body[10 + 2 * i..12 + 2 * i].try_into().unwrap()))
        .collect();
    assert_eq!(keys, 21);
    assert_eq!(first, vec![0, 0, 12], "Produce advertised from v0");
    // A malformed frame closes that connection and the listener serves the next one.
    sock.write_all(&[0, 0, 0, 3, 1, 2, 3]).await.unwrap();
    let mut rest = Vec::new();
    let _ = sock.read_to_end(&mut rest).await;
    assert!(rest.is_empty());
    let b = w.bootstrap.clone();
    let got = blocking(move || {
        produce_all(&producer(&b, &[]), "after", &numbered("after", 3));
        consume(&b, &[], "after", 1, 3)
    })
    .await;
    assert_eq!(got.len(), 3);
    w.stop().await;
}
