//! Issue 3 end to end against the AWS emulator: signed Slack requests through
//! the ingest function's HTTP handler, stored in DynamoDB, routed to
//! EventBridge Scheduler or SQS; settings and the signing secret from SSM.
//! The emulator never fires a schedule, so a test "fires" one by reading it
//! back and calling the judgment function's handler with its input.
//!
//! Index:
//! - a message: one item, one schedule at the right time with the right payload
//! - retries and the mention's double delivery: one item, one job
//! - a scheduling failure after the store write: 500, then the retry schedules
//! - bursts, threads and the top level: one schedule per conversation
//! - a mention: one queue message, no schedule
//! - forged, stale and unsigned requests: 401, nothing written
//! - a wrongly typed field: 400, nothing written, and no value in the logs
//! - edits and deletions change the stored message
//! - a schedule fired by hand runs the judgment, whose reply goes through SQS
//! - a cold start whose settings cannot be read: 500, nothing written, and
//!   the job functions fail rather than run on the defaults

use myao_core::ports::{MemoryRecords, Messages};
use std::sync::Arc;

use anyhow::Result;
use chrono::{DateTime, Duration, Utc};
use lambda_http::{Body, Request};
use myao_aws::dynamodb::DynamoStore;
use myao_aws::scheduler::{self as eb, EventBridgeScheduler};
use myao_aws::sqs::SqsQueue;
use myao_aws::ssm::SsmSecrets;
use myao_aws::wire::ssm_settings;
use myao_core::adapters::metrics::NoMetrics;
use myao_core::adapters::system::{FixedRandom, ManualClock};
use myao_core::app::ingest::Ingest;
use myao_core::app::Ports;
use myao_core::ports::{Clock, Scheduler};
use myao_core::schedule::ScheduleName;
use myao_domain::{
    ChannelId, ChannelMemoryJob, Conversation, Job, JobKind, JudgmentJob, ResponseJob, Ts,
};
use myao_services::Services;
use myao_testkit::http::completion;
use myao_tests::{
    fresh_queues, fresh_scheduler, fresh_store_with_clock, signed_request_headers, ssm_client,
    unique,
};
use myao_wire::http_services;
use serde_json::{json, Value};

const SECRET: &str = "emulated-signing-secret";
/// 2026-01-05 08:00:00 UTC.
const START: i64 = 1_767_600_000;

struct Bed {
    clock: Arc<ManualClock>,
    store: Arc<DynamoStore>,
    scheduler: Arc<EventBridgeScheduler>,
    queues: Arc<SqsQueue>,
    settings_path: String,
    ingest: Ingest,
}

async fn put(path: &str, name: &str, value: &str, secure: bool) -> Result<()> {
    let t = if secure {
        aws_sdk_ssm::types::ParameterType::SecureString
    } else {
        aws_sdk_ssm::types::ParameterType::String
    };
    ssm_client()
        .await
        .put_parameter()
        .name(format!("{path}{name}"))
        .value(value)
        .r#type(t)
        .overwrite(true)
        .send()
        .await?;
    Ok(())
}

async fn bed() -> Result<Bed> {
    let clock = Arc::new(ManualClock::new(
        DateTime::<Utc>::from_timestamp(START, 0).expect("time"),
    ));
    let store = Arc::new(fresh_store_with_clock(clock.clone()).await);
    let scheduler = Arc::new(fresh_scheduler().await);
    let queues = Arc::new(fresh_queues().await);
    let settings_path = format!("/{}/", unique("myao"));
    // A setting changed from its default, and the secret as SecureString.
    put(&settings_path, "jitter_ratio", "0", false).await?;
    put(&settings_path, "secrets/slack_signing_secret", SECRET, true).await?;
    let ssm = ssm_client().await;
    let ports = Ports {
        store: store.clone(),
        scheduler: scheduler.clone(),
        queue: queues.clone(),
        clock: clock.clone(),
        random: Arc::new(FixedRandom(0.9)),
        settings: ssm_settings(ssm.clone(), settings_path.clone(), clock.clone()),
        metrics: Arc::new(NoMetrics),
    };
    let ingest = Ingest::new(
        ports,
        Arc::new(SsmSecrets::new(ssm)),
        format!("{settings_path}secrets/slack_signing_secret"),
    );
    Ok(Bed {
        clock,
        store,
        scheduler,
        queues,
        settings_path,
        ingest,
    })
}

fn event(kind: &str, ts: &str, thread: Option<&str>, text: &str) -> Value {
    let mut e = json!({"type": kind, "channel": "C1", "user": "UALICE", "text": text, "ts": ts, "channel_type": "channel"});
    if let Some(t) = thread {
        e["thread_ts"] = json!(t);
    }
    json!({"type": "event_callback", "team_id": "T1", "event_id": format!("Ev-{kind}-{ts}"), "event": e,
           "authorizations": [{"user_id": "UBOT", "is_bot": true}]})
}

fn request(body: &[u8], headers: &[(&str, &str)]) -> Request {
    let mut b = lambda_http::http::Request::builder()
        .method("POST")
        .uri("https://example.lambda-url.aws/");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::Binary(body.to_vec())).expect("request")
}

impl Bed {
    async fn deliver_raw(&self, body: &[u8], headers: &[(&str, &str)]) -> (u16, String) {
        let response = myao_ingest::handler::handle(&self.ingest, request(body, headers))
            .await
            .expect("infallible");
        let status = response.status().as_u16();
        let text = match response.body() {
            Body::Text(t) => t.clone(),
            Body::Binary(b) => String::from_utf8_lossy(b).into_owned(),
            Body::Empty => String::new(),
            _ => String::new(),
        };
        (status, text)
    }

    async fn deliver_retry(&self, body: &Value, retry: Option<&str>) -> u16 {
        let body = serde_json::to_vec(body).expect("json");
        let (ts, sig) = signed_request_headers(SECRET, &body, self.clock.now());
        let mut headers = vec![
            ("x-slack-request-timestamp", ts.as_str()),
            ("x-slack-signature", sig.as_str()),
        ];
        if let Some(r) = retry {
            headers.push(("x-slack-retry-num", r));
            headers.push(("x-slack-retry-reason", "http_timeout"));
        }
        self.deliver_raw(&body, &headers).await.0
    }

    async fn deliver(&self, body: &Value) -> u16 {
        self.deliver_retry(body, None).await
    }

    async fn items(&self) -> Result<usize> {
        let out = self
            .store_client()
            .scan()
            .table_name(self.store.table())
            .send()
            .await?;
        Ok(out
            .items()
            .iter()
            .filter(|i| {
                i.get("pk")
                    .and_then(|v| v.as_s().ok())
                    .is_some_and(|pk| pk.starts_with("CH#"))
            })
            .count())
    }

    fn store_client(&self) -> &aws_sdk_dynamodb::Client {
        self.store.client()
    }

    async fn schedules(&self) -> Result<Vec<String>> {
        let out = self
            .scheduler
            .client
            .list_schedules()
            .group_name(&self.scheduler.group)
            .send()
            .await?;
        let mut names: Vec<String> = out
            .schedules()
            .iter()
            .filter_map(|s| s.name().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    async fn queued(&self) -> Result<Vec<Job>> {
        let out = self
            .queues
            .client
            .receive_message()
            .queue_url(&self.queues.response_queue_url)
            .max_number_of_messages(10)
            .send()
            .await?;
        Ok(out
            .messages()
            .iter()
            .map(|m| serde_json::from_str(m.body().unwrap_or_default()).expect("a job"))
            .collect())
    }
}

fn conv(thread: Option<&str>) -> Conversation {
    Conversation {
        channel: ChannelId::parse("C1").expect("id"),
        thread_ts: thread.map(|t| Ts::parse(t).expect("ts")),
    }
}

fn judgment_name(thread: Option<&str>) -> ScheduleName {
    ScheduleName::for_conversation(JobKind::Judgment, &conv(thread))
}

#[tokio::test]
async fn a_message_makes_one_item_and_one_schedule_at_the_right_time() -> Result<()> {
    let b = bed().await?;
    assert_eq!(
        b.deliver(&event(
            "message",
            "1767600000.000100",
            Some("1767599000.000001"),
            "anyone know why the build is red?"
        ))
        .await,
        200
    );
    assert_eq!(b.items().await?, 1);
    let stored = b
        .store
        .get_message(&ChannelId::parse("C1")?, Ts::parse("1767600000.000100")?)
        .await?
        .expect("stored");
    assert_eq!(stored.text, "anyone know why the build is red?");
    assert_eq!(stored.thread_ts, Some(Ts::parse("1767599000.000001")?));
    let schedule = b
        .scheduler
        .get(&judgment_name(Some("1767599000.000001")))
        .await?
        .expect("scheduled");
    // jitter_ratio 0 came from SSM: exactly min_wait_seconds (300 s) after now
    assert_eq!(schedule.at, b.clock.now() + Duration::seconds(300));
    assert_eq!(
        schedule.job,
        Job::Judgment(JudgmentJob {
            channel: ChannelId::parse("C1")?,
            thread_ts: Some(Ts::parse("1767599000.000001")?),
            newest_ts: Ts::parse("1767600000.000100")?
        })
    );
    assert_eq!(b.schedules().await?.len(), 1);
    Ok(())
}

#[tokio::test]
async fn retries_and_a_double_delivered_mention_make_one_item_and_one_job() -> Result<()> {
    let b = bed().await?;
    let msg = event("message", "1767600000.000100", None, "hello");
    assert_eq!(b.deliver(&msg).await, 200);
    let first = b
        .scheduler
        .get(&judgment_name(None))
        .await?
        .expect("scheduled");
    b.clock.advance(Duration::seconds(61));
    for retry in ["1", "2", "3"] {
        assert_eq!(b.deliver_retry(&msg, Some(retry)).await, 200);
    }
    assert_eq!(b.items().await?, 1);
    assert_eq!(b.schedules().await?.len(), 1);
    let after = b
        .scheduler
        .get(&judgment_name(None))
        .await?
        .expect("scheduled");
    assert_eq!(after.at, first.at, "a duplicate does not move the wait");

    let mention = "1767600100.000200";
    assert_eq!(
        b.deliver(&event(
            "message",
            mention,
            Some("1767600000.000100"),
            "<@UBOT> can you help?"
        ))
        .await,
        200
    );
    assert_eq!(
        b.deliver(&event(
            "app_mention",
            mention,
            Some("1767600000.000100"),
            "<@UBOT> can you help?"
        ))
        .await,
        200
    );
    assert_eq!(b.items().await?, 2);
    let queued = b.queued().await?;
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert!(
        matches!(&queued[0], Job::Response(ResponseJob { mention: true, newest_ts, .. }) if newest_ts.to_string() == mention)
    );
    Ok(())
}

#[tokio::test]
async fn a_scheduling_failure_answers_500_and_the_retry_creates_the_schedule() -> Result<()> {
    let mut b = bed().await?;
    // Injected failure: the schedule group does not exist yet.
    let missing_group = unique("myao-missing");
    let real = b.scheduler.clone();
    b.ingest.ports.scheduler = Arc::new(EventBridgeScheduler {
        group: missing_group.clone(),
        ..(*real).clone()
    });
    let msg = event("message", "1767600000.000100", None, "hello");
    assert_eq!(b.deliver(&msg).await, 500);
    assert_eq!(b.items().await?, 1, "stored before the scheduling failed");
    eb::ensure_group(&real.client, &missing_group).await?;
    assert_eq!(b.deliver_retry(&msg, Some("1")).await, 200);
    let scheduler = EventBridgeScheduler {
        group: missing_group,
        ..(*real).clone()
    };
    assert!(
        scheduler.get(&judgment_name(None)).await?.is_some(),
        "the retry finished the routing"
    );
    assert_eq!(b.items().await?, 1);
    Ok(())
}

#[tokio::test]
async fn one_schedule_per_conversation_timed_after_its_last_message() -> Result<()> {
    let b = bed().await?;
    let root = "1767599000.000001";
    for (i, ts) in [
        "1767600000.000100",
        "1767600020.000100",
        "1767600050.000100",
    ]
    .iter()
    .enumerate()
    {
        b.clock.set(Ts::parse(ts)?.to_datetime());
        assert_eq!(
            b.deliver(&event("message", ts, Some(root), &format!("part {i}")))
                .await,
            200
        );
    }
    let s = b
        .scheduler
        .get(&judgment_name(Some(root)))
        .await?
        .expect("scheduled");
    // EventBridge Scheduler takes whole seconds: the time is rounded up.
    assert_eq!(
        s.at,
        Ts::parse("1767600051.0")?.to_datetime() + Duration::seconds(300)
    );
    assert!(
        matches!(s.job, Job::Judgment(JudgmentJob { newest_ts, .. }) if newest_ts.to_string() == "1767600050.000100")
    );
    // another thread gets its own; two top-level messages share one
    b.deliver(&event(
        "message",
        "1767600060.000100",
        Some("1767599500.000001"),
        "other thread",
    ))
    .await;
    b.deliver(&event("message", "1767600070.000100", None, "top one"))
        .await;
    b.deliver(&event("message", "1767600080.000100", None, "top two"))
        .await;
    assert_eq!(
        b.schedules().await?,
        vec![
            judgment_name(Some(root)).to_string(),
            judgment_name(Some("1767599500.000001")).to_string(),
            judgment_name(None).to_string()
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    Ok(())
}

#[tokio::test]
async fn a_mention_is_queued_and_not_scheduled() -> Result<()> {
    let b = bed().await?;
    assert_eq!(
        b.deliver(&event(
            "app_mention",
            "1767600000.000100",
            None,
            "<@UBOT> hi"
        ))
        .await,
        200
    );
    assert!(b.schedules().await?.is_empty());
    let queued = b.queued().await?;
    assert_eq!(queued.len(), 1);
    assert!(matches!(
        queued[0],
        Job::Response(ResponseJob {
            mention: true,
            thread_ts: None,
            ..
        })
    ));
    Ok(())
}

#[tokio::test]
async fn forged_stale_and_unsigned_requests_get_401_and_write_nothing() -> Result<()> {
    let b = bed().await?;
    let body = serde_json::to_vec(&event("message", "1767600000.000100", None, "hello"))?;
    let (ts, good) = signed_request_headers(SECRET, &body, b.clock.now());
    let (_, wrong_secret) = signed_request_headers("not-the-secret", &body, b.clock.now());
    let (stale_ts, stale) =
        signed_request_headers(SECRET, &body, b.clock.now() - Duration::seconds(301));
    let cases: Vec<Vec<(&str, &str)>> = vec![
        vec![
            ("x-slack-request-timestamp", &ts),
            ("x-slack-signature", &wrong_secret),
        ],
        vec![
            ("x-slack-request-timestamp", &stale_ts),
            ("x-slack-signature", &stale),
        ],
        vec![("x-slack-signature", &good)],
        vec![("x-slack-request-timestamp", &ts)],
        vec![],
    ];
    for headers in cases {
        let (status, text) = b.deliver_raw(&body, &headers).await;
        assert_eq!((status, text.as_str()), (401, ""), "{headers:?}");
    }
    let mut tampered = body.clone();
    tampered.extend_from_slice(b" ");
    assert_eq!(
        b.deliver_raw(
            &tampered,
            &[
                ("x-slack-request-timestamp", &ts),
                ("x-slack-signature", &good)
            ]
        )
        .await
        .0,
        401
    );
    assert_eq!(b.items().await?, 0);
    assert!(b.schedules().await?.is_empty());
    assert!(b.queued().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn url_verification_and_malformed_bodies() -> Result<()> {
    let b = bed().await?;
    let challenge = serde_json::to_vec(
        &json!({"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "token": "x"}),
    )?;
    let (ts, sig) = signed_request_headers(SECRET, &challenge, b.clock.now());
    let (status, text) = b
        .deliver_raw(
            &challenge,
            &[
                ("x-slack-request-timestamp", &ts),
                ("x-slack-signature", &sig),
            ],
        )
        .await;
    assert_eq!(
        (status, text.as_str()),
        (200, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
    );
    let junk = b"{\"type\": \"event_callback\", \"event\": 7}".to_vec();
    let (ts, sig) = signed_request_headers(SECRET, &junk, b.clock.now());
    assert_eq!(
        b.deliver_raw(
            &junk,
            &[
                ("x-slack-request-timestamp", &ts),
                ("x-slack-signature", &sig)
            ]
        )
        .await
        .0,
        400
    );
    assert_eq!(b.items().await?, 0);
    Ok(())
}

#[tokio::test]
async fn edits_and_deletions_change_the_stored_message() -> Result<()> {
    let b = bed().await?;
    b.deliver(&event("message", "1767600000.000100", None, "teh build"))
        .await;
    let edit = json!({"type": "event_callback", "event_id": "Ev-edit", "event": {
        "type": "message", "subtype": "message_changed", "hidden": true, "channel": "C1", "ts": "1767600010.000000",
        "message": {"type": "message", "user": "UALICE", "text": "the build", "ts": "1767600000.000100", "edited": {"user": "UALICE", "ts": "1767600010.000000"}}}});
    assert_eq!(b.deliver(&edit).await, 200);
    let c = ChannelId::parse("C1")?;
    let t = Ts::parse("1767600000.000100")?;
    assert_eq!(
        b.store.get_message(&c, t).await?.expect("kept").text,
        "the build"
    );
    let delete = json!({"type": "event_callback", "event_id": "Ev-del", "event": {
        "type": "message", "subtype": "message_deleted", "hidden": true, "channel": "C1", "ts": "1767600020.000000", "deleted_ts": "1767600000.000100"}});
    assert_eq!(b.deliver(&delete).await, 200);
    assert_eq!(b.store.get_message(&c, t).await?, None);
    assert!(b.store.recent_messages(&c, 10).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_changed_setting_takes_effect_after_the_cache_expires() -> Result<()> {
    let b = bed().await?;
    b.deliver(&event("message", "1767600000.000100", None, "one"))
        .await;
    put(&b.settings_path, "min_wait_seconds", "120", false).await?;
    b.clock.advance(Duration::seconds(61));
    b.deliver(&event("message", "1767600061.000100", None, "two"))
        .await;
    let s = b
        .scheduler
        .get(&judgment_name(None))
        .await?
        .expect("scheduled");
    assert_eq!(s.at, b.clock.now() + Duration::seconds(120));
    Ok(())
}

/// The services of the judgment, response and memory functions on the
/// emulator, with the LLM and Slack behind local stub servers.
async fn services(
    b: &Bed,
    llm: &wiremock::MockServer,
    slack: &wiremock::MockServer,
) -> Result<Services> {
    put(
        &b.settings_path,
        "secrets/slack_bot_token",
        "test-bot-token",
        true,
    )
    .await?;
    services_of_installs(b, llm, slack).await
}

/// [`services`] of a stack with no bot token of its own: its parameter is
/// never created, as docs/deploy.md says for a stack that serves installed
/// workspaces alone.
async fn services_of_installs(
    b: &Bed,
    llm: &wiremock::MockServer,
    slack: &wiremock::MockServer,
) -> Result<Services> {
    put(
        &b.settings_path,
        "llm_base_url",
        &format!("{}/v1", llm.uri()),
        false,
    )
    .await?;
    put(
        &b.settings_path,
        "slack_api_base_url",
        &format!("{}/api", slack.uri()),
        false,
    )
    .await?;
    // The LLM judges every conversation (the rule stage's own tests are
    // elsewhere).
    put(
        &b.settings_path,
        "rule_thresholds",
        "-1000000,1000000",
        false,
    )
    .await?;
    put(
        &b.settings_path,
        "secrets/llm_api_key",
        "fake-llm-key",
        true,
    )
    .await?;
    // The ingest function's AWS ports, with settings of their own.
    let ssm = ssm_client().await;
    let ports = Ports {
        random: Arc::new(FixedRandom(0.5)),
        settings: ssm_settings(ssm.clone(), b.settings_path.clone(), b.clock.clone()),
        ..b.ingest.ports.clone()
    };
    Ok(http_services(
        ports,
        Arc::new(SsmSecrets::new(ssm)),
        format!("{}secrets/llm_api_key", b.settings_path),
        format!("{}secrets/slack_bot_token", b.settings_path),
    ))
}

/// Runs the jobs on the queue at `url` as SQS would deliver them to the
/// function of `kinds`, with no item failed; how many there were.
async fn run_queued(
    b: &Bed,
    svc: &Services,
    kinds: &[myao_domain::JobKind],
    url: &str,
) -> Result<usize> {
    use lambda_runtime::{Context, LambdaEvent};
    let batch = receive_as_sqs_event(&b.queues.client, url).await?;
    let jobs = batch["Records"].as_array().map_or(0, Vec::len);
    let out = myao_jobs::handle(svc, kinds, LambdaEvent::new(batch, Context::default()))
        .await
        .expect("the function ran");
    assert_eq!(
        serde_json::to_value(&out)?,
        json!({"batchItemFailures": []})
    );
    Ok(jobs)
}

/// Runs the one reply job on the response queue as SQS would.
async fn run_the_queued_reply(b: &Bed, svc: &Services) -> Result<()> {
    let url = &b.queues.response_queue_url;
    assert_eq!(run_queued(b, svc, myao_jobs::RESPONSE, url).await?, 1);
    Ok(())
}

async fn receive_as_sqs_event(client: &aws_sdk_sqs::Client, url: &str) -> Result<Value> {
    let out = client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .send()
        .await?;
    let records: Vec<Value> = out
        .messages()
        .iter()
        .map(|m| json!({"messageId": m.message_id().unwrap_or_default(), "body": m.body().unwrap_or_default(), "eventSource": "aws:sqs"}))
        .collect();
    Ok(json!({ "Records": records }))
}

#[tokio::test]
async fn a_fired_schedule_runs_the_judgment_and_its_reply_goes_through_sqs() -> Result<()> {
    use lambda_runtime::{Context, LambdaEvent};
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let b = bed().await?;
    let llm = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("応答すべきかを判断してください"))
        .respond_with(completion(r#"{"should_respond": true, "reason": "a question nobody answered", "confidence": 0.8, "delay_seconds": 0}"#))
        .expect(1)
        .mount(&llm)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("現在の会話に返答してください"))
        .respond_with(completion("Try clearing the cache first."))
        .expect(1)
        .mount(&llm)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("## 課題: チャンネルの記憶の更新"))
        .respond_with(completion(
            &json!({
                "channel": "- 2026-01-05 a red build in #general",
                "threads": {"1767599000.000001": "- 2026-01-05 alice asked why the build is red"},
                "facts": [],
            })
            .to_string(),
        ))
        .expect(1)
        .mount(&llm)
        .await;
    let slack = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"ok": true, "user_id": "UBOT"})),
        )
        .mount(&slack)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/users.info"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true, "user": {"id": "UALICE", "name": "alice", "profile": {"display_name": "alice"}}})))
        .mount(&slack)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/conversations.info"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "channel": {"id": "C1", "name": "general"}})),
        )
        .mount(&slack)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .and(body_string_contains("\"thread_ts\":\"1767599000.000001\""))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "channel": "C1", "ts": "1767600400.000100"})),
        )
        .expect(1)
        .mount(&slack)
        .await;
    let svc = services(&b, &llm, &slack).await?;

    // A question in a thread: ingest schedules its judgment.
    let root = "1767599000.000001";
    assert_eq!(
        b.deliver(&event(
            "message",
            "1767600000.000100",
            Some(root),
            "why is the build red?"
        ))
        .await,
        200
    );

    // Fire the schedule: read it back and call the judgment function with its input.
    let name = judgment_name(Some(root));
    let schedule = b
        .scheduler
        .client
        .get_schedule()
        .group_name(&b.scheduler.group)
        .name(name.as_str())
        .send()
        .await?;
    let input: Value =
        serde_json::from_str(schedule.target().and_then(|t| t.input()).expect("input"))?;
    b.clock.advance(Duration::seconds(300));
    let out = myao_jobs::handle(
        &svc,
        myao_jobs::JUDGMENT,
        LambdaEvent::new(input, Context::default()),
    )
    .await
    .expect("judgment ran");
    assert_eq!(serde_json::to_value(&out)?, json!({}));

    // delay_seconds 0: the reply job is on the response queue; run it as SQS would.
    run_the_queued_reply(&b, &svc).await?;
    let reply = b
        .store
        .get_message(&ChannelId::parse("C1")?, Ts::parse("1767600400.000100")?)
        .await?
        .expect("the bot's reply is stored");
    assert!(reply.is_bot);
    assert_eq!(reply.text, "Try clearing the cache first.");

    // The channel's memory job, as the hourly sweep queues it, writes the
    // thread's memory with the channel's.
    svc.ports
        .queue
        .send(
            &myao_domain::Job::ChannelMemory(ChannelMemoryJob {
                channel: ChannelId::parse("C1")?,
            }),
            0,
        )
        .await?;
    let memory_url = b.queues.memory_queue_url.clone().expect("memory queue");
    run_queued(&b, &svc, myao_jobs::MEMORY, &memory_url).await?;
    let memory = b
        .store
        .get_memory(
            &myao_domain::MemoryScope::Thread {
                channel: ChannelId::parse("C1")?,
                thread_ts: Ts::parse(root)?,
            },
            myao_domain::MemoryKind::Short,
        )
        .await?
        .expect("thread memory");
    assert_eq!(
        memory.content,
        "- 2026-01-05 alice asked why the build is red"
    );
    // The LLM stub's `expect`s are checked when it drops: one call of each kind.
    Ok(())
}

/// An SSM client whose endpoint nothing listens on: Parameter Store is
/// unreachable. One attempt per call, so that the test is quick.
async fn unreachable_ssm() -> aws_sdk_ssm::Client {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let config = aws_sdk_ssm::config::Builder::from(&myao_tests::aws_config().await)
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .retry_config(aws_sdk_ssm::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_ssm::Client::from_conf(config)
}

/// Every item of the bed's table, of any kind.
async fn all_items(b: &Bed) -> Result<usize> {
    let out = b
        .store_client()
        .scan()
        .table_name(b.store.table())
        .send()
        .await?;
    Ok(out.items().len())
}

/// Settings fail closed (issue 13, item 1): on a cold start whose settings
/// cannot be read, ingest answers 500 (Slack retries) and stores nothing,
/// and the job functions fail (Lambda or SQS retries) instead of running on
/// the defaults. Only the settings are unreachable: the signing secret is
/// read, so it is the settings that fail the request.
#[tokio::test]
async fn a_cold_start_without_settings_fails_the_invocation_and_stores_nothing() -> Result<()> {
    use lambda_runtime::{Context, LambdaEvent};

    let warm = bed().await?;
    let ports = Ports {
        settings: ssm_settings(
            unreachable_ssm().await,
            warm.settings_path.clone(),
            warm.clock.clone(),
        ),
        ..warm.ingest.ports.clone()
    };
    let secrets = Arc::new(SsmSecrets::new(ssm_client().await));
    let ingest = Ingest::new(
        ports.clone(),
        secrets.clone(),
        format!("{}secrets/slack_signing_secret", warm.settings_path),
    );
    let b = Bed { ingest, ..warm };

    // A message and a mention: both refused for now, nothing written.
    let message = event("message", "1767600000.000100", None, "hello");
    let mention = event("app_mention", "1767600001.000100", None, "<@UBOT> hi");
    assert_eq!(b.deliver(&message).await, 500);
    assert_eq!(b.deliver(&mention).await, 500);
    assert_eq!(all_items(&b).await?, 0);
    assert!(b.schedules().await?.is_empty());
    assert!(b.queued().await?.is_empty());

    // The job functions on the same cold settings.
    let ports = Ports {
        random: Arc::new(FixedRandom(0.5)),
        ..ports
    };
    let svc = http_services(ports, secrets, "llm_api_key", "slack_bot_token");
    // A scheduled judgment (on defaults it would find an empty conversation
    // and succeed): the invocation fails, and Lambda retries it.
    let judgment = serde_json::to_value(Job::Judgment(JudgmentJob {
        channel: ChannelId::parse("C1")?,
        thread_ts: None,
        newest_ts: Ts::parse("1767600000.000100")?,
    }))?;
    let out = myao_jobs::handle(
        &svc,
        myao_jobs::JUDGMENT,
        LambdaEvent::new(judgment, Context::default()),
    )
    .await;
    assert!(out.is_err(), "the invocation must fail: {out:?}");
    // A queued forget job (on defaults, nothing to forget: success): reported
    // as failed, so SQS delivers it again.
    let forget = json!({"Records": [{"messageId": "m-1", "body": r#"{"kind":"forget"}"#}]});
    let out = myao_jobs::handle(
        &svc,
        myao_jobs::MEMORY,
        LambdaEvent::new(forget, Context::default()),
    )
    .await
    .expect("a batch answer");
    assert_eq!(
        serde_json::to_value(&out)?,
        json!({"batchItemFailures": [{"itemIdentifier": "m-1"}]})
    );
    assert_eq!(all_items(&b).await?, 0);
    Ok(())
}

/// Records the name of every AWS operation its clients start (an SDK
/// interceptor: the requests still go to the emulator).
#[derive(Debug, Clone, Default)]
struct Operations(Arc<std::sync::Mutex<Vec<String>>>);

impl Operations {
    /// The operations since the last call, in order.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().expect("lock"))
    }
}

impl aws_sdk_dynamodb::config::Intercept for Operations {
    fn name(&self) -> &'static str {
        "operations"
    }

    // (Not `read_before_execution`: a client's interceptors see that
    // before the operation's name is in the bag.)
    fn read_before_serialization(
        &self,
        _: &aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef<'_>,
        _: &aws_sdk_dynamodb::config::RuntimeComponents,
        cfg: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> std::result::Result<(), aws_sdk_dynamodb::error::BoxError> {
        if let Some(op) = cfg.load::<aws_smithy_runtime_api::client::orchestrator::Metadata>() {
            self.0.lock().expect("lock").push(op.name().to_owned());
        }
        Ok(())
    }
}

/// Ingest on `b`'s table, schedule group and queues, through clients that
/// record their operations in `ops`.
async fn recorded(b: &mut Bed, ops: &Operations) {
    let config = myao_tests::aws_config().await;
    let dynamodb = aws_sdk_dynamodb::config::Builder::from(&config)
        .interceptor(ops.clone())
        .build();
    let scheduler = aws_sdk_scheduler::config::Builder::from(&config)
        .interceptor(ops.clone())
        .build();
    let sqs = aws_sdk_sqs::config::Builder::from(&config)
        .interceptor(ops.clone())
        .build();
    let ports = &mut b.ingest.ports;
    ports.store = Arc::new(DynamoStore::new(
        aws_sdk_dynamodb::Client::from_conf(dynamodb),
        b.store.table(),
        b.clock.clone(),
    ));
    ports.scheduler = Arc::new(EventBridgeScheduler {
        client: aws_sdk_scheduler::Client::from_conf(scheduler),
        ..(*b.scheduler).clone()
    });
    ports.queue = Arc::new(SqsQueue {
        client: aws_sdk_sqs::Client::from_conf(sqs),
        ..(*b.queues).clone()
    });
}

/// The AWS calls each kind of message costs ingest (docs/performance.md, "Costs and
/// limits", and `cargo bench -p myao-core --bench ingest`), as the emulator
/// receives them. Settings, the signing secret and the stack's own team are
/// cached by then.
#[tokio::test]
async fn the_aws_calls_of_each_kind_of_message() -> Result<()> {
    let mut b = bed().await?;
    let ops = Operations::default();
    recorded(&mut b, &ops).await;
    // Warm the settings and secret caches.
    b.deliver(&event("message", "1767590000.000001", None, "warming up"))
        .await;
    b.clock.advance(Duration::seconds(1));
    ops.take();

    let root = Some("1767599000.000001");
    let reply_to_bob = event(
        "message",
        "1767600000.000300",
        root,
        "<@UBOB> did you push?",
    );
    let mention = |kind| event(kind, "1767600000.000400", None, "<@UBOT> can you look?");
    let deliveries = [
        (
            "a thread reply, the conversation's first",
            event(
                "message",
                "1767600000.000100",
                root,
                "why is the build red?",
            ),
        ),
        (
            "a thread reply inside its open window",
            event("message", "1767600000.000200", root, "it was green at noon"),
        ),
        (
            "a thread reply that mentions a person",
            reply_to_bob.clone(),
        ),
        ("the same delivery again", reply_to_bob),
        ("a mention", mention("message")),
        ("its app_mention event", mention("app_mention")),
        (
            "a top-level message",
            event("message", "1767600000.000500", None, "lunch is at noon"),
        ),
        (
            "a top-level question",
            event(
                "message",
                "1767600000.000600",
                None,
                "does anyone know why the deploy hangs?",
            ),
        ),
    ];
    let mut costs = Vec::new();
    for (what, e) in deliveries {
        assert_eq!(b.deliver(&e).await, 200, "{what}");
        costs.push((what, ops.take()));
    }
    // Each begins with one read: whose the event is (its team's
    // installation, if the team installed the app). The stack's own team
    // was read with the warm-up: once per process, or a minute while the
    // stack has not learned it yet.
    let ops_of = |names: &[&str]| {
        std::iter::once("GetItem")
            .chain(names.iter().copied())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        costs,
        vec![
            (
                "a thread reply, the conversation's first",
                // message, thread read (did the bot speak lately; the root is
                // older than the engagement window: not read), window claim,
                // schedule (created), routing record
                ops_of(&[
                    "PutItem",
                    "Query",
                    "PutItem",
                    "UpdateSchedule",
                    "CreateSchedule",
                    "UpdateItem"
                ])
            ),
            (
                "a thread reply inside its open window",
                // the refused window claim brings the window's end back
                ops_of(&[
                    "PutItem",
                    "Query",
                    "PutItem",
                    "UpdateSchedule",
                    "UpdateItem"
                ])
            ),
            (
                "a thread reply that mentions a person",
                ops_of(&["PutItem", "PutItem", "UpdateSchedule", "UpdateItem"])
            ),
            ("the same delivery again", ops_of(&["PutItem"])),
            (
                "a mention",
                ops_of(&["PutItem", "SendMessage", "UpdateItem"])
            ),
            ("its app_mention event", ops_of(&["PutItem"])),
            (
                "a top-level message",
                // no thread to read; the top level's schedule (the warm-up's)
                // moved
                ops_of(&["PutItem", "PutItem", "UpdateSchedule", "UpdateItem"])
            ),
            (
                "a top-level question",
                // one more: the count of the channel's question waits
                // (`QUESTION_WAITS_PER_HOUR`), then its own schedule
                ops_of(&[
                    "PutItem",
                    "UpdateItem",
                    "PutItem",
                    "UpdateSchedule",
                    "CreateSchedule",
                    "UpdateItem"
                ])
            ),
        ]
    );
    Ok(())
}

/// A writer into a shared buffer: what was logged, read back.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_wrongly_typed_field_is_refused_and_logs_no_value() -> Result<()> {
    let b = bed().await?;
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    let mut body = event("message", "1767600000.000100", None, "hello");
    body["authorizations"] = json!([{"user_id": "UBOT", "is_bot": "the launch is on friday"}]);
    assert_eq!(b.deliver(&body).await, 400);
    let mut bad_id = event("message", "1767600000.000200", None, "hello");
    bad_id["event"]["user"] = json!("the launch is on friday");
    assert_eq!(b.deliver(&bad_id).await, 400);
    drop(guard);
    let logged =
        String::from_utf8_lossy(&logs.0.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    assert!(logged.contains("a field of the wrong type"), "{logged}");
    assert!(logged.contains("the payload has a bad user"), "{logged}");
    assert!(!logged.contains("launch"), "{logged}");
    assert_eq!(b.items().await?, 0, "nothing written");
    Ok(())
}

/// Issue 56: a stack with no bot token of its own (a client id and secret
/// only) runs on the Lambda functions' wiring: an installed workspace's
/// mention goes through ingest and is answered by the response function
/// with that workspace's token, stored in that workspace's part; the
/// stack's own token is never asked of Slack.
#[tokio::test]
async fn a_stack_with_no_token_of_its_own_answers_an_installed_workspace() -> Result<()> {
    use myao_core::ports::Installations;
    use myao_domain::install::{Installation, Token};
    use myao_domain::{TeamId, UserId};
    use wiremock::matchers::{body_string_contains, header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let b = bed().await?;
    let team = TeamId::parse("T2INSTALLED")?;
    b.store
        .put_installation(&Installation {
            team: team.clone(),
            enterprise: None,
            team_name: "installed".into(),
            bot_user_id: UserId::parse("UBOT")?,
            scopes: vec!["chat:write".into(), "app_mentions:read".into()],
            bot_token: Token::new("xoxb-installed"),
            rotation: None,
            installed_at: b.clock.now() - Duration::days(1),
        })
        .await?;
    let llm = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("現在の会話に返答してください"))
        .respond_with(completion("Hi! What do you need?"))
        .expect(1)
        .mount(&llm)
        .await;
    let slack = MockServer::start().await;
    // Every call carries the installation's token; one without it (the
    // stack's own, which does not exist) would find no stub and fail.
    let installed = || header("authorization", "Bearer xoxb-installed");
    Mock::given(method("GET"))
        .and(path("/api/users.info"))
        .and(installed())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true, "user": {"id": "UALICE", "name": "alice", "profile": {"display_name": "alice"}}})))
        .mount(&slack)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/conversations.info"))
        .and(installed())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "channel": {"id": "C1", "name": "general"}})),
        )
        .mount(&slack)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .and(installed())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "channel": "C1", "ts": "1767600001.000100"})),
        )
        .expect(1)
        .mount(&slack)
        .await;
    let svc = services_of_installs(&b, &llm, &slack).await?;

    let mention = json!({"type": "event_callback", "team_id": "T2INSTALLED", "event_id": "Ev-installed-1",
        "event": {"type": "app_mention", "channel": "C1", "user": "UALICE", "text": "<@UBOT> can you explain what a monad is?",
                  "ts": "1767600000.000100", "channel_type": "channel"},
        "authorizations": [{"team_id": "T2INSTALLED", "user_id": "UBOT", "is_bot": true}]});
    assert_eq!(b.deliver(&mention).await, 200);

    run_the_queued_reply(&b, &svc).await?;
    let asked: Vec<String> = slack
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| format!("{} {:?}", r.url.path(), r.headers.get("authorization")))
        .collect();
    let llm_asked = llm.received_requests().await.unwrap_or_default().len();
    let reply = b
        .store
        .for_team(&team)
        .get_message(&ChannelId::parse("C1")?, Ts::parse("1767600001.000100")?)
        .await?
        .unwrap_or_else(|| {
            panic!("no reply stored; Slack was asked {asked:?}, the LLM {llm_asked} times")
        });
    assert_eq!(reply.text, "Hi! What do you need?");
    Ok(())
}
