//! `myao serve` under load: signed Events API requests from 32 clients at
//! once, against the server in process with Slack and LLM stubs (wiremock),
//! as Slack would send them to a workspace's bot behind a tunnel.
//!
//!   cargo bench -p myao-local --bench load [-- EVENTS [CONCURRENCY]]
//!
//! 2,400 events by default (threads of three in 8 channels, one message in
//! 40 a mention), 32 at a time. It prints the
//! throughput, the latency of the answers (min, p50, p99, max), the answers
//! other than 200, the mentions answered and the posts made (each mention
//! answered once: no duplicate), and the process's peak resident memory
//! (server, stubs and clients together: one process). Then 300 clients
//! each send a 1 MiB body but its last byte and wait: the resident memory
//! before and while they hang (the connection cap and the body time bound
//! what the server holds for them).

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

#[path = "../tests/serving/mod.rs"]
#[allow(dead_code)]
mod serving;

use std::sync::Arc;
use std::time::{Duration, Instant};

use myao_local::config;
use myao_local::serve::{self, EVENTS_PATH};
use myao_slack::signature::sign;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

const SECRET: &str = "load-signing-secret";

/// The `i`-th event: threads of three (a top-level message and two
/// replies) in 8 channels in turn, one message in 40 a mention (spread over
/// the channels too, under each one's hourly cap of replies).
fn event(i: usize, now: u64) -> Value {
    let channel = format!("C0LOAD{}", (i / 3) % 8);
    let ts = format!("{now}.{i:06}");
    let (kind, text) = if i.is_multiple_of(40) {
        ("app_mention", format!("<@UMYAO> question {i}?"))
    } else {
        ("message", format!("message {i} about the build"))
    };
    let mut e = json!({"type": kind, "channel": channel, "channel_type": "channel",
                       "user": format!("U0USER{}", i % 13), "text": text, "ts": ts});
    if !i.is_multiple_of(3) {
        e["thread_ts"] = json!(format!("{now}.{:06}", i - i % 3));
    }
    json!({"type": "event_callback", "team_id": "T0LOAD", "event_id": format!("Ev{i}"),
           "authorizations": [{"user_id": "UMYAO", "is_bot": true}], "event": e})
}

/// The `chat.postMessage` calls the Slack stub has had.
async fn posts_made(slack: &wiremock::MockServer) -> usize {
    slack
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.url.path() == "/api/chat.postMessage")
        .count()
}

/// A figure of this process's `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn peak_rss_kib() -> Option<u64> {
    status_kib("VmHWM:")
}

fn rss_kib() -> Option<u64> {
    status_kib("VmRSS:")
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let events: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(2_400);
    let concurrency: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(events, concurrency))
}

async fn run(events: usize, concurrency: usize) -> anyhow::Result<()> {
    let slack = serving::slack_stub().await;
    let (llm, llm_base) = serving::llm_stub().await;
    let mut env = serving::env(&slack, &llm_base);
    env.push(("MYAO_SLACK_SIGNING_SECRET".to_owned(), SECRET.to_owned()));
    let cfg = config::load(None, &env, &[])?;
    let server = serve::bind(cfg, "127.0.0.1:0".parse()?).await?;
    let url = format!("http://{}{EVENTS_PATH}", server.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));

    let client = myao_http::http_client();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let permits = Arc::new(Semaphore::new(concurrency));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(events);
    for i in 0..events {
        let permit = permits.clone().acquire_owned().await?;
        let client = client.clone();
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let _permit = permit;
            let body = serde_json::to_vec(&event(i, now)).unwrap_or_default();
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs().to_string())
                .unwrap_or_default();
            let signature = sign(SECRET.as_bytes(), &stamp, &body);
            let sent = Instant::now();
            let status = client
                .post(&url)
                .header("x-slack-request-timestamp", stamp)
                .header("x-slack-signature", signature)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0);
            (status, sent.elapsed())
        }));
    }
    let mut latencies = Vec::with_capacity(events);
    let mut failed = 0;
    for task in tasks {
        let (status, took) = task.await?;
        if status != 200 {
            failed += 1;
        }
        latencies.push(took);
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];

    // The mentions' answers: each posted once.
    let mentions = (0..events).filter(|i| i.is_multiple_of(40)).count();
    let deadline = Instant::now() + Duration::from_secs(60);
    let posts = loop {
        let posts = posts_made(&slack).await;
        if posts >= mentions || Instant::now() > deadline {
            break posts;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let posts_after = posts_made(&slack).await;
    let llm_calls = llm.received_requests().await.unwrap_or_default().len();

    // Then 300 clients each send all of a 1 MiB body but its last byte and
    // wait: what the server holds for them, bounded by its connection cap
    // and its body time.
    let before = rss_kib();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches(EVENTS_PATH)
        .to_owned();
    let mut half_sent = Vec::new();
    // One body for all the clients: the figure is the server's, less this.
    let body = vec![b' '; (1 << 20) - 1];
    for _ in 0..300 {
        use tokio::io::AsyncWriteExt;
        let Ok(mut c) = tokio::net::TcpStream::connect(&addr).await else {
            continue;
        };
        let head = format!(
            "POST {EVENTS_PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
            1 << 20
        );
        let write = async {
            c.write_all(head.as_bytes()).await?;
            c.write_all(&body).await
        };
        let _ = tokio::time::timeout(Duration::from_millis(20), write).await;
        half_sent.push(c);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = rss_kib();
    drop(half_sent);
    let _ = stop.send(());
    running.await??;

    println!("myao serve under load: {events} signed events, {concurrency} at a time");
    println!(
        "  throughput     {:.0} events/s ({:.2} s in all)",
        events as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    println!(
        "  latency        min {:.1} ms, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies[0].as_secs_f64() * 1e3,
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        latencies[latencies.len() - 1].as_secs_f64() * 1e3
    );
    println!("  not 200        {failed}");
    println!(
        "  mentions       {mentions}, answered with {posts} posts ({} after 2 s more; LLM calls {llm_calls})",
        posts_after
    );
    if let Some(kib) = peak_rss_kib() {
        println!(
            "  peak RSS       {:.1} MiB (server, stubs and clients)",
            kib as f64 / 1024.0
        );
    }
    if let (Some(before), Some(held)) = (before, held) {
        println!(
            "  300 half-sent 1 MiB bodies: RSS {:.1} MiB -> {:.1} MiB",
            before as f64 / 1024.0,
            held as f64 / 1024.0
        );
    }
    Ok(())
}
