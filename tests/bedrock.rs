//! Amazon Bedrock as the LLM (issue 19): judgment and response jobs run with
//! the services wired as the Lambda functions wire them
//! (`myao_wire::http_services_with`), the real Bedrock adapter's SDK client
//! talking to a local stub of the Converse API, the rest on the stub bed
//! (`myao_tests::stubs`). The memory role stays on the OpenAI-compatible
//! stub: the provider is chosen per role.
//!
//! - a yes, then the reply, both through Bedrock, posted once:
//!   `a_judgment_and_its_reply_go_through_bedrock`
//! - a verdict in a code fence is read: `a_fenced_verdict_from_bedrock_is_read`
//! - an answer Bedrock cannot give or the judgment cannot read is silence:
//!   `a_garbage_or_unreadable_answer_from_bedrock_posts_nothing`

use std::sync::Arc;
use std::time::Duration;

use myao_aws::http_client;
use myao_core::adapters::system::StaticSecrets;
use myao_domain::metrics;
use myao_domain::settings::LlmProvider;
use myao_domain::{Job, JudgmentJob, ResponseJob, Settings};
use myao_llm::bedrock::{BedrockLlm, JSON_TURN, TEXT_TURN};
use myao_llm::bedrock_embeddings::BedrockEmbedder;
use myao_services::jobs::JobOutcome;
use myao_services::judgment::JudgmentOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::http::requests;
use myao_testkit::ids::channel;
use myao_tests::stubs::{classify, ts, verdict, Bed, PromptKind, GENERAL};
use myao_wire::{http_services_with, Bedrock};
use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const JUDGE: &str = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const JUDGE_PATH: &str = "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse";
const WRITER: &str = "amazon.nova-lite-v1:0";
const WRITER_PATH: &str = "/model/amazon.nova-lite-v1%3A0/converse";
const REPLY: &str = "BEDROCK-REPLY: 『プログラミングRust』がおすすめだよ";

/// A Converse answer holding `text`.
fn converse(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1200, "outputTokens": 30, "totalTokens": 1230},
        "metrics": {"latencyMs": 400}
    }))
}

/// The system text of a Converse request.
fn system_of(request: &Request) -> String {
    let body: Value = request.body_json().unwrap_or(Value::Null);
    body.pointer("/system/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A bed whose judgment and response roles are on Bedrock (the memory role
/// on the OpenAI-compatible stub), and the Bedrock stub: it answers a
/// judgment with `judgment` and a reply prompt with [`REPLY`].
async fn on_bedrock(judgment: ResponseTemplate) -> (Bed, MockServer) {
    let mut bed = Bed::with_settings(|s: &mut Settings| {
        s.llm_provider = LlmProvider::Bedrock;
        s.memory_provider = Some(LlmProvider::OpenAi);
        s.judgment_model = JUDGE.to_owned();
        s.response_model = WRITER.to_owned();
        s.llm_max_retries = 1;
    })
    .await;
    let bedrock = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(move |request: &Request| {
            match classify(&system_of(request)) {
                Some(PromptKind::Judgment) => judgment.clone(),
                Some(PromptKind::Response) => converse(REPLY),
                // Any other prompt is a bug the test should see.
                _ => ResponseTemplate::new(400)
                    .insert_header("x-amzn-errortype", "ValidationException")
                    .set_body_json(json!({"message": "unexpected prompt"})),
            }
        })
        .mount(&bedrock)
        .await;

    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(aws_sdk_ssm::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_ssm::config::Credentials::new(
            "AKIDFAKEFORTESTS",
            "fake-secret-access-key-for-tests",
            None,
            None,
            "test",
        ))
        .endpoint_url(bedrock.uri())
        .http_client(http_client())
        .load()
        .await;
    let ports = bed.services.ports.clone();
    let llm = BedrockLlm::new(&config, ports.settings.clone())
        .with_backoff(Duration::from_millis(1))
        .with_metrics(ports.metrics.clone());
    let secrets = StaticSecrets::new()
        .with("llm_api_key", "fake-llm-key")
        .with("slack_bot_token", "xoxb-test");
    let embedder = BedrockEmbedder::new(&config, ports.settings.clone());
    bed.services = http_services_with(
        ports,
        Arc::new(secrets),
        "llm_api_key",
        "slack_bot_token",
        Some(Bedrock {
            llm: Arc::new(llm),
            embedder: Arc::new(embedder),
        }),
    );
    (bed, bedrock)
}

/// A question at the top level of #general, 5 minutes old, and its judgment.
async fn judge(bed: &Bed) -> JudgmentOutcome {
    bed.seed_top_level_question().await;
    let job = Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(-300),
    });
    match bed.run(&job).await {
        JobOutcome::Judgment(outcome) => outcome,
        other => panic!("not a judgment outcome: {other:?}"),
    }
}

#[tokio::test]
async fn a_judgment_and_its_reply_go_through_bedrock() {
    let (bed, bedrock) = on_bedrock(converse(&verdict(true, Some(0)))).await;

    let outcome = judge(&bed).await;
    assert!(
        matches!(outcome, JudgmentOutcome::Respond { .. }),
        "{outcome:?}"
    );
    let replies: Vec<ResponseOutcome> = bed
        .run_due()
        .await
        .into_iter()
        .filter_map(|(_, outcome)| match outcome {
            JobOutcome::Response(o) => Some(o),
            _ => None,
        })
        .collect();

    assert!(
        matches!(&replies[..], [ResponseOutcome::Posted { text, .. }] if text == REPLY),
        "{replies:?}"
    );
    assert_eq!(bed.posts().await.len(), 1);
    let sent = requests(&bedrock).await;
    let paths: Vec<&str> = sent.iter().map(|r| r.url.path()).collect();
    assert_eq!(paths, [JUDGE_PATH, WRITER_PATH], "each role's model");
    let judgment: Value = sent[0].body_json().expect("json");
    assert_eq!(judgment["messages"][0]["content"][0]["text"], JSON_TURN);
    assert_eq!(
        judgment["inferenceConfig"]["maxTokens"],
        json!(bed.settings.judgment_max_tokens)
    );
    let reply: Value = sent[1].body_json().expect("json");
    assert_eq!(reply["messages"][0]["content"][0]["text"], TEXT_TURN);
    assert!(
        system_of(&sent[1]).starts_with(&bed.settings.persona_system_prompt),
        "the prompt is the system text"
    );
    // Nothing of the judgment or the reply reached the OpenAI-compatible stub.
    assert!(bed.llm_calls_of(PromptKind::Judgment).await.is_empty());
    assert!(bed.llm_calls_of(PromptKind::Response).await.is_empty());
    // Counted like any LLM call, with Bedrock's token counts.
    let judgment_role = Some(("Role", "judgment"));
    assert_eq!(bed.metrics.total(metrics::LLM_CALLS, judgment_role), 1.0);
    assert_eq!(
        bed.metrics.total(metrics::LLM_TOKENS_IN, judgment_role),
        1200.0
    );
}

#[tokio::test]
async fn a_fenced_verdict_from_bedrock_is_read() {
    let fenced = format!("判定します。\n```json\n{}\n```", verdict(true, Some(0)));
    let (bed, _bedrock) = on_bedrock(converse(&fenced)).await;

    let outcome = judge(&bed).await;

    assert!(
        matches!(outcome, JudgmentOutcome::Respond { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_garbage_or_unreadable_answer_from_bedrock_posts_nothing() {
    for answer in [
        ResponseTemplate::new(200).set_body_string("<html>oops</html>"),
        ResponseTemplate::new(200).set_body_json(json!({"stopReason": "content_filtered"})),
        converse("はい、返答すべきだと思います"),
    ] {
        let (bed, bedrock) = on_bedrock(answer).await;

        let outcome = judge(&bed).await;
        let later = bed.run_due().await;

        assert!(
            matches!(outcome, JudgmentOutcome::Silent { .. }),
            "{outcome:?}"
        );
        assert!(
            later
                .iter()
                .all(|(job, _)| !matches!(job, Job::Response(ResponseJob { .. }))),
            "{later:?}"
        );
        assert!(bed.posts().await.is_empty());
        assert_eq!(requests(&bedrock).await.len(), 1, "no retry of an answer");
    }
}
