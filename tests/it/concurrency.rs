//! 32 clients creating, reconfiguring, pausing, stopping, resuming, restarting and deleting connectors on
//! their own and on shared names: no 500, no deadlock, and each client's connector ends in the state of its
//! last acknowledged operation, also after a restart. The default suite runs it for 3 seconds; the
//! 30-second soak is ignored unless asked for.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

const CLIENTS: usize = 32;

#[derive(Clone, Debug, PartialEq)]
enum Expected {
    Absent,
    Present { state: &'static str, batch: u64 },
}

/// Repeatable numbers for a client's choices: SipHash (`DefaultHasher::new` has fixed keys) of the
/// client's seed and a counter.
struct Rng {
    seed: u64,
    n: u64,
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng { seed, n: 0 }
    }

    fn next(&mut self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.seed, self.n).hash(&mut h);
        self.n += 1;
        h.finish()
    }
}

fn config(batch: u64) -> serde_json::Value {
    json!({"connector.class": "FileStreamSink", "topics": "concurrency", "batch.size.marker": batch.to_string()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_clients_for_three_seconds() {
    soak(Duration::from_secs(3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a 30-second soak: run it with cargo test --test it -- --ignored thirty_two_clients_for_thirty_seconds"]
async fn thirty_two_clients_for_thirty_seconds() {
    soak(Duration::from_secs(30)).await;
}

/// `CLIENTS` clients for `run_for`, then the check, before and after a restart.
async fn soak(run_for: Duration) {
    let dir = tempdir();
    let w = std::sync::Arc::new(TestWorker::start(dir.path()).await);
    let deadline = Instant::now() + run_for;
    let mut handles = Vec::new();
    for c in 0..CLIENTS {
        let w = w.clone();
        handles.push(tokio::spawn(async move {
            let own = format!("own-{c}");
            let mut rng = Rng::new(c as u64 + 1);
            let mut expected = Expected::Absent;
            let mut ops = 0u64;
            let mut bad = Vec::new();
            while Instant::now() < deadline {
                let shared = format!("shared-{}", rng.next() % 4);
                let on_own = !rng.next().is_multiple_of(3);
                let name = if on_own { own.clone() } else { shared.clone() };
                let batch = rng.next() % 1000;
                let op = rng.next() % 7;
                let (status, body) = match op {
                    0 => {
                        w.post(
                            "/connectors",
                            json!({"name": name, "config": config(batch)}),
                        )
                        .await
                    }
                    1 => {
                        w.put(&format!("/connectors/{name}/config"), config(batch))
                            .await
                    }
                    2 => w.put_empty(&format!("/connectors/{name}/pause")).await,
                    3 => w.put_empty(&format!("/connectors/{name}/stop")).await,
                    4 => w.put_empty(&format!("/connectors/{name}/resume")).await,
                    5 => {
                        w.post_empty(&format!("/connectors/{name}/restart?includeTasks=true"))
                            .await
                    }
                    _ => w.delete(&format!("/connectors/{name}")).await,
                };
                ops += 1;
                if status >= 500 || ![200, 201, 202, 204, 404, 409].contains(&status) {
                    bad.push(format!("op {op} on {name}: {status} {body}"));
                }
                if !on_own {
                    continue;
                }
                let ok = (200..300).contains(&status);
                expected = match (op, ok, &expected) {
                    (0, true, _) => Expected::Present {
                        state: "RUNNING",
                        batch,
                    },
                    (1, true, Expected::Absent) => Expected::Present {
                        state: "RUNNING",
                        batch,
                    },
                    (1, true, Expected::Present { state, .. }) => {
                        Expected::Present { state, batch }
                    }
                    (2, true, Expected::Present { batch: b, .. }) => Expected::Present {
                        state: "PAUSED",
                        batch: *b,
                    },
                    (3, true, Expected::Present { batch: b, .. }) => Expected::Present {
                        state: "STOPPED",
                        batch: *b,
                    },
                    (4, true, Expected::Present { batch: b, .. }) => Expected::Present {
                        state: "RUNNING",
                        batch: *b,
                    },
                    (6, true, _) => Expected::Absent,
                    _ => expected,
                };
            }
            (own, expected, ops, bad)
        }));
    }
    let mut results = BTreeMap::new();
    let mut total_ops = 0;
    for h in handles {
        let (own, expected, ops, bad) = h.await.unwrap();
        assert!(bad.is_empty(), "unexpected answers: {bad:?}");
        total_ops += ops;
        results.insert(own, expected);
    }
    eprintln!("concurrency: {CLIENTS} clients, {total_ops} operations in {run_for:?}, 0 errors");
    check(&w, &results).await;
    let w = std::sync::Arc::try_unwrap(w).ok().expect("no other owners");
    w.stop().await;
    let w = TestWorker::start(dir.path()).await;
    check(&w, &results).await;
    w.stop().await;
}

async fn check(w: &TestWorker, results: &BTreeMap<String, Expected>) {
    for (name, expected) in results {
        match expected {
            Expected::Absent => {
                assert_eq!(w.get(&format!("/connectors/{name}")).await.0, 404, "{name}")
            }
            Expected::Present { state, batch } => {
                let (s, cfg) = w.get(&format!("/connectors/{name}/config")).await;
                assert_eq!(s, 200, "{name}");
                assert_eq!(cfg["batch.size.marker"], batch.to_string(), "{name}");
                wait_until(&format!("{name} to be {state}"), || async {
                    w.status(name).await["connector"]["state"] == *state
                })
                .await;
            }
        }
    }
}
