//! Cold starts, measured: each function's release `bootstrap` is started
//! fresh, again and again, under a Lambda Runtime API served here on
//! loopback, with the AWS emulator behind it, side by side with a
//! hello-world `lambda_http` binary built with the same profile.
//!
//! `bash infra/coldstart.sh` builds the binaries, starts the emulator and
//! runs this; by hand:
//!
//! ```sh
//! MYAO_TEST_AWS_ENDPOINT=http://127.0.0.1:5123 cargo run -p myao-tests \
//!   --example coldstart -- --runs 7 hello=target/release/examples/hello \
//!   ingest=target/release/myao-ingest judgment=target/release/myao-judgment
//! ```
//!
//! A binary named `hello` or `ingest` gets signed Function URL events (a new
//! top-level message each); `judgment`, `response` and `memory` get an empty
//! SQS batch. A name may carry a label after a colon, `ingest:before=PATH
//! ingest:after=PATH`, to compare two builds of one function in the same
//! interleaved run. For each, the medians over the runs of:
//!
//! - init: from the spawn to the runtime's first request for an event (what
//!   Lambda bills and reports as the init duration);
//! - first event: from handing out the first event to its answer (ingest
//!   then reads its secret and settings, or finds them read by its init);
//! - cold answer: from the spawn to that answer, what the person whose
//!   message started the function waits for (beside Lambda's own share);
//! - warm: the same for the later events of the run;
//! - peak RSS: the process's high-water mark (`VmHWM`) after the last one.
//!
//! The child's environment is a Lambda's: only the runtime's variables, the
//! function's own and credentials, no AWS config file.

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use chrono::Utc;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use myao_core::env::{self, Function};
use myao_tests::{
    emulator_endpoint, fresh_queues, fresh_scheduler, fresh_store, signed_request_headers,
    ssm_client, unique,
};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::Notify;

const SECRET: &str = "coldstart-signing-secret";
const API: &str = "/2018-06-01/runtime";

/// One function under measurement.
struct Target {
    /// As given, label included (`ingest:before`).
    name: String,
    /// The function alone (`ingest`): its events and environment.
    kind: String,
    path: PathBuf,
    env: Vec<(String, String)>,
}

/// What one run measured.
#[derive(Debug, Clone, Copy)]
struct Sample {
    init: Duration,
    /// From the spawn to the first event's answer.
    cold: Duration,
    first: Duration,
    warm: Duration,
    peak_rss_kib: u64,
    anon_kib: u64,
    file_kib: u64,
}

/// The Runtime API's view of one run.
#[derive(Default)]
struct Run {
    events: Vec<Value>,
    handed: Vec<Instant>,
    answered: Vec<Option<Instant>>,
    first_next: Option<Instant>,
    error: Option<String>,
}

struct Shared {
    run: Mutex<Run>,
    done: Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn finished(&self) -> bool {
        let run = self.lock();
        run.error.is_some() || run.answered.iter().all(Option::is_some)
    }
}

fn reply(status: u16, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    response
}

/// The Runtime API: hands out the run's events in turn, notes when each is
/// asked for and answered.
async fn runtime_api(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let now = Instant::now();
    let path = request.uri().path().to_owned();
    let body = request.into_body().collect().await?.to_bytes();
    if path == format!("{API}/invocation/next") {
        let event = {
            let mut run = shared.lock();
            run.first_next.get_or_insert(now);
            let i = run.handed.len();
            match run.events.get(i).cloned() {
                Some(event) => {
                    run.handed.push(Instant::now());
                    Some((i, event))
                }
                None => None,
            }
        };
        let Some((i, event)) = event else {
            // No more events: the process is killed while it waits.
            std::future::pending::<()>().await;
            unreachable!("pending never resolves");
        };
        let deadline = Utc::now().timestamp_millis() + 30_000;
        let mut response = reply(200, serde_json::to_vec(&event).unwrap_or_default());
        let headers = response.headers_mut();
        let mut set = |name: &'static str, value: String| {
            if let Ok(value) = value.parse() {
                headers.insert(name, value);
            }
        };
        set("lambda-runtime-aws-request-id", format!("req-{i}"));
        set("lambda-runtime-deadline-ms", deadline.to_string());
        set(
            "lambda-runtime-invoked-function-arn",
            "arn:aws:lambda:us-east-1:123456789012:function:bench".to_owned(),
        );
        set("lambda-runtime-trace-id", format!("Root=1-bench-{i}"));
        set("content-type", "application/json".to_owned());
        return Ok(response);
    }
    let invocation = path
        .strip_prefix(&format!("{API}/invocation/req-"))
        .and_then(|rest| rest.split_once('/'));
    match invocation {
        Some((i, "response")) => {
            if let Ok(i) = i.parse::<usize>() {
                let mut run = shared.lock();
                if let Some(slot) = run.answered.get_mut(i) {
                    *slot = Some(now);
                }
            }
        }
        _ => {
            // An invocation's or the init's error.
            shared.lock().error = Some(format!("{path}: {}", String::from_utf8_lossy(&body)));
        }
    }
    if shared.finished() {
        shared.done.notify_one();
    }
    Ok(reply(202, ""))
}

/// Serves the Runtime API on a new loopback port; returns its address.
async fn serve(shared: Arc<Shared>) -> Result<(String, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?.to_string();
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let shared = shared.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request| runtime_api(shared.clone(), request));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((addr, task))
}

/// A signed Function URL event (payload format 2.0) carrying a new
/// top-level message.
fn function_url_event(n: usize) -> Result<Value> {
    let now = Utc::now();
    let ts = format!(
        "{}.{:06}",
        now.timestamp(),
        (now.timestamp_subsec_micros() as usize + n) % 1_000_000
    );
    let body = json!({
        "type": "event_callback", "team_id": "T1", "event_id": format!("Ev-{ts}"),
        "authorizations": [{"user_id": "UBOT", "is_bot": true}],
        "event": {"type": "message", "channel": "C1", "user": "UALICE",
                  "text": format!("anyone know how to fix grub? ({n})"), "ts": ts,
                  "channel_type": "channel"},
    });
    let body = serde_json::to_string(&body)?;
    let (timestamp, signature) = signed_request_headers(SECRET, &body, now);
    let host = "bench.lambda-url.us-east-1.on.aws";
    Ok(json!({
        "version": "2.0", "routeKey": "$default", "rawPath": "/", "rawQueryString": "",
        "headers": {
            "content-type": "application/json", "host": host,
            "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "x-slack-request-timestamp": timestamp, "x-slack-signature": signature,
        },
        "requestContext": {
            "accountId": "anonymous", "apiId": "bench", "domainName": host,
            "domainPrefix": "bench", "requestId": format!("r-{n}"), "routeKey": "$default",
            "stage": "$default", "time": "05/Jan/2026:08:00:00 +0000",
            "timeEpoch": now.timestamp_millis(),
            "http": {"method": "POST", "path": "/", "protocol": "HTTP/1.1",
                     "sourceIp": "127.0.0.1", "userAgent": "Slackbot"},
        },
        "body": body, "isBase64Encoded": false,
    }))
}

fn events(name: &str, count: usize) -> Result<Vec<Value>> {
    (0..count)
        .map(|n| match name {
            "hello" | "ingest" => function_url_event(n),
            _ => Ok(json!({"Records": []})),
        })
        .collect()
}

/// A field of `/proc/<pid>/status` in KiB: the peak resident set
/// (`VmHWM`), and now the anonymous (heap, stacks) and file-backed
/// (the binary's pages) parts of the resident set (`RssAnon`, `RssFile`).
fn status_kib(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .with_context(|| format!("no {field}"))?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .context("no value")?
        .parse()?)
}

async fn run_once(target: &Target, warm: usize, logs: &std::path::Path) -> Result<Sample> {
    let shared = Arc::new(Shared {
        run: Mutex::new(Run {
            events: events(&target.kind, 1 + warm)?,
            answered: vec![None; 1 + warm],
            ..Run::default()
        }),
        done: Notify::new(),
    });
    let (addr, server) = serve(shared.clone()).await?;
    let log = std::fs::File::create(logs.join(format!("{}.log", target.name)))?;
    let mut command = Command::new(&target.path);
    command
        .env_clear()
        .envs(target.env.iter().map(|(k, v)| (k, v)))
        .env("AWS_LAMBDA_RUNTIME_API", &addr)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let started = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {}", target.path.display()))?;
    let pid = child.id();
    let waited = tokio::time::timeout(Duration::from_secs(30), async {
        while !shared.finished() {
            shared.done.notified().await;
        }
    })
    .await;
    let rss = status_kib(pid, "VmHWM:");
    let anon = status_kib(pid, "RssAnon:");
    let file = status_kib(pid, "RssFile:");
    let _ = child.kill();
    let _ = child.wait();
    server.abort();
    if waited.is_err() {
        bail!("{}: timed out (see {})", target.name, logs.display());
    }
    let run = shared.lock();
    if let Some(error) = &run.error {
        bail!("{}: {error} (see {})", target.name, logs.display());
    }
    let latency = |i: usize| match run.answered[i] {
        Some(at) => at - run.handed[i],
        None => Duration::ZERO,
    };
    let mut warm_latencies: Vec<Duration> = (1..=warm).map(latency).collect();
    Ok(Sample {
        init: run.first_next.context("never asked for an event")? - started,
        cold: run.answered[0].map(|at| at - started).unwrap_or_default(),
        first: latency(0),
        warm: median(&mut warm_latencies),
        peak_rss_kib: rss?,
        anon_kib: anon?,
        file_kib: file?,
    })
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// The emulator's resources and the functions' environment.
async fn environment() -> Result<HashMap<&'static str, String>> {
    let store = fresh_store().await;
    let scheduler = fresh_scheduler().await;
    let queues = fresh_queues().await;
    let path = format!("/{}/", unique("myao-coldstart"));
    let ssm = ssm_client().await;
    for (name, value, secure) in [
        ("jitter_ratio", "0", false),
        ("secrets/slack_signing_secret", SECRET, true),
        ("secrets/slack_bot_token", "xoxb-coldstart", true),
        ("secrets/llm_api_key", "fake-llm-key-coldstart", true),
    ] {
        let kind = if secure {
            aws_sdk_ssm::types::ParameterType::SecureString
        } else {
            aws_sdk_ssm::types::ParameterType::String
        };
        ssm.put_parameter()
            .name(format!("{path}{name}"))
            .value(value)
            .r#type(kind)
            .overwrite(true)
            .send()
            .await?;
    }
    let mut vars = HashMap::from([
        (env::SETTINGS_PATH, path.clone()),
        (env::TABLE, store.table().to_owned()),
        (env::METRICS_NAMESPACE, "myao/coldstart".to_owned()),
        (
            env::SLACK_SIGNING_SECRET_PARAM,
            format!("{path}secrets/slack_signing_secret"),
        ),
        (
            env::SLACK_BOT_TOKEN_PARAM,
            format!("{path}secrets/slack_bot_token"),
        ),
        (env::LLM_API_KEY_PARAM, format!("{path}secrets/llm_api_key")),
        (env::SCHEDULE_GROUP, scheduler.group.clone()),
        (env::SCHEDULER_ROLE_ARN, scheduler.role_arn.clone()),
        (env::RESPONSE_QUEUE_URL, queues.response_queue_url.clone()),
    ]);
    for (var, value) in [
        (env::SCHEDULE_DLQ_ARN, scheduler.dlq_arn.clone()),
        (
            env::JUDGMENT_FUNCTION_ARN,
            scheduler.judgment_target_arn.clone(),
        ),
        (
            env::RESPONSE_FUNCTION_ARN,
            scheduler.response_target_arn.clone(),
        ),
        (env::MEMORY_QUEUE_URL, queues.memory_queue_url.clone()),
    ] {
        if let Some(value) = value {
            vars.insert(var, value);
        }
    }
    Ok(vars)
}

fn function(name: &str) -> Option<Function> {
    Function::ALL.into_iter().find(|f| f.name() == name)
}

/// The environment Lambda gives `name`, with `vars` for the function's own.
fn lambda_env(name: &str, vars: &HashMap<&'static str, String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = [
        ("AWS_LAMBDA_FUNCTION_NAME", name.to_owned()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256".to_owned()),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".to_owned()),
        ("AWS_LAMBDA_LOG_GROUP_NAME", format!("/aws/lambda/{name}")),
        ("AWS_LAMBDA_LOG_STREAM_NAME", "coldstart".to_owned()),
        ("AWS_LAMBDA_LOG_FORMAT", "JSON".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_DEFAULT_REGION", "us-east-1".to_owned()),
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
        ("AWS_SESSION_TOKEN", "test".to_owned()),
        ("AWS_ENDPOINT_URL", emulator_endpoint()),
        // Lambda has no AWS config file; this machine may.
        ("AWS_CONFIG_FILE", "/nonexistent/config".to_owned()),
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            "/nonexistent/credentials".to_owned(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(function) = function(name) {
        for var in env::required(function) {
            if let Some(value) = vars.get(var) {
                out.push(((*var).to_owned(), value.clone()));
            }
        }
        for var in [
            env::SCHEDULE_DLQ_ARN,
            env::JUDGMENT_FUNCTION_ARN,
            env::RESPONSE_FUNCTION_ARN,
            env::LLM_API_KEY_PARAM,
        ] {
            if let Some(value) = vars.get(var) {
                out.push((var.to_owned(), value.clone()));
            }
        }
    }
    out
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[tokio::main]
async fn main() -> Result<()> {
    let mut runs = 7;
    let mut warm = 10;
    let mut named = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().context("--runs N")?.parse()?,
            "--warm" => warm = args.next().context("--warm N")?.parse()?,
            other => {
                let (name, path) = other
                    .split_once('=')
                    .context("expected NAME=PATH, e.g. ingest=target/release/myao-ingest")?;
                let kind = name.split_once(':').map_or(name, |(kind, _)| kind);
                if kind != "hello" && function(kind).is_none() {
                    bail!("unknown function {name}: hello, ingest, judgment, response or memory");
                }
                named.push((name.to_owned(), kind.to_owned(), PathBuf::from(path)));
            }
        }
    }
    if named.is_empty() || runs == 0 {
        bail!("usage: coldstart [--runs N] [--warm N] NAME=PATH...");
    }
    let vars = environment().await?;
    let targets: Vec<Target> = named
        .into_iter()
        .map(|(name, kind, path)| Target {
            env: lambda_env(&kind, &vars),
            name,
            kind,
            path,
        })
        .collect();
    let logs = std::env::temp_dir().join(unique("myao-coldstart"));
    std::fs::create_dir_all(&logs)?;

    // Interleaved, so that whatever else the machine does falls on all alike.
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); targets.len()];
    for _ in 0..runs {
        for (target, samples) in targets.iter().zip(samples.iter_mut()) {
            samples.push(run_once(target, warm, &logs).await?);
        }
    }

    println!("{runs} cold starts each, {warm} warm events after the first; medians (min-max)\n");
    println!(
        "| binary | size | init | first event | cold answer | warm event | peak RSS | anon + file at the end |\n|---|---|---|---|---|---|---|---|"
    );
    let mut summary = Vec::new();
    for (target, samples) in targets.iter().zip(samples.iter()) {
        let size = std::fs::metadata(&target.path)?.len();
        let spread = |f: fn(&Sample) -> Duration| {
            let mut v: Vec<Duration> = samples.iter().map(f).collect();
            let m = median(&mut v);
            (m, v[0], v[v.len() - 1])
        };
        let (init, init_min, init_max) = spread(|s| s.init);
        let (first, ..) = spread(|s| s.first);
        let (cold, ..) = spread(|s| s.cold);
        let (warm_latency, ..) = spread(|s| s.warm);
        let mut rss: Vec<u64> = samples.iter().map(|s| s.peak_rss_kib).collect();
        rss.sort();
        let rss = rss[rss.len() / 2] * 1024;
        let last = samples[samples.len() - 1];
        println!(
            "| {} | {} | {} ({}-{}) | {} | {} | {} | {} | {} + {} |",
            target.name,
            mib(size),
            ms(init),
            ms(init_min),
            ms(init_max),
            ms(first),
            ms(cold),
            ms(warm_latency),
            mib(rss),
            mib(last.anon_kib * 1024),
            mib(last.file_kib * 1024),
        );
        summary.push((target.name.clone(), init, rss));
    }
    if let Some((_, hello_init, hello_rss)) = summary.iter().find(|(n, ..)| n == "hello") {
        println!();
        for (name, init, rss) in summary.iter().filter(|(n, ..)| n != "hello") {
            println!(
                "{name}: init {:.2}x hello's, peak RSS {:.2}x",
                init.as_secs_f64() / hello_init.as_secs_f64(),
                *rss as f64 / *hello_rss as f64
            );
        }
    }
    Ok(())
}
