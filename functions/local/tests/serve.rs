//! `myao serve` in process, against Slack and LLM stubs (wiremock):
//! a signed mention is answered in Slack; a forged request is refused; a
//! mention made while the LLM is down for a moment is answered after it;
//! idle and slow clients are closed, and connections are capped; `accept`
//! failing (no descriptors left) pauses rather than spins; a mention shows
//! that the bot is writing while a slow model writes; a signed click of the
//! feedback buttons at `/slack/interactivity` is a label, a forged one
//! refused.

use crate::serving;
use myao_testkit::http::completion;

use std::time::Duration;

use myao_local::config;
use myao_local::serve::{self, EVENTS_PATH};
use myao_slack::signature::sign;
use serde_json::Value;
use serving::{llm_stub, slack_stub, wait_for_post, CHANNEL, REPLY};
use wiremock::MockServer;

const SECRET: &str = "local-signing-secret";

/// The settings of [`serving::env`] and the signing secret.
fn env(slack: &MockServer, llm_base: &str) -> Vec<(String, String)> {
    let mut env = serving::env(slack, llm_base);
    env.push(("MYAO_SLACK_SIGNING_SECRET".to_owned(), SECRET.to_owned()));
    env
}

fn mention_body(ts: &str) -> Vec<u8> {
    serde_json::to_vec(&serving::mention(CHANNEL, ts)).expect("json")
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    body: Vec<u8>,
    signature: Option<String>,
) -> reqwest::Response {
    let now = chrono::Utc::now().timestamp().to_string();
    let signature = signature.unwrap_or_else(|| sign(SECRET.as_bytes(), &now, &body));
    client
        .post(url)
        .header("x-slack-request-timestamp", now)
        .header("x-slack-signature", signature)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the server answers")
}

#[tokio::test]
async fn a_signed_mention_is_answered_in_slack_and_a_forged_one_refused() {
    let (slack, (llm, llm_base)) = (slack_stub().await, llm_stub().await);
    let cfg = config::load(None, &env(&slack, &llm_base), &[]).unwrap();
    assert!(cfg.issues.is_empty(), "{:?}", cfg.issues);
    let server = serve::bind(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(server.bot_user_id(), "UMYAO", "from auth.test");
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let url = format!("http://{addr}{EVENTS_PATH}");
    let client = myao_http::http_client();

    // Slack's URL check.
    let challenge = br#"{"type":"url_verification","challenge":"c-123","token":"x"}"#.to_vec();
    let r = post(&client, &url, challenge, None).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "c-123");

    // A forged signature: 401, nothing stored or posted.
    let forged = format!("v0={}", "0".repeat(64));
    let r = post(
        &client,
        &url,
        mention_body("1767616100.000100"),
        Some(forged),
    )
    .await;
    assert_eq!(r.status(), 401);

    // Another path: 404.
    assert_eq!(status_of_another_path(addr).await, 404);

    // A real mention, just sent (an older one would be dropped by
    // mention_max_age_seconds): 200 at once, then a reply posted in Slack.
    let r = post(&client, &url, mention_body(&serving::now_ts(2000)), None).await;
    assert_eq!(r.status(), 200);
    let posted = wait_for_post(&slack, CHANNEL).await;
    assert_eq!(posted["text"], REPLY);
    assert!(
        posted.get("thread_ts").is_none(),
        "a top-level mention is answered at the top level"
    );

    // Only the real mention reached the LLM.
    let calls = llm.received_requests().await.unwrap();
    assert_eq!(calls.len(), 1);
    let prompt: Value = serde_json::from_slice(&calls[0].body).unwrap();
    let prompt = prompt["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("ランチどうしよう"));
    assert!(
        !prompt.contains("1767616100"),
        "the forged event was not stored"
    );

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the server stops on request")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn an_oversized_body_gets_413() {
    let (addr, _, stop, running, _stubs) = running_with(serve::Limits::default(), &[]).await;
    let big = vec![b' '; myao_core::app::ingest::MAX_BODY_BYTES + 10];
    let r = post(
        &myao_http::http_client(),
        &format!("http://{addr}{EVENTS_PATH}"),
        big,
        None,
    )
    .await;
    assert_eq!(r.status(), 413);
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_mention_during_a_short_llm_outage_is_answered_once_after_it() {
    let (addr, _, stop, running, (slack, llm)) = running_with(
        serve::Limits::default(),
        &[("MYAO_RETRY_DELAYS_SECONDS", "1,2")],
    )
    .await;
    // The LLM fails the first two tries (no retries of its own), then
    // answers; the job comes back after 1 s, then 2 s.
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(500).set_body_string("overloaded"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&llm)
        .await;
    let client = myao_http::http_client();
    let url = format!("http://{addr}{EVENTS_PATH}");
    let r = post(&client, &url, mention_body(&serving::now_ts(3000)), None).await;
    assert_eq!(r.status(), 200);

    let posted = wait_for_post(&slack, CHANNEL).await;
    assert_eq!(posted["text"], REPLY);
    assert_eq!(
        llm.received_requests().await.unwrap().len(),
        3,
        "two failures, then the answer"
    );
    // Once: nothing more comes.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let posts = slack
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/api/chat.postMessage")
        .count();
    assert_eq!(posts, 1);
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn serve_refuses_to_start_without_its_secrets() {
    let (slack, (_llm, llm_base)) = (slack_stub().await, llm_stub().await);
    let vars: Vec<(String, String)> = env(&slack, &llm_base)
        .into_iter()
        .filter(|(k, _)| k != "MYAO_SLACK_BOT_TOKEN")
        .collect();
    let cfg = config::load(None, &vars, &[]).unwrap();
    let e = serve::bind(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("MYAO_SLACK_BOT_TOKEN"), "{e}");

    let vars: Vec<(String, String)> = env(&slack, &llm_base)
        .into_iter()
        .filter(|(k, _)| k != "MYAO_SLACK_SIGNING_SECRET")
        .collect();
    let cfg = config::load(None, &vars, &[]).unwrap();
    let e = serve::bind(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("MYAO_SLACK_SIGNING_SECRET"), "{e}");
}

/// The status of a GET of a path that is not the events' (404 when the
/// server answers).
pub(crate) async fn status_of_another_path(addr: std::net::SocketAddr) -> u16 {
    myao_http::http_client()
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// `myao serve` bound on a free port over the Slack stub `slack` and an
/// LLM stub (returned, to keep it up), with the settings `extra` beside the
/// stubs'.
async fn bound(slack: &MockServer, extra: &[(&str, &str)]) -> (serve::Server, MockServer) {
    let (llm, llm_base) = llm_stub().await;
    let mut vars = env(slack, &llm_base);
    vars.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let cfg = config::load(None, &vars, &[]).expect("config");
    assert!(cfg.issues.is_empty(), "{:?}", cfg.issues);
    let server = serve::bind(cfg, "127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("bound");
    (server, llm)
}

/// A server on a free port with `limits` and the settings `extra` beside
/// the stubs', running until the sender is used.
pub(crate) async fn running_with(
    limits: serve::Limits,
    extra: &[(&str, &str)],
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
    (MockServer, MockServer),
) {
    let slack = slack_stub().await;
    let (server, llm) = bound(&slack, extra).await;
    let server = server.with_limits(limits);
    let addr = server.local_addr().expect("an address");
    let open = server.open_connections();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    (addr, open, stop, running, (slack, llm))
}

/// Reads until the server closes the connection (or `within` passes):
/// what it sent.
pub(crate) async fn until_closed(
    stream: &mut tokio::net::TcpStream,
    within: Duration,
) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let read = tokio::time::timeout(within, stream.read_to_end(&mut got)).await;
    read.ok()
        .map(|_| String::from_utf8_lossy(&got).into_owned())
}

const SHORT: serve::Limits = serve::Limits {
    headers: Duration::from_secs(1),
    body: Duration::from_secs(1),
    connection: Duration::from_secs(3),
    connections: 8,
    requests: 4,
};

#[tokio::test]
async fn an_idle_connection_and_a_half_sent_body_are_closed() {
    use tokio::io::AsyncWriteExt;
    let (addr, open, stop, running, _stubs) = running_with(SHORT, &[]).await;

    // Connected, and nothing sent: closed after the header time.
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    let started = std::time::Instant::now();
    assert!(until_closed(&mut idle, Duration::from_secs(10))
        .await
        .is_some());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // Headers, then ten bytes of a thousand: 408 after the body time.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(
        format!("POST {EVENTS_PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n0123456789")
            .as_bytes(),
    )
    .await
    .unwrap();
    let answer = until_closed(&mut slow, Duration::from_secs(10))
        .await
        .expect("closed");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");

    // Headers sent a byte a second never finish: closed too.
    let mut trickle = tokio::net::TcpStream::connect(addr).await.unwrap();
    for byte in b"POST /slack/events HTTP/1.1\r\n" {
        if trickle.write_all(&[*byte]).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        if started.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    assert!(until_closed(&mut trickle, Duration::from_secs(10))
        .await
        .is_some());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(open.load(std::sync::atomic::Ordering::SeqCst), 0);
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn connections_past_the_cap_wait_and_all_are_closed_in_the_end() {
    use tokio::io::AsyncWriteExt;
    let (addr, open, stop, running, _stubs) = running_with(SHORT, &[]).await;
    // Twenty clients each start a body of 1 MiB and stop half way.
    let mut clients = Vec::new();
    for _ in 0..20 {
        let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {EVENTS_PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
            1 << 20
        );
        c.write_all(head.as_bytes()).await.unwrap();
        let _ = c.write_all(&vec![b' '; 1 << 19]).await;
        clients.push(c);
    }
    let mut most = 0;
    for _ in 0..40 {
        most = most.max(open.load(std::sync::atomic::Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        (1..=SHORT.connections).contains(&most),
        "{most} open at once"
    );
    // Each is answered 408 or closed, a few at a time; none is left open.
    for mut c in clients {
        assert!(until_closed(&mut c, Duration::from_secs(30))
            .await
            .is_some());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(open.load(std::sync::atomic::Ordering::SeqCst), 0);
    // And the server still answers.
    assert_eq!(status_of_another_path(addr).await, 404);
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn accept_failing_for_want_of_descriptors_pauses_instead_of_spinning() {
    let (slack, (_llm, llm_base)) = (slack_stub().await, llm_stub().await);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    // The binary, with 64 file descriptors: fewer than its connection cap.
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 64 && exec \"$0\" serve --addr \"$1\"")
        .arg(env!("CARGO_BIN_EXE_myao"))
        .arg(&addr)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(log);
    for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("MYAO_")) {
        command.env_remove(name);
    }
    command.envs(env(&slack, &llm_base));
    let mut child = command.spawn().unwrap();
    let mut up = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(&addr).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        up,
        "serve did not start: {}",
        std::fs::read_to_string(&log_path).unwrap_or_default()
    );

    // A hundred idle connections: past its descriptors, accept fails.
    let mut held = Vec::new();
    for _ in 0..100 {
        if let Ok(c) = tokio::net::TcpStream::connect(&addr).await {
            held.push(c);
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let logged = std::fs::read_to_string(&log_path).unwrap_or_default();
    let lines = logged.matches("accept failed").count();
    assert!(
        (1..=3).contains(&lines),
        "{lines} accept lines in 3 s:\n{}",
        &logged[..logged.len().min(2000)]
    );

    // Descriptors free again: it answers.
    drop(held);
    let mut answered = false;
    for _ in 0..60 {
        let got = tokio::time::timeout(
            Duration::from_secs(1),
            myao_http::http_client()
                .get(format!("http://{addr}/health"))
                .send(),
        )
        .await;
        if got.is_ok_and(|r| r.is_ok_and(|r| r.status() == 404)) {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(answered, "serve answers again once descriptors are free");
}

/// The Slack Web API calls the stub has had, by method, in order, with
/// their JSON bodies.
async fn slack_calls(slack: &MockServer) -> Vec<(String, Value)> {
    slack
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let method = r.url.path().trim_start_matches("/api/").to_owned();
            (
                method,
                serde_json::from_slice(&r.body).unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// `assistant.threads.setStatus` answered with `answer`.
async fn status_answers(slack: &MockServer, answer: Value) {
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/api/assistant.threads.setStatus"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(answer))
        .mount(slack)
        .await;
}

#[tokio::test]
async fn a_mention_shows_the_bot_writing_while_a_slow_model_writes() {
    let (addr, _, stop, running, (slack, llm)) = running_with(serve::Limits::default(), &[]).await;
    status_answers(&slack, serde_json::json!({"ok": true})).await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(completion(REPLY).set_delay(Duration::from_secs(4)))
        .with_priority(1)
        .mount(&llm)
        .await;
    let ts = serving::now_ts(4000);
    let client = myao_http::http_client();
    let sent = std::time::Instant::now();
    let r = post(
        &client,
        &format!("http://{addr}{EVENTS_PATH}"),
        mention_body(&ts),
        None,
    )
    .await;
    assert_eq!(r.status(), 200);

    // The status shows within 1.5 s, long before the reply.
    let shown = loop {
        let calls = slack_calls(&slack).await;
        if let Some((_, body)) = calls
            .iter()
            .find(|(m, _)| m == "assistant.threads.setStatus")
        {
            assert!(
                !calls.iter().any(|(m, _)| m == "chat.postMessage"),
                "{calls:?}"
            );
            break body.clone();
        }
        assert!(
            sent.elapsed() < Duration::from_millis(1500),
            "no status yet: {calls:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert_eq!(shown["channel_id"], CHANNEL);
    assert_eq!(shown["thread_ts"], ts.as_str(), "in the mention's thread");
    let status = shown["status"].as_str().unwrap_or_default();
    assert!(!status.is_empty(), "{shown}");
    assert!(shown["loading_messages"]
        .as_array()
        .is_some_and(|l| !l.is_empty()));

    // Then the reply at the top level, and the status cleared after it.
    wait_for_post(&slack, CHANNEL).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let calls: Vec<(String, String)> = slack_calls(&slack)
        .await
        .into_iter()
        .filter(|(m, _)| m == "assistant.threads.setStatus" || m == "chat.postMessage")
        .map(|(m, b)| (m, b["status"].as_str().unwrap_or("-").to_owned()))
        .collect();
    assert_eq!(
        calls,
        [
            ("assistant.threads.setStatus".to_owned(), status.to_owned()),
            ("chat.postMessage".to_owned(), "-".to_owned()),
            ("assistant.threads.setStatus".to_owned(), String::new()),
        ]
    );
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_reply_that_is_not_written_clears_the_status_and_a_missing_scope_costs_nothing() {
    // The model answers nothing: no reply, and the status goes.
    let (addr, _, stop, running, (slack, llm)) = running_with(serve::Limits::default(), &[]).await;
    status_answers(&slack, serde_json::json!({"ok": true})).await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(completion("   "))
        .with_priority(1)
        .mount(&llm)
        .await;
    let client = myao_http::http_client();
    let url = format!("http://{addr}{EVENTS_PATH}");
    let r = post(&client, &url, mention_body(&serving::now_ts(5000)), None).await;
    assert_eq!(r.status(), 200);
    let mut statuses = Vec::new();
    for _ in 0..100 {
        statuses = slack_calls(&slack)
            .await
            .into_iter()
            .filter(|(m, _)| m == "assistant.threads.setStatus")
            .map(|(_, b)| b["status"].as_str().unwrap_or_default().to_owned())
            .collect();
        if statuses.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(statuses.len(), 2, "{statuses:?}");
    assert!(
        !statuses[0].is_empty() && statuses[1].is_empty(),
        "{statuses:?}"
    );
    assert!(!slack_calls(&slack)
        .await
        .iter()
        .any(|(m, _)| m == "chat.postMessage"));
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();

    // A workspace without the scope: the reply is posted all the same.
    let (addr, _, stop, running, (slack, _llm)) = running_with(serve::Limits::default(), &[]).await;
    status_answers(
        &slack,
        serde_json::json!({"ok": false, "error": "missing_scope"}),
    )
    .await;
    let url = format!("http://{addr}{EVENTS_PATH}");
    let r = post(&client, &url, mention_body(&serving::now_ts(6000)), None).await;
    assert_eq!(r.status(), 200);
    let posted = wait_for_post(&slack, CHANNEL).await;
    assert_eq!(posted["text"], REPLY);
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}

/// A click of the feedback buttons under the bot's post `post` in
/// [`CHANNEL`], as Slack's interactivity posts it: a URL-encoded form.
fn feedback_click(post: &str, value: &str) -> Vec<u8> {
    let payload = serde_json::json!({
        "type": "block_actions",
        "user": {"id": "U0ANN"},
        "container": {"type": "message", "message_ts": post, "channel_id": CHANNEL},
        "channel": {"id": CHANNEL},
        "message": {"user": "UMYAO", "bot_id": "B0MYAO", "ts": post, "text": "にゃ"},
        "actions": [{"type": "feedback_buttons", "action_id": "myao_feedback", "value": value}],
    });
    let mut body = b"payload=".to_vec();
    for b in payload.to_string().bytes() {
        match b {
            b if b.is_ascii_alphanumeric() => body.push(b),
            b' ' => body.push(b'+'),
            b => body.extend(format!("%{b:02X}").bytes()),
        }
    }
    body
}

/// A running `myao serve` over the Slack and LLM stubs: its address, its
/// ingest (to read the store), the stop signal and the server's task.
struct Serving {
    addr: std::net::SocketAddr,
    ingest: std::sync::Arc<myao_core::app::ingest::Ingest>,
    stop: tokio::sync::oneshot::Sender<()>,
    running: tokio::task::JoinHandle<anyhow::Result<()>>,
    stubs: (MockServer, MockServer),
}

impl Serving {
    async fn start() -> Serving {
        Serving::start_with(slack_stub().await, &[]).await
    }

    /// Over the Slack stub `slack`, with the settings `extra` too.
    async fn start_with(slack: MockServer, extra: &[(&str, &str)]) -> Serving {
        let (server, llm) = bound(&slack, extra).await;
        let (addr, ingest) = (server.local_addr().expect("an address"), server.ingest());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Serving {
            addr,
            ingest,
            stop,
            running,
            stubs: (slack, llm),
        }
    }

    async fn stop(self) {
        self.stop.send(()).expect("running");
        let stopped = self.running.await.expect("the task ends");
        stopped.expect("the server stops cleanly");
    }
}

#[tokio::test]
async fn a_signed_click_at_the_interactivity_path_is_a_label_and_a_forged_one_refused() {
    use myao_domain::hints::Hint;
    use myao_domain::ChannelId;

    let serving =
        Serving::start_with(slack_stub().await, &[("MYAO_FEEDBACK_BUTTONS", "true")]).await;
    let (addr, ingest) = (serving.addr, serving.ingest.clone());
    let client = myao_http::http_client();
    let url = format!("http://{addr}{}", serve::INTERACTIVITY_PATH);
    let send = |body: Vec<u8>, signature: Option<String>| {
        let now = chrono::Utc::now().timestamp().to_string();
        let signature = signature.unwrap_or_else(|| sign(SECRET.as_bytes(), &now, &body));
        client
            .post(&url)
            .header("x-slack-request-timestamp", now)
            .header("x-slack-signature", signature)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let post = serving::now_ts(7000);
    let channel = ChannelId::parse(CHANNEL).unwrap();

    // Forged: 401, nothing stored.
    let forged = format!("v0={}", "0".repeat(64));
    let r = send(feedback_click(&post, "negative"), Some(forged))
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(ingest
        .ports
        .store
        .labels(&channel)
        .await
        .unwrap()
        .is_empty());

    // Signed: 200 with nothing in it, and the click is a label.
    let r = send(feedback_click(&post, "negative"), None).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "");
    let labels = ingest.ports.store.labels(&channel).await.unwrap();
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(
        (labels[0].user.as_str(), labels[0].hint),
        ("U0ANN", Hint::Negative)
    );
    // A broken form: refused.
    let r = send(b"payload=%7Bbroken".to_vec(), None).await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.text().await.unwrap(), "malformed interaction");

    serving.stop().await;
}

#[tokio::test]
async fn a_signed_reaction_on_its_post_at_the_events_path_is_a_hint_and_taking_it_back_undoes_it() {
    use myao_domain::hints::Hint;
    use myao_domain::ChannelId;

    let serving = Serving::start().await;
    let (addr, ingest) = (serving.addr, serving.ingest.clone());
    let client = myao_http::http_client();
    let url = format!("http://{addr}{EVENTS_PATH}");
    let post_ts = serving::now_ts(8000);
    let reaction = |kind: &str, n: u32| {
        serde_json::to_vec(&serde_json::json!({
            "type": "event_callback", "team_id": "T0ACME", "event_id": format!("EvReact{n}"),
            "event_time": 1767616200,
            "authorizations": [{"user_id": "UMYAO", "is_bot": true}],
            "event": {
                "type": kind, "user": "U0CHIKA", "reaction": "-1", "item_user": "UMYAO",
                "item": {"type": "message", "channel": CHANNEL, "ts": post_ts},
                "event_ts": serving::now_ts(9000 + n),
            }
        }))
        .expect("json")
    };
    let channel = ChannelId::parse(CHANNEL).unwrap();
    let labels = || async { ingest.ports.store.labels(&channel).await.unwrap() };

    let forged = format!("v0={}", "0".repeat(64));
    let r = post(&client, &url, reaction("reaction_added", 1), Some(forged)).await;
    assert_eq!(r.status(), 401);
    assert!(
        labels().await.is_empty(),
        "a forged reaction stores nothing"
    );

    let r = post(&client, &url, reaction("reaction_added", 2), None).await;
    assert_eq!(r.status(), 200);
    let given = labels().await;
    assert_eq!(given.len(), 1, "{given:?}");
    assert_eq!(
        (given[0].user.as_str(), given[0].hint),
        ("U0CHIKA", Hint::Negative)
    );

    let r = post(&client, &url, reaction("reaction_removed", 3), None).await;
    assert_eq!(r.status(), 200);
    assert!(labels().await.is_empty(), "taken back");

    serving.stop().await;
}

#[tokio::test]
async fn with_a_client_id_serve_installs_a_team_through_add_to_slack() {
    use myao_domain::TeamId;
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, ResponseTemplate};

    let slack = slack_stub().await;
    Mock::given(method("POST"))
        .and(path("/api/oauth.v2.access"))
        .and(body_string_contains("client_secret=the-secret"))
        .and(body_string_contains("code=c0de"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "ok": true, "access_token": "xoxb-other", "scope": "chat:write",
            "bot_user_id": "U0OTHERBOT", "team": {"id": "T0OTHER", "name": "Other"}
        })))
        .mount(&slack)
        .await;
    let extra = [
        ("MYAO_SLACK_CLIENT_ID", "123.456"),
        ("MYAO_SLACK_CLIENT_SECRET", "the-secret"),
    ];
    let serving = Serving::start_with(slack, &extra).await;
    let (addr, ingest) = (serving.addr, serving.ingest.clone());
    let client = myao_http::http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");

    let start = client
        .get(format!("http://{addr}/slack/install"))
        .send()
        .await
        .expect("answered");
    assert_eq!(start.status(), 302);
    let to = start.headers()["location"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(
        to.starts_with("https://slack.com/oauth/v2/authorize?client_id=123.456&scope="),
        "{to}"
    );
    let state = to.rsplit("state=").next().expect("a state");
    let set_cookie = start.headers()["set-cookie"].to_str().expect("text");
    let cookie = set_cookie.split(';').next().expect("name=value").to_owned();

    // Slack's consent page sending the browser back, with its cookie.
    let come_back = || {
        client
            .get(format!(
                "http://{addr}/slack/oauth_redirect?code=c0de&state={state}"
            ))
            .header("cookie", &cookie)
            .send()
    };
    let back = come_back().await.expect("answered");
    assert_eq!(back.status(), 200);
    assert!(back
        .text()
        .await
        .expect("a page")
        .contains("myao is in Other now"));
    let team = TeamId::parse("T0OTHER").expect("team");
    let kept = ingest.ports.store.installation(&team).await.expect("read");
    assert_eq!(
        kept.map(|i| i.bot_user_id.to_string()),
        Some("U0OTHERBOT".into())
    );

    let again = come_back().await.expect("answered");
    assert_eq!(again.status(), 400, "a state serves once");

    // The installed team's mention is kept in its part of the store and
    // answered with its own token and bot.
    let ts = serving::now_ts(4000);
    let mut event = serving::mention("C0OTHER", &ts);
    event["team_id"] = "T0OTHER".into();
    event["authorizations"][0]["user_id"] = "U0OTHERBOT".into();
    event["event"]["text"] = "<@U0OTHERBOT> ランチどうしよう？".into();
    let body = serde_json::to_vec(&event).expect("json");
    let r = post(&client, &format!("http://{addr}{EVENTS_PATH}"), body, None).await;
    assert_eq!(r.status(), 200);
    let mut token = None;
    for _ in 0..200 {
        let requests = serving.stubs.0.received_requests().await.expect("recorded");
        token = requests
            .iter()
            .filter(|r| r.url.path() == "/api/chat.postMessage")
            .find(|r| {
                serde_json::from_slice::<serde_json::Value>(&r.body)
                    .is_ok_and(|b| b["channel"] == "C0OTHER")
            })
            .and_then(|r| {
                r.headers
                    .get("authorization")?
                    .to_str()
                    .ok()
                    .map(str::to_owned)
            });
        if token.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(token.as_deref(), Some("Bearer xoxb-other"));
    let other = myao_domain::ChannelId::parse("C0OTHER").expect("channel");
    let at = myao_domain::Ts::parse(&ts).expect("ts");
    let stacks = ingest
        .ports
        .store
        .get_message(&other, at)
        .await
        .expect("read");
    assert!(stacks.is_none(), "not in the stack's own part");
    let teams = ingest.ports.store.for_team(&team);
    assert!(teams.get_message(&other, at).await.expect("read").is_some());
    serving.stop().await;
}

#[tokio::test]
async fn without_a_client_id_there_is_no_install_page() {
    let serving = Serving::start().await;
    let answer = myao_http::http_client()
        .get(format!("http://{}/slack/install", serving.addr))
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), 404);
    serving.stop().await;
}

/// Issue 56: a bot with no token of its own, only the app's Client ID and
/// Secret (the stack that serves installed workspaces alone), starts; its
/// install page is offered, and a workspace with no installation is
/// acknowledged and dropped: stored nowhere, answered never.
#[tokio::test]
async fn with_only_a_client_id_and_its_secret_serve_starts_and_takes_no_stranger() {
    let (slack, (_llm, llm_base)) = (slack_stub().await, llm_stub().await);
    let mut vars: Vec<(String, String)> = env(&slack, &llm_base)
        .into_iter()
        .filter(|(k, _)| k != "MYAO_SLACK_BOT_TOKEN")
        .collect();
    vars.push(("MYAO_SLACK_CLIENT_ID".into(), "123.456".into()));
    vars.push(("MYAO_SLACK_CLIENT_SECRET".into(), "the-secret".into()));
    let cfg = config::load(None, &vars, &[]).expect("config");
    let server = serve::bind(cfg, "127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("it starts with no token of its own");
    let (addr, ingest) = (server.local_addr().expect("an address"), server.ingest());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let client = myao_http::http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let install = client
        .get(format!("http://{addr}/slack/install"))
        .send()
        .await
        .expect("answered");
    assert_eq!(install.status(), 302, "Add to Slack is offered");

    let ts = serving::now_ts(5000);
    let r = post(
        &client,
        &format!("http://{addr}{EVENTS_PATH}"),
        mention_body(&ts),
        None,
    )
    .await;
    assert_eq!(r.status(), 200, "acknowledged");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let channel = myao_domain::ChannelId::parse(CHANNEL).expect("channel");
    let at = myao_domain::Ts::parse(&ts).expect("ts");
    let kept = ingest
        .ports
        .store
        .get_message(&channel, at)
        .await
        .expect("read");
    assert!(kept.is_none(), "stored nowhere");
    let called: Vec<String> = slack
        .received_requests()
        .await
        .expect("recorded")
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert!(called.is_empty(), "no auth.test, no answer: {called:?}");
    stop.send(()).expect("running");
    running
        .await
        .expect("the task ends")
        .expect("stops cleanly");
}
