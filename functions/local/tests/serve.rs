//! `myao serve` in process, against Slack and LLM stubs (wiremock):
//! a signed mention is answered in Slack; a forged request is refused; a
//! mention made while the LLM is down for a moment is answered after it.

mod common;
mod serving;

use std::time::Duration;

use myao::domain::signature::sign;
use myao_local::config;
use myao_local::serve::{self, EVENTS_PATH};
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
    let client = myao::adapters::tls::http_client();

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
    let (slack, (_llm, llm_base)) = (slack_stub().await, llm_stub().await);
    let cfg = config::load(None, &env(&slack, &llm_base), &[]).unwrap();
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
        &myao::adapters::tls::http_client(),
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
    let (slack, (llm, llm_base)) = (slack_stub().await, llm_stub().await);
    // The LLM fails the first two tries (no retries of its own), then
    // answers; the job comes back after 1 s, then 2 s.
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(500).set_body_string("overloaded"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&llm)
        .await;
    let mut vars = env(&slack, &llm_base);
    vars.push(("MYAO_RETRY_DELAYS_SECONDS".to_owned(), "1,2".to_owned()));
    let cfg = config::load(None, &vars, &[]).unwrap();
    assert!(cfg.issues.is_empty(), "{:?}", cfg.issues);
    let server = serve::bind(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let client = myao::adapters::tls::http_client();
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
