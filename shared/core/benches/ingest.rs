//! The ingest handler's own work per event (signature check, parsing,
//! routing, the conditional write, the schedule upsert) on the in-process
//! adapters, and the number of store and scheduler calls each kind of event
//! costs. The calls are what the AWS latency multiplies.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use myao_core::adapters::system::{ManualClock, SplitMix, StaticSecrets};
use myao_core::adapters::twins::{JobBoard, MemoryStore};
use myao_core::app::ingest::{Ingest, IngestRequest};
use myao_core::ports::Clock;
use myao_core::wire::Twins;
use myao_domain::Settings;
use myao_slack::signature::sign;
use myao_testkit::ids::ts;
use myao_testkit::time::clock_at;
use serde_json::json;

const SECRET: &str = "bench-secret";

struct Bed {
    clock: Arc<ManualClock>,
    store: Arc<MemoryStore>,
    board: Arc<JobBoard>,
    ingest: Ingest,
}

fn bed() -> Bed {
    let twins = Twins::new(clock_at(ts("1767600000.0").to_datetime()));
    let ingest = Ingest::new(
        twins.ports(SplitMix::seeded(1), Settings::default()),
        Arc::new(StaticSecrets::new().with("s", SECRET)),
        "s",
    );
    Bed {
        clock: twins.clock,
        store: twins.store,
        board: twins.board,
        ingest,
    }
}

fn body(i: u64, text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": format!("Ev{i}"),
        "authorizations": [{"user_id": "UBOT", "is_bot": true}],
        "event": {"type": "message", "channel": "C1", "user": "U1", "text": text,
                  "ts": format!("1767600000.{i:06}"), "thread_ts": "1767500000.000001"}
    }))
    .expect("json")
}

async fn deliver(bed: &Bed, body: &[u8]) -> u16 {
    let ts = bed.clock.now().timestamp().to_string();
    let sig = sign(SECRET.as_bytes(), &ts, body);
    bed.ingest
        .handle(IngestRequest {
            timestamp: Some(&ts),
            signature: Some(&sig),
            retry_num: None,
            body,
        })
        .await
        .status
}

fn event(ts: &str, thread: Option<&str>, kind: &str, text: &str) -> Vec<u8> {
    let mut e = json!({"type": kind, "channel": "C1", "user": "U1", "text": text, "ts": ts});
    if let Some(t) = thread {
        e["thread_ts"] = json!(t);
    }
    serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": format!("Ev{kind}{ts}"),
        "authorizations": [{"user_id": "UBOT", "is_bot": true}], "event": e
    }))
    .expect("json")
}

/// Prints the store, scheduler and queue calls each kind of event costs
/// (the emulator test `the_aws_calls_of_each_kind_of_message` names the
/// AWS operations behind them).
fn report_calls(rt: &tokio::runtime::Runtime) {
    let b = bed();
    let root = Some("1767500000.000001");
    let kinds: [(&str, Vec<u8>); 6] = [
        (
            "new thread reply",
            event(
                "1767600000.000001",
                root,
                "message",
                "why is the build red?",
            ),
        ),
        (
            "reply in open window",
            event("1767600000.000002", root, "message", "it was green at noon"),
        ),
        (
            "reply mentioning a person",
            event("1767600000.000003", root, "message", "<@U2> did you push?"),
        ),
        (
            "duplicate delivery",
            event("1767600000.000003", root, "message", "<@U2> did you push?"),
        ),
        (
            "mention",
            event(
                "1767600000.000004",
                None,
                "message",
                "<@UBOT> can you look?",
            ),
        ),
        (
            "its app_mention",
            event(
                "1767600000.000004",
                None,
                "app_mention",
                "<@UBOT> can you look?",
            ),
        ),
    ];
    rt.block_on(async {
        for (kind, body) in kinds {
            b.store.counts().reset();
            let before = b.board.call_counts();
            deliver(&b, &body).await;
            let after = b.board.call_counts();
            println!(
                "{kind:<26} store writes {}, store reads {}, scheduler calls {}, queue calls {}",
                b.store.counts().writes(),
                b.store.counts().reads(),
                after.0 - before.0,
                after.1 - before.1
            );
        }
    });
}

fn ingest(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    report_calls(&rt);
    let mut group = c.benchmark_group("ingest");
    group.throughput(Throughput::Elements(1));
    group.bench_function("new message", |bench| {
        let b = bed();
        let mut i = 0u64;
        bench.iter_batched(
            || {
                i += 1;
                body(i, "hello there, a normal message of a normal length")
            },
            |msg| rt.block_on(deliver(&b, &msg)),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("duplicate delivery", |bench| {
        let b = bed();
        let msg = body(1, "hello");
        rt.block_on(deliver(&b, &msg));
        bench.iter(|| rt.block_on(deliver(&b, &msg)));
    });
    group.bench_function("forged signature", |bench| {
        let b = bed();
        let msg = body(1, "hello");
        let ts = b.clock.now().timestamp().to_string();
        bench.iter(|| {
            rt.block_on(b.ingest.handle(IngestRequest {
                timestamp: Some(&ts),
                signature: Some(
                    "v0=0000000000000000000000000000000000000000000000000000000000000000",
                ),
                retry_num: None,
                body: &msg,
            }))
        });
    });
    group.finish();
}

criterion_group!(benches, ingest);
criterion_main!(benches);
