//! `myao serve` in process, against Slack and LLM stubs (wiremock):
//! a signed mention is answered in Slack; a forged request is refused.

use std::time::Duration;

use myao::domain::signature::sign;
use myao_local::config;
use myao_local::serve::{self, EVENTS_PATH};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SECRET: &str = "local-signing-secret";
const REPLY: &str = "カレーに一票だにゃ";

async fn slack_stub() -> MockServer {
    let slack = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"ok": true, "user_id": "UMYAO"})),
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
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"ok": true, "channel": {"id": "C0RANDOM", "name": "random"}}),
            ),
        )
        .mount(&slack)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"ok": true, "channel": "C0RANDOM", "ts": "1767616201.000100"}),
            ),
        )
        .mount(&slack)
        .await;
    slack
}

async fn llm_stub() -> MockServer {
    let llm = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5}
        })))
        .mount(&llm)
        .await;
    llm
}

fn env(slack: &MockServer, llm: &MockServer) -> Vec<(String, String)> {
    [
        ("MYAO_SLACK_API_BASE_URL", format!("{}/api", slack.uri())),
        ("MYAO_LLM_BASE_URL", format!("{}/v1", llm.uri())),
        ("MYAO_SLACK_BOT_TOKEN", "xoxb-test".to_owned()),
        ("MYAO_SLACK_SIGNING_SECRET", SECRET.to_owned()),
        ("MYAO_SLACK_MAX_RETRIES", "0".to_owned()),
        ("MYAO_LLM_MAX_RETRIES", "0".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn mention_body(ts: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "type": "event_callback",
        "team_id": "T0ACME",
        "event_id": "Ev0MENTION",
        "event_time": 1767616200,
        "authorizations": [{"user_id": "UMYAO", "is_bot": true}],
        "event": {
            "type": "app_mention", "channel": "C0RANDOM", "user": "U0CHIKA",
            "text": "<@UMYAO> ランチどうしよう？", "ts": ts, "event_ts": ts
        }
    }))
    .expect("json")
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
    let (slack, llm) = (slack_stub().await, llm_stub().await);
    let cfg = config::load(None, &env(&slack, &llm), &[]).unwrap();
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
    let client = reqwest::Client::new();

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
    let r = client
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    // A real mention, just sent (an older one would be dropped by
    // mention_max_age_seconds): 200 at once, then a reply posted in Slack.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let r = post(&client, &url, mention_body(&format!("{now}.002000")), None).await;
    assert_eq!(r.status(), 200);
    let posted = wait_for_post(&slack).await;
    assert_eq!(posted["channel"], "C0RANDOM");
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

async fn wait_for_post(slack: &MockServer) -> Value {
    for _ in 0..200 {
        let requests = slack.received_requests().await.expect("recorded");
        if let Some(r) = requests
            .iter()
            .find(|r| r.url.path() == "/api/chat.postMessage")
        {
            assert_eq!(
                r.headers.get("authorization").and_then(|v| v.to_str().ok()),
                Some("Bearer xoxb-test")
            );
            return serde_json::from_slice(&r.body).expect("a JSON body");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no chat.postMessage within 10 s");
}

#[tokio::test]
async fn an_oversized_body_gets_413() {
    let (slack, llm) = (slack_stub().await, llm_stub().await);
    let cfg = config::load(None, &env(&slack, &llm), &[]).unwrap();
    let server = serve::bind(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let big = vec![b' '; myao::app::ingest::MAX_BODY_BYTES + 10];
    let r = post(
        &reqwest::Client::new(),
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
async fn serve_refuses_to_start_without_its_secrets() {
    let (slack, llm) = (slack_stub().await, llm_stub().await);
    let vars: Vec<(String, String)> = env(&slack, &llm)
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

    let vars: Vec<(String, String)> = env(&slack, &llm)
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
