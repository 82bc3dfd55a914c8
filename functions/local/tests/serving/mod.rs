//! What both front doors of `myao serve` are tested with (HTTP in
//! tests/serve.rs, Socket Mode in tests/socket.rs): a Slack Web API stub,
//! the LLM stub, the settings pointing at them, a mention just written, and
//! the wait for the bot's answer.

use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use myao_testkit::http::completion;

/// What the LLM stub answers.
pub const REPLY: &str = "カレーに一票だにゃ";
/// The channel of [`mention`]s, unless told otherwise.
pub const CHANNEL: &str = "C0RANDOM";
/// The bot token of the settings.
pub const BOT_TOKEN: &str = "xoxb-test";

/// The query parameter `name` of a request.
fn query(request: &Request, name: &str) -> String {
    request
        .url
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// `conversations.info`: any channel exists, named after its id.
struct ChannelInfo;

impl Respond for ChannelInfo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let id = query(request, "channel");
        let name = id.to_lowercase();
        ResponseTemplate::new(200)
            .set_body_json(json!({"ok": true, "channel": {"id": id, "name": name}}))
    }
}

/// `chat.postMessage`: posted, in the channel asked for.
struct Posted;

impl Respond for Posted {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        ResponseTemplate::new(200).set_body_json(
            json!({"ok": true, "channel": body["channel"], "ts": "1767616201.000100"}),
        )
    }
}

/// The Slack Web API the bot calls: `auth.test` says it is UMYAO.
pub async fn slack_stub() -> MockServer {
    let slack = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "user_id": "UMYAO", "team_id": "T0ACME"})),
        )
        .mount(&slack)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/users.info"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"ok": true, "user": {"id": "U0CHIKA", "name": "chika", "profile": {"display_name": "ちか"}}}),
        ))
        .mount(&slack)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/conversations.info"))
        .respond_with(ChannelInfo)
        .mount(&slack)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(Posted)
        .mount(&slack)
        .await;
    slack
}

/// An LLM answering [`REPLY`] to everything; and its base URL.
pub async fn llm_stub() -> (MockServer, String) {
    myao_testkit::http::llm_stub(completion(REPLY)).await
}

/// The settings and secrets of a bot using these stubs (no signing secret,
/// no app-level token: each front door adds its own).
pub fn env(slack: &MockServer, llm_base: &str) -> Vec<(String, String)> {
    [
        ("MYAO_SLACK_API_BASE_URL", format!("{}/api", slack.uri())),
        ("MYAO_LLM_BASE_URL", llm_base.to_owned()),
        ("MYAO_SLACK_BOT_TOKEN", BOT_TOKEN.to_owned()),
        ("MYAO_SLACK_MAX_RETRIES", "0".to_owned()),
        ("MYAO_LLM_MAX_RETRIES", "0".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A Slack `ts` of now, `micros` telling apart the messages of a second
/// (an older mention would be dropped by mention_max_age_seconds).
pub fn now_ts(micros: u32) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    format!("{now}.{micros:06}")
}

/// The Events API body of Chika mentioning the bot in `channel` at `ts`.
pub fn mention(channel: &str, ts: &str) -> Value {
    json!({
        "type": "event_callback",
        "team_id": "T0ACME",
        "event_id": format!("Ev{channel}{}", ts.replace('.', "")),
        "event_time": 1767616200,
        "authorizations": [{"user_id": "UMYAO", "is_bot": true}],
        "event": {
            "type": "app_mention", "channel": channel, "user": "U0CHIKA",
            "text": "<@UMYAO> ランチどうしよう？", "ts": ts, "event_ts": ts
        }
    })
}

/// The first `chat.postMessage` to `channel`, sent with the bot token;
/// waits for it up to 10 s.
pub async fn wait_for_post(slack: &MockServer, channel: &str) -> Value {
    for _ in 0..200 {
        let requests = slack.received_requests().await.expect("recorded");
        for r in requests
            .iter()
            .filter(|r| r.url.path() == "/api/chat.postMessage")
        {
            let body: Value = serde_json::from_slice(&r.body).expect("a JSON body");
            if body["channel"] == channel {
                assert_eq!(
                    r.headers.get("authorization").and_then(|v| v.to_str().ok()),
                    Some(format!("Bearer {BOT_TOKEN}").as_str())
                );
                return body;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no chat.postMessage to {channel} within 10 s");
}
