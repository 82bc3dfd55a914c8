//! `myao serve` while slow clients try to hold it (issue 56): DRIBBLERS
//! clients each send one byte of a request's head every 2 s and never
//! finish it (connecting again whenever the server closes them), while a
//! real request, Slack's signed URL check on a new connection, is sent
//! every 250 ms for SECONDS. The server runs in process with its default
//! limits, over Slack and LLM stubs (wiremock).
//!
//!   cargo bench -p myao-local --bench held [-- DRIBBLERS [SECONDS]]
//!
//! 300 dribblers and 30 s by default. It prints the real requests'
//! latency (p50, p99, max) and how many went unanswered within 10 s, the
//! connections open at most, and how many times the server closed a
//! dribbler (at its head's deadline, or to make room). Slack gives up on
//! an answer after 3 s.

// A bench reads best whole, as the tests do.
#![allow(clippy::too_many_lines)]

#[path = "../tests/serving/mod.rs"]
#[allow(dead_code)]
mod serving;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use myao_local::config;
use myao_local::serve::{self, EVENTS_PATH};
use myao_slack::signature::sign;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SECRET: &str = "held-signing-secret";
/// A head that never ends: a dribbler sends it a byte at a time.
const HEAD: &[u8] = b"POST /slack/events HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nx-slack-request-timestamp: 1700000000\r\nx-slack-signature: v0=0000000000000000000000000000000000000000000000000000000000000000\r\nx-padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let dribblers: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(300);
    let seconds: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(dribblers, seconds))
}

/// One slow client until `done`: connects, sends a byte of [`HEAD`] every
/// 2 s, and connects again when the server closes it. Counts the closes.
async fn dribble(addr: std::net::SocketAddr, done: Arc<AtomicBool>, closed: Arc<AtomicU64>) {
    while !done.load(Ordering::Relaxed) {
        let Ok(stream) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let (mut reader, mut writer) = stream.into_split();
        let mut sink = Vec::new();
        let ended = async move {
            let _ = reader.read_to_end(&mut sink).await;
        };
        tokio::pin!(ended);
        let mut byte = 0;
        loop {
            if done.load(Ordering::Relaxed) {
                return;
            }
            if writer.write_all(&HEAD[byte..=byte]).await.is_err() {
                closed.fetch_add(1, Ordering::Relaxed);
                break;
            }
            byte = (byte + 1) % HEAD.len();
            tokio::select! {
                () = &mut ended => {
                    closed.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                () = tokio::time::sleep(Duration::from_secs(2)) => {}
            }
        }
    }
}

/// Slack's URL check, signed now, on a connection of its own: its
/// latency, or `None` when it went unanswered (or not 200) within 10 s.
async fn real_request(client: &reqwest::Client, url: &str) -> Option<Duration> {
    let body = br#"{"type":"url_verification","challenge":"held","token":"x"}"#.to_vec();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs()
        .to_string();
    let signature = sign(SECRET.as_bytes(), &stamp, &body);
    let sent = Instant::now();
    let answer = client
        .post(url)
        .header("x-slack-request-timestamp", stamp)
        .header("x-slack-signature", signature)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .ok()?;
    (answer.status() == 200).then(|| sent.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[at - 1]
}

async fn run(dribblers: usize, seconds: u64) -> anyhow::Result<()> {
    let slack = serving::slack_stub().await;
    let (_llm, llm_base) = serving::llm_stub().await;
    let mut env = serving::env(&slack, &llm_base);
    env.push(("MYAO_SLACK_SIGNING_SECRET".to_owned(), SECRET.to_owned()));
    let cfg = config::load(None, &env, &[])?;
    let server = serve::bind(cfg, "127.0.0.1:0".parse()?).await?;
    let addr = server.local_addr()?;
    let open = server.open_connections();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));

    let done = Arc::new(AtomicBool::new(false));
    let closed = Arc::new(AtomicU64::new(0));
    let mut slow = Vec::with_capacity(dribblers);
    for _ in 0..dribblers {
        slow.push(tokio::spawn(dribble(addr, done.clone(), closed.clone())));
    }
    // Let them all connect and start dribbling.
    tokio::time::sleep(Duration::from_secs(3)).await;

    // A new connection each time, as a request after a pause would have.
    let client = myao_http::http_client_builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()?;
    let url = format!("http://{addr}{EVENTS_PATH}");
    let mut answered = Vec::new();
    let mut unanswered = 0;
    let mut most_open = 0;
    let until = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < until {
        most_open = most_open.max(open.load(Ordering::SeqCst));
        match real_request(&client, &url).await {
            Some(latency) => answered.push(latency),
            None => unanswered += 1,
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    done.store(true, Ordering::Relaxed);
    answered.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    println!("myao serve, {dribblers} clients dribbling a head (a byte every 2 s), {seconds} s:");
    println!(
        "  real requests: {} answered, {unanswered} not within 10 s; p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        answered.len(),
        ms(percentile(&answered, 0.50)),
        ms(percentile(&answered, 0.99)),
        ms(answered.last().copied().unwrap_or_default()),
    );
    println!(
        "  connections open at most: {most_open}; dribblers closed by the server: {}",
        closed.load(Ordering::Relaxed)
    );
    for task in slow {
        task.abort();
    }
    let _ = stop.send(());
    running.await??;
    Ok(())
}
