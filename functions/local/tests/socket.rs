//! `myao serve --socket-mode` in process: a WebSocket server here plays
//! Slack's side of Socket Mode, wiremock its Web API
//! (`apps.connections.open`, `auth.test`, `chat.postMessage`, ...) and the
//! LLM.
//!
//! - a mention over the socket: acknowledged, answered in Slack; Ctrl-C
//!   closes the socket
//! - an event redelivered in a new envelope: acknowledged, answered once
//! - `disconnect` (refresh_requested, warning): a new connection before the
//!   old one closes; `link_disabled`: an error, no reconnect
//! - a dropped connection: connected again
//! - `apps.connections.open` refusing the token: a clear error
//! - the development app's manifest: the main one's scopes, events and
//!   interactivity, Socket Mode on

use crate::serving;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use myao_local::config;
use myao_local::socket::{self, SocketMode};
use serde_json::{json, Value};
use serving::{llm_stub, slack_stub, wait_for_post, CHANNEL, REPLY};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const APP_TOKEN: &str = "xapp-1-A0MYAO-test";
const OPEN_PATH: &str = "/api/apps.connections.open";
/// How long any one thing may take before the test fails.
const PATIENCE: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {PATIENCE:?}"))
}

/// What the test has Slack's side of a connection do.
enum Command {
    Send(Message),
    /// Drop the connection without a close frame.
    Drop,
}

/// Slack's Socket Mode endpoint: numbers the connections from 1 and
/// records, in order, `open N` (accepted, before the handshake: myao cannot
/// have it yet), `closed N` (myao's close frame received) and `ended N`.
struct SlackSocket {
    url: String,
    connections: mpsc::UnboundedReceiver<Connection>,
    log: Arc<Mutex<Vec<String>>>,
}

/// One connection, seen from Slack's side.
struct Connection {
    commands: mpsc::UnboundedSender<Command>,
    /// The text frames myao sent.
    received: mpsc::UnboundedReceiver<String>,
}

impl SlackSocket {
    async fn start() -> SlackSocket {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let url = format!(
            "ws://{}/link/?ticket=t-1&app_id=A0MYAO",
            listener.local_addr().expect("bound")
        );
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, connections) = mpsc::unbounded_channel();
        let accepted_log = log.clone();
        tokio::spawn(async move {
            let mut n = 0;
            while let Ok((stream, _)) = listener.accept().await {
                n += 1;
                let log = accepted_log.clone();
                record(&log, format!("open {n}"));
                let Ok(ws) = tokio_tungstenite::accept_async(stream).await else {
                    continue;
                };
                let (commands, orders) = mpsc::unbounded_channel();
                let (sent, received) = mpsc::unbounded_channel();
                tokio::spawn(serve_connection(n, ws, orders, sent, log));
                let _ = tx.send(Connection { commands, received });
            }
        });
        SlackSocket {
            url,
            connections,
            log,
        }
    }

    /// The next connection myao opens, greeted with a `hello` as Slack does.
    async fn next_connection(&mut self) -> Connection {
        let conn = within("a connection", self.connections.recv())
            .await
            .expect("the stub accepts");
        conn.hello();
        conn
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().expect("not poisoned").clone()
    }
}

fn record(log: &Mutex<Vec<String>>, line: String) {
    log.lock().expect("not poisoned").push(line);
}

async fn serve_connection(
    n: usize,
    mut ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    mut orders: mpsc::UnboundedReceiver<Command>,
    sent: mpsc::UnboundedSender<String>,
    log: Arc<Mutex<Vec<String>>>,
) {
    loop {
        tokio::select! {
            order = orders.recv() => match order {
                Some(Command::Send(message)) => {
                    if ws.send(message).await.is_err() {
                        break;
                    }
                }
                Some(Command::Drop) | None => return,
            },
            message = ws.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    let _ = sent.send(text.to_string());
                }
                Some(Ok(Message::Close(_))) => record(&log, format!("closed {n}")),
                Some(Ok(_)) => {}
                None | Some(Err(_)) => break,
            },
        }
    }
    record(&log, format!("ended {n}"));
}

impl Connection {
    fn send(&self, frame: Value) {
        let _ = self
            .commands
            .send(Command::Send(Message::text(frame.to_string())));
    }

    fn hello(&self) {
        self.send(json!({"type": "hello", "num_connections": 1,
            "debug_info": {"host": "applink-test", "approximate_connection_time": 18060}}));
    }

    /// Sends an `events_api` envelope with `payload`, and waits for its
    /// acknowledgement.
    async fn deliver(&mut self, envelope_id: &str, payload: &Value, retry_attempt: u32) {
        self.send(json!({
            "type": "events_api", "envelope_id": envelope_id, "payload": payload,
            "accepts_response_payload": false, "retry_attempt": retry_attempt,
            "retry_reason": if retry_attempt > 0 { "timeout" } else { "" }
        }));
        self.acked(envelope_id).await;
    }

    /// Waits for the acknowledgement of `envelope_id`, the next message.
    async fn acked(&mut self, envelope_id: &str) {
        let text = within("an acknowledgement", self.received.recv())
            .await
            .expect("the connection is open");
        let ack: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(ack, json!({"envelope_id": envelope_id}));
    }

    fn disconnect(&self, reason: &str) {
        self.send(json!({"type": "disconnect", "reason": reason,
            "debug_info": {"host": "applink-test"}}));
    }

    fn drop_it(&self) {
        let _ = self.commands.send(Command::Drop);
    }

    /// Waits until the connection is gone on Slack's side.
    async fn ended(&mut self) {
        within("the connection's end", async {
            while self.received.recv().await.is_some() {}
        })
        .await;
    }
}

/// `apps.connections.open` answering the stub socket's URL, for the app
/// token only.
async fn open_answers(slack: &MockServer, answer: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(OPEN_PATH))
        .and(header(
            "authorization",
            format!("Bearer {APP_TOKEN}").as_str(),
        ))
        .respond_with(answer)
        .mount(slack)
        .await;
}

async fn opens(slack: &MockServer) -> usize {
    let requests = slack.received_requests().await.expect("recorded");
    requests
        .iter()
        .filter(|r| r.url.path() == OPEN_PATH)
        .count()
}

/// Socket Mode's settings: the app token, no signing secret.
fn socket_env(slack: &MockServer, llm_base: &str) -> Vec<(String, String)> {
    let mut env = serving::env(slack, llm_base);
    env.push(("MYAO_SLACK_APP_TOKEN".to_owned(), APP_TOKEN.to_owned()));
    env
}

/// `myao serve --socket-mode`, running against the stubs.
struct Bed {
    slack: MockServer,
    llm: MockServer,
    socket: SlackSocket,
    stop: oneshot::Sender<()>,
    running: JoinHandle<anyhow::Result<()>>,
}

impl Bed {
    /// With `apps.connections.open` answering the stub socket.
    async fn start() -> Bed {
        let socket = SlackSocket::start().await;
        let answer =
            ResponseTemplate::new(200).set_body_json(json!({"ok": true, "url": socket.url}));
        Bed::start_with(socket, answer).await
    }

    async fn start_with(socket: SlackSocket, open_answer: ResponseTemplate) -> Bed {
        let (slack, (llm, llm_base)) = (slack_stub().await, llm_stub().await);
        open_answers(&slack, open_answer).await;
        let cfg = config::load(None, &socket_env(&slack, &llm_base), &[]).expect("settings");
        assert!(cfg.issues.is_empty(), "{:?}", cfg.issues);
        let mode: SocketMode = socket::prepare(cfg, false)
            .await
            .expect("prepared")
            .with_backoff(Duration::from_millis(10));
        assert_eq!(mode.bot_user_id(), "UMYAO", "from auth.test");
        let (stop, stopped) = oneshot::channel::<()>();
        let running = tokio::spawn(mode.run(async {
            let _ = stopped.await;
        }));
        Bed {
            slack,
            llm,
            socket,
            stop,
            running,
        }
    }

    /// What `run` came to, without a shutdown asked.
    async fn outcome(self) -> anyhow::Result<()> {
        let _keep = self.stop;
        within("serve's end", self.running).await.expect("no panic")
    }

    /// Ctrl-C, and what `run` came to.
    async fn shut_down(self) -> anyhow::Result<()> {
        self.stop.send(()).expect("still running");
        within("serve's end", self.running).await.expect("no panic")
    }

    async fn answered(&self, channel: &str) {
        let posted = wait_for_post(&self.slack, channel).await;
        assert_eq!(posted["text"], REPLY);
    }

    /// Delivers a mention just written in [`CHANNEL`] on `conn`, and waits
    /// for its answer there; `micros` tells its `ts` (and envelope) apart.
    async fn mention_answered(&self, conn: &mut Connection, micros: u32) {
        let ts = serving::now_ts(micros);
        conn.deliver(&format!("env-{micros}"), &serving::mention(CHANNEL, &ts), 0)
            .await;
        self.answered(CHANNEL).await;
    }
}

#[tokio::test]
async fn a_mention_is_acknowledged_and_answered_and_ctrl_c_closes_the_socket() {
    let mut bed = Bed::start().await;
    let mut conn = bed.socket.next_connection().await;
    // A slash command: acknowledged, nothing else.
    conn.send(json!({"type": "slash_commands", "envelope_id": "env-cmd",
        "payload": {"command": "/myao", "text": "hi"}, "accepts_response_payload": true}));
    conn.acked("env-cmd").await;
    bed.mention_answered(&mut conn, 100).await;
    assert_eq!(opens(&bed.slack).await, 1);
    let prompt: Value =
        serde_json::from_slice(&bed.llm.received_requests().await.unwrap()[0].body).unwrap();
    assert!(prompt["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("ランチどうしよう"));

    let log = bed.socket.log.clone();
    bed.shut_down().await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(log[..2], ["open 1", "closed 1"], "a close frame was sent");
}

#[tokio::test]
async fn an_event_redelivered_in_a_new_envelope_is_answered_once() {
    let mut bed = Bed::start().await;
    let mut conn = bed.socket.next_connection().await;
    let mention = serving::mention(CHANNEL, &serving::now_ts(200));
    conn.deliver("env-1", &mention, 0).await;
    bed.answered(CHANNEL).await;
    // Slack saw no acknowledgement in time, say, and sends it again.
    conn.deliver("env-2", &mention, 1).await;
    // A mention elsewhere after it: once it is answered, the redelivery
    // (ingested before it, in order) has made whatever job it would make.
    conn.deliver(
        "env-3",
        &serving::mention("C0OTHER", &serving::now_ts(300)),
        0,
    )
    .await;
    bed.answered("C0OTHER").await;

    let posts: Vec<Value> = bed
        .slack
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/api/chat.postMessage")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let in_channel = posts.iter().filter(|p| p["channel"] == CHANNEL).count();
    assert_eq!(in_channel, 1, "{posts:?}");
    assert_eq!(bed.llm.received_requests().await.unwrap().len(), 2);
    bed.shut_down().await.unwrap();
}

#[tokio::test]
async fn a_disconnect_opens_the_new_connection_before_closing_the_old() {
    let mut bed = Bed::start().await;
    let mut first = bed.socket.next_connection().await;
    first.disconnect("refresh_requested");
    let mut second = bed.socket.next_connection().await;
    first.ended().await;
    bed.mention_answered(&mut second, 400).await;

    second.disconnect("warning");
    // Kept (open) to the end.
    let _third = bed.socket.next_connection().await;
    second.ended().await;
    assert_eq!(opens(&bed.slack).await, 3);
    let log = bed.socket.log();
    assert_eq!(
        log,
        ["open 1", "open 2", "closed 1", "ended 1", "open 3", "closed 2", "ended 2"],
        "each new connection opened before the old one closed"
    );
    bed.shut_down().await.unwrap();
}

#[tokio::test]
async fn link_disabled_stops_serve_with_an_error_and_no_reconnect() {
    let mut bed = Bed::start().await;
    let mut conn = bed.socket.next_connection().await;
    conn.disconnect("link_disabled");
    conn.ended().await;
    // Closed by myao, and not opened again.
    assert_eq!(bed.socket.log(), ["open 1", "closed 1", "ended 1"]);
    assert_eq!(opens(&bed.slack).await, 1);
    let error = format!("{:#}", bed.outcome().await.unwrap_err());
    assert!(error.contains("link_disabled"), "{error}");
    assert!(error.contains("Socket Mode"), "{error}");
}

#[tokio::test]
async fn a_dropped_connection_is_opened_again() {
    let mut bed = Bed::start().await;
    let first = bed.socket.next_connection().await;
    first.drop_it();
    let mut second = bed.socket.next_connection().await;
    bed.mention_answered(&mut second, 500).await;
    assert_eq!(opens(&bed.slack).await, 2);
    bed.shut_down().await.unwrap();
}

#[tokio::test]
async fn a_refused_app_token_is_a_clear_error() {
    let socket = SlackSocket::start().await;
    let refusal =
        ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": "invalid_auth"}));
    let bed = Bed::start_with(socket, refusal).await;
    let log = bed.socket.log.clone();
    let error = format!("{:#}", bed.outcome().await.unwrap_err());
    for needle in [
        "invalid_auth",
        "app-level token",
        "connections:write",
        "MYAO_SLACK_APP_TOKEN",
    ] {
        assert!(error.contains(needle), "{needle}: {error}");
    }
    assert!(
        !error.contains(APP_TOKEN),
        "the token is never shown: {error}"
    );
    assert!(log.lock().unwrap().is_empty(), "no WebSocket opened");
}

#[tokio::test]
async fn socket_mode_needs_an_app_token_and_no_signing_secret() {
    let (slack, (_llm, llm_base)) = (slack_stub().await, llm_stub().await);
    let cfg = config::load(None, &serving::env(&slack, &llm_base), &[]).unwrap();
    let error = socket::prepare(cfg, false).await.err().unwrap().to_string();
    assert!(error.contains("MYAO_SLACK_APP_TOKEN"), "{error}");

    let mut env = serving::env(&slack, &llm_base);
    env.push((
        "MYAO_SLACK_APP_TOKEN".to_owned(),
        "xoxb-the-bot-token".to_owned(),
    ));
    let cfg = config::load(None, &env, &[]).unwrap();
    let error = socket::prepare(cfg, false).await.err().unwrap().to_string();
    assert!(
        error.contains("xapp-") && error.contains("App-Level Tokens"),
        "{error}"
    );
    assert!(!error.contains("xoxb-the-bot-token"), "{error}");

    let cfg = config::load(None, &socket_env(&slack, &llm_base), &[]).unwrap();
    assert!(socket::prepare(cfg, false).await.is_ok());
}

/// The development app of the README's "try it on your workspace": the
/// main app's scopes and events, but its events over Socket Mode.
#[test]
fn the_dev_manifest_is_the_main_one_with_socket_mode() {
    let read = |name: &str| -> serde_yaml::Value {
        let path = format!("{}/../../infra/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_yaml::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("YAML")
    };
    let (main, dev) = (
        read("slack-app-manifest.yaml"),
        read("slack-app-manifest.dev.yaml"),
    );
    for part in [
        &["oauth_config", "scopes", "bot"][..],
        &["settings", "event_subscriptions", "bot_events"],
        &["features", "app_home"],
        &["settings", "interactivity", "is_enabled"],
    ] {
        let at = |m: &serde_yaml::Value| part.iter().fold(m.clone(), |v, k| v[*k].clone());
        assert_eq!(at(&dev), at(&main), "{part:?}");
        assert!(!at(&main).is_null(), "{part:?}");
    }
    let settings = &dev["settings"];
    assert_eq!(
        settings["socket_mode_enabled"],
        serde_yaml::Value::Bool(true)
    );
    assert!(
        settings["event_subscriptions"]["request_url"].is_null(),
        "a Socket Mode app has no Request URL"
    );
    assert!(
        settings["interactivity"]["request_url"].is_null(),
        "nor one for its interactions"
    );
    assert_eq!(
        main["settings"]["interactivity"]["request_url"],
        main["settings"]["event_subscriptions"]["request_url"],
        "the deployed app's interactions come to its Function URL"
    );
    assert_ne!(
        dev["display_information"]["name"], main["display_information"]["name"],
        "told apart from the deployed app in Slack"
    );
}
