//! `myao doctor` and `myao redrive`, run as the binary against a stack made
//! on the AWS emulator (moto at `MYAO_TEST_AWS_ENDPOINT`, reached through
//! `AWS_ENDPOINT_URL` as a user's stack is through their credentials), the
//! Slack Web API and the LLM as wiremock stubs behind the settings'
//! `slack_api_base_url` and `llm_base_url`, and `myao serve`'s ingest (the
//! real signature check) standing in for the Function URL.
//!
//! - `doctor_passes_a_healthy_stack`: every line ok, exit 0, and what the
//!   stubs were sent.
//! - `doctor_*`: one broken part each (a missing secret, a revoked token, a
//!   missing scope, an LLM refusing its key, a missing table, a failed job
//!   kept, a wrong signing secret, a missing or bad setting) fails its own
//!   line only, with its fix, and exits 1.
//! - `doctor_asks_bedrock_models_through_the_router_and_needs_no_key`: the
//!   roles on Amazon Bedrock (a Converse stub behind
//!   `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`), a model without access named.
//! - `settings_*`: `myao settings` reads, writes and resets the stack's
//!   parameters, refusing what the functions' parser refuses.
//! - `redrive_*`: failed jobs go back to their queue, and stay where a send
//!   failed; a dry run moves nothing.
//! - `the_template_declares_*`: the names doctor reads are the template's.
//!
//! Doctor's and redrive's reports are snapshotted whole (insta, in
//! `snapshots/`), with what differs from run to run named instead: the bed's
//! unique names, the queues' URLs and message ids, the local servers' ports.

use myao_testkit::http::{completion, llm_stub};

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use aws_sdk_ssm::types::ParameterType;
use myao_aws::scheduler::ensure_group;
use myao_aws::sqs::create_queue;
use myao_domain::Settings;
use myao_local::config;
use myao_local::doctor::required_scopes;
use myao_local::serve::{self, EVENTS_PATH};
use myao_local::stack::{QueueId, Secret, FUNCTION_URL, SCHEDULE_GROUP, SETTINGS_PATH, TABLE};
use myao_tests::{
    create_table, dynamodb_client, emulator_endpoint, scheduler_client, sqs_client, ssm_client,
    unique, REGION,
};
use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SIGNING_SECRET: &str = "0123456789abcdef0123456789abcdef";
const BOT_TOKEN: &str = "xoxb-fake-doctor-token";
const LLM_KEY: &str = "fake-llm-key-doctor";

/// Every check, in the order doctor prints them, on default settings.
const CHECKS: &[&str] = &[
    "settings",
    "secret slack_signing_secret",
    "secret slack_bot_token",
    "secret llm_api_key",
    "slack",
    "slack status",
    "function url",
    "llm gpt-4.1",
    "llm gpt-4.1-mini",
    "table",
    "hints",
    "installations",
    "schedule group",
    "queue ResponseQueue",
    "queue MemoryQueue",
    "queue ResponseDeadLetterQueue",
    "queue MemoryDeadLetterQueue",
    "queue ScheduleDeadLetterQueue",
    "queue AsyncFailureQueue",
];

// ---- the bed ------------------------------------------------------------------

/// A stack's queues on the emulator, and the description that names them.
struct Queues {
    sqs: aws_sdk_sqs::Client,
    urls: Vec<(QueueId, String)>,
    dir: tempfile::TempDir,
    outputs: Vec<(String, String)>,
}

impl Queues {
    async fn new() -> Queues {
        let sqs = sqs_client().await;
        let mut urls = Vec::new();
        for queue in QueueId::ALL {
            let url = create_queue(&sqs, &unique("doctor-q"))
                .await
                .expect("a queue");
            urls.push((queue, url));
        }
        let outputs = urls
            .iter()
            .map(|(q, url)| (q.output().to_owned(), url.clone()))
            .collect();
        Queues {
            sqs,
            urls,
            dir: tempfile::tempdir().expect("a temporary folder"),
            outputs,
        }
    }

    /// Each queue's URL and name, and the emulator's, with its placeholder.
    fn names(&self) -> Vec<(String, String)> {
        let mut names = vec![(emulator_endpoint(), "[emulator]".to_owned())];
        for (queue, url) in &self.urls {
            let id = queue.logical_id();
            names.push((url.clone(), format!("[{id} url]")));
            let name = url.rsplit('/').next().unwrap_or(url);
            names.push((name.to_owned(), format!("[{id} name]")));
        }
        names
    }

    fn url(&self, queue: QueueId) -> &str {
        let (_, url) = self
            .urls
            .iter()
            .find(|(q, _)| *q == queue)
            .expect("every queue is made");
        url
    }

    /// Sends `body`; returns the message id.
    async fn send(&self, queue: QueueId, body: &str) -> String {
        let out = self
            .sqs
            .send_message()
            .queue_url(self.url(queue))
            .message_body(body)
            .send()
            .await
            .expect("SendMessage");
        out.message_id.expect("a message id")
    }

    /// The bodies `queue` holds and shows now (each is hidden a while after).
    async fn bodies(&self, queue: QueueId) -> Vec<String> {
        let out = self
            .sqs
            .receive_message()
            .queue_url(self.url(queue))
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .expect("ReceiveMessage");
        let mut bodies: Vec<String> = out
            .messages
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| m.body)
            .collect();
        bodies.sort();
        bodies
    }

    /// Writes the stack's description (as `describe-stacks` prints it)
    /// with `outputs` besides the queues'; returns its path.
    fn describe(&self, outputs: &[(&str, &str)]) -> PathBuf {
        let all: Vec<Value> = self
            .outputs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(outputs.iter().copied())
            .map(|(k, v)| json!({"OutputKey": k, "OutputValue": v, "Description": "d"}))
            .collect();
        let description = json!({"Stacks": [{
            "StackName": "myao-doctor-test",
            "Parameters": [{"ParameterKey": "Stage", "ParameterValue": "test"}],
            "Outputs": all,
        }]});
        let file = self.dir.path().join("stack.json");
        std::fs::write(&file, description.to_string()).expect("the description written");
        file
    }
}

/// A healthy stack: settings and secrets in SSM, a table, a schedule group,
/// empty queues, a Slack stub whose token has the manifest's scopes, an
/// LLM stub that answers, and an ingest that checks signatures.
struct Bed {
    queues: Queues,
    ssm: aws_sdk_ssm::Client,
    path: String,
    table: String,
    group: String,
    slack: MockServer,
    llm: MockServer,
    function_url: String,
    _stop_ingest: tokio::sync::oneshot::Sender<()>,
}

fn auth_test_answer(scopes: &[String]) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("x-oauth-scopes", scopes.join(","))
        .set_body_json(json!({
            "ok": true, "url": "https://acme.slack.com/", "team": "Acme", "user": "myao",
            "team_id": "T0ACME", "user_id": "UMYAO", "bot_id": "B0MYAO"
        }))
}

async fn slack_stub() -> MockServer {
    let slack = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .and(header(
            "authorization",
            format!("Bearer {BOT_TOKEN}").as_str(),
        ))
        .respond_with(auth_test_answer(
            &required_scopes().expect("the manifest's scopes"),
        ))
        .mount(&slack)
        .await;
    // No channel has the doctor's id: refused for the thread, as on Slack.
    Mock::given(method("POST"))
        .and(path("/api/assistant.threads.setStatus"))
        .and(header(
            "authorization",
            format!("Bearer {BOT_TOKEN}").as_str(),
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": false, "error": "channel_not_found"})),
        )
        .mount(&slack)
        .await;
    slack
}

impl Bed {
    async fn new() -> Bed {
        let ssm = ssm_client().await;
        let path = format!("/{}/", unique("doctor"));
        let slack = slack_stub().await;
        let (llm, llm_base) = llm_stub(completion("ok")).await;
        for (name, default) in Settings::default_pairs() {
            let value = match name {
                "slack_api_base_url" => format!("{}/api", slack.uri()),
                "llm_base_url" => llm_base.clone(),
                _ => default,
            };
            put(
                &ssm,
                &format!("{path}{name}"),
                &value,
                ParameterType::String,
            )
            .await;
        }
        for (secret, value) in [
            (Secret::SigningSecret, SIGNING_SECRET),
            (Secret::BotToken, BOT_TOKEN),
            (Secret::LlmApiKey, LLM_KEY),
        ] {
            let name = format!("{path}secrets/{}", secret.leaf());
            put(&ssm, &name, value, ParameterType::SecureString).await;
        }
        let table = unique("doctor");
        create_table(&dynamodb_client().await, &table)
            .await
            .expect("a table");
        let group = unique("doctor");
        ensure_group(&scheduler_client().await, &group)
            .await
            .expect("a schedule group");
        let (function_url, stop) = ingest().await;
        Bed {
            queues: Queues::new().await,
            ssm,
            path,
            table,
            group,
            slack,
            llm,
            function_url,
            _stop_ingest: stop,
        }
    }

    fn describe(&self) -> PathBuf {
        self.queues.describe(&[
            (SETTINGS_PATH, &self.path),
            (TABLE, &self.table),
            (SCHEDULE_GROUP, &self.group),
            (FUNCTION_URL, &self.function_url),
        ])
    }

    fn secret_name(&self, secret: Secret) -> String {
        format!("{}secrets/{}", self.path, secret.leaf())
    }

    async fn doctor(&self) -> Run {
        myao(vec![
            "doctor".into(),
            "--stack".into(),
            self.describe().display().to_string(),
        ])
        .await
    }

    /// What `run` printed, with the bed's own names and addresses (the
    /// stubs' ports) named instead, for a snapshot; and the counts of
    /// settings and scopes that are all of them, so that a new setting or
    /// scope leaves the snapshots as they are.
    fn report(&self, run: &Run) -> String {
        let settings = Settings::default_pairs().len();
        let scopes = required_scopes().expect("the manifest's scopes").len();
        let mut names = vec![
            (format!("{settings} under"), "[all] under".to_owned()),
            (
                format!("the manifest's {scopes} scopes"),
                "the manifest's [all] scopes".to_owned(),
            ),
            (self.function_url.clone(), "[function url]".to_owned()),
            (self.slack.uri(), "[slack stub]".to_owned()),
            (self.llm.uri(), "[llm stub]".to_owned()),
            (self.path.clone(), "/[settings path]/".to_owned()),
            (self.table.clone(), "[table]".to_owned()),
            (self.group.clone(), "[schedule group]".to_owned()),
        ];
        names.extend(self.queues.names());
        redact(&run.stdout, &names)
    }
}

/// `text` with each of `names`' values replaced by its placeholder: a
/// snapshot's view of a run.
fn redact(text: &str, names: &[(String, String)]) -> String {
    let mut names = names.to_vec();
    // The longest first: a queue's URL holds the emulator's.
    names.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    names.iter().fold(text.to_owned(), |text, (value, name)| {
        text.replace(value, name)
    })
}

async fn put(ssm: &aws_sdk_ssm::Client, name: &str, value: &str, kind: ParameterType) {
    ssm.put_parameter()
        .name(name)
        .value(value)
        .r#type(kind)
        .overwrite(true)
        .send()
        .await
        .unwrap_or_else(|e| panic!("put {name}: {e:?}"));
}

/// `myao serve`'s ingest (signature checked as on Lambda), with its own
/// Slack stub for the `auth.test` it makes at start; returns its URL.
async fn ingest() -> (String, tokio::sync::oneshot::Sender<()>) {
    let slack = slack_stub().await;
    let env: Vec<(String, String)> = [
        ("MYAO_SLACK_API_BASE_URL", format!("{}/api", slack.uri())),
        ("MYAO_SLACK_BOT_TOKEN", BOT_TOKEN.to_owned()),
        ("MYAO_SLACK_SIGNING_SECRET", SIGNING_SECRET.to_owned()),
        ("MYAO_LLM_BASE_URL", "http://127.0.0.1:9/v1".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let config = config::load(None, &env, &[]).expect("a configuration");
    let any_port = "127.0.0.1:0".parse().expect("an address");
    let server = serve::bind(config, any_port).await.expect("serving");
    let addr = server.local_addr().expect("an address");
    let url = format!("http://{addr}{EVENTS_PATH}");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _slack = slack;
        server
            .run(async {
                let _ = stopped.await;
            })
            .await
    });
    (url, stop)
}

/// What one run of the binary printed, and its exit code.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The names of the checks on lines starting with `status`.
    fn named(&self, status: &str) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(status))
            .filter_map(|l| l.trim_start().split_once(": "))
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    fn failed(&self) -> Vec<String> {
        self.named("FAIL")
    }

    /// Checks that exactly `names` failed, with exit code 1, and that no
    /// secret was printed.
    fn assert_failed(&self, names: &[&str]) {
        assert_eq!(self.failed(), names, "{}", self.stdout);
        let mut all = self.named("ok");
        all.extend(self.failed());
        assert_eq!(
            all.len(),
            CHECKS.len(),
            "one line per check:\n{}",
            self.stdout
        );
        assert_eq!(self.code, Some(1), "{}\n{}", self.stdout, self.stderr);
        let summary = format!("{} of {} checks failed", names.len(), CHECKS.len());
        assert!(self.stderr.contains(&summary), "{}", self.stderr);
        self.assert_no_secret();
    }

    fn assert_no_secret(&self) {
        for secret in [SIGNING_SECRET, BOT_TOKEN, LLM_KEY] {
            assert!(!self.stdout.contains(secret), "{}", self.stdout);
            assert!(!self.stderr.contains(secret), "{}", self.stderr);
        }
    }
}

/// Runs the `myao` binary with the emulator as its AWS, and nothing of the
/// developer's own AWS or myao environment.
async fn myao(args: Vec<String>) -> Run {
    myao_with(args, Vec::new()).await
}

/// The same, with the environment variables `extra` besides.
async fn myao_with(args: Vec<String>, extra: Vec<(&'static str, String)>) -> Run {
    let endpoint = emulator_endpoint();
    tokio::task::spawn_blocking(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_myao"));
        command.args(&args);
        for (name, _) in std::env::vars() {
            if name.starts_with("MYAO_") || name.starts_with("AWS_") || name == "RUST_LOG" {
                command.env_remove(name);
            }
        }
        command.envs(extra);
        let out = command
            .env("AWS_ENDPOINT_URL", endpoint)
            .env("AWS_REGION", REGION)
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
            .output()
            .expect("the myao binary runs");
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    })
    .await
    .expect("the run finished")
}

// ---- doctor -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_passes_a_healthy_stack() {
    let bed = Bed::new().await;
    let run = bed.doctor().await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.named("ok"), CHECKS, "{}", run.stdout);
    run.assert_no_secret();
    insta::assert_snapshot!(bed.report(&run));

    // The token went to auth.test and to one status call on no thread;
    // each model got one one-token request.
    let calls: Vec<String> = bed
        .slack
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(
        calls,
        ["/api/auth.test", "/api/assistant.threads.setStatus"]
    );
    let mut models = BTreeSet::new();
    for request in bed.llm.received_requests().await.unwrap() {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            format!("Bearer {LLM_KEY}").as_str()
        );
        let body: Value = request.body_json().unwrap();
        assert_eq!(body["max_tokens"], 1, "{body}");
        models.insert(body["model"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        models,
        BTreeSet::from(["gpt-4.1".to_owned(), "gpt-4.1-mini".to_owned()])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_missing_secret_parameter() {
    let bed = Bed::new().await;
    let name = bed.secret_name(Secret::BotToken);
    bed.ssm.delete_parameter().name(name).send().await.unwrap();
    let run = bed.doctor().await;
    // The Slack checks cannot run without the token: they say so.
    run.assert_failed(&["secret slack_bot_token", "slack", "slack status"]);
    insta::assert_snapshot!(bed.report(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_revoked_token() {
    let bed = Bed::new().await;
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": "invalid_auth"})),
        )
        .with_priority(1)
        .mount(&bed.slack)
        .await;
    let run = bed.doctor().await;
    run.assert_failed(&["slack"]);
    insta::assert_snapshot!(bed.report(&run));
}

/// `auth.test` answers that the token has every scope of the manifest but `scope`.
async fn token_without(bed: &Bed, scope: &str) {
    let scopes: Vec<String> = required_scopes()
        .expect("the manifest's scopes")
        .into_iter()
        .filter(|s| s != scope)
        .collect();
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .respond_with(auth_test_answer(&scopes))
        .with_priority(1)
        .mount(&bed.slack)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_missing_scope() {
    let bed = Bed::new().await;
    token_without(&bed, "chat:write").await;
    let run = bed.doctor().await;
    run.assert_failed(&["slack"]);
    insta::assert_snapshot!(bed.report(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_asks_for_the_files_scope_only_with_vision_on() {
    let bed = Bed::new().await;
    token_without(&bed, "files:read").await;
    let off = bed.doctor().await;
    assert_eq!(off.code, Some(0), "vision off: {}", off.stdout);

    put(
        &bed.ssm,
        &format!("{}vision", bed.path),
        "true",
        ParameterType::String,
    )
    .await;
    let on = bed.doctor().await;
    on.assert_failed(&["slack"]);
    let both = format!(
        "vision off:\n{}\nvision on:\n{}",
        bed.report(&off),
        bed.report(&on)
    );
    insta::assert_snapshot!(both);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_whether_the_sign_of_life_works() {
    let bed = Bed::new().await;
    let refused_here = bed.doctor().await;
    assert_eq!(refused_here.code, Some(0), "{}", refused_here.stdout);

    // Without the scope: a failure, with the fix.
    let answer = |error: &str| {
        ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": error}))
    };
    Mock::given(method("POST"))
        .and(path("/api/assistant.threads.setStatus"))
        .respond_with(answer("missing_scope"))
        .with_priority(1)
        .mount(&bed.slack)
        .await;
    let no_scope = bed.doctor().await;
    no_scope.assert_failed(&["slack status"]);

    // A workspace without the method: replies still go out, and it says so.
    let other = Bed::new().await;
    Mock::given(method("POST"))
        .and(path("/api/assistant.threads.setStatus"))
        .respond_with(answer("unknown_method"))
        .with_priority(1)
        .mount(&other.slack)
        .await;
    let no_method = other.doctor().await;
    assert_eq!(no_method.code, Some(0), "{}", no_method.stdout);
    let all = format!(
        "channel_not_found:\n{}\nmissing_scope:\n{}\nunknown_method:\n{}",
        bed.report(&refused_here),
        bed.report(&no_scope),
        other.report(&no_method)
    );
    insta::assert_snapshot!(all);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_an_llm_that_refuses_its_key() {
    let bed = Bed::new().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": format!("Incorrect API key provided: {LLM_KEY}"), "code": "invalid_api_key"}
        })))
        .with_priority(1)
        .mount(&bed.llm)
        .await;
    let run = bed.doctor().await;
    run.assert_failed(&["llm gpt-4.1", "llm gpt-4.1-mini"]);
    insta::assert_snapshot!(bed.report(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_asks_bedrock_models_through_the_router_and_needs_no_key() {
    const JUDGE: &str = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
    const WRITER: &str = "amazon.nova-lite-v1:0";
    let bed = Bed::new().await;
    for (name, value) in [
        ("llm_provider", "bedrock"),
        ("judgment_model", JUDGE),
        ("response_model", WRITER),
        ("memory_model", WRITER),
    ] {
        put(
            &bed.ssm,
            &format!("{}{name}", bed.path),
            value,
            ParameterType::String,
        )
        .await;
    }
    let key = bed.secret_name(Secret::LlmApiKey);
    bed.ssm.delete_parameter().name(&key).send().await.unwrap();
    let bedrock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(
            "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "max_tokens",
            "usage": {"inputTokens": 12, "outputTokens": 1, "totalTokens": 13}
        })))
        .mount(&bedrock)
        .await;
    Mock::given(method("POST"))
        .and(path("/model/amazon.nova-lite-v1%3A0/converse"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-amzn-errortype", "AccessDeniedException")
                .set_body_json(json!({
                    "message": "You don't have access to the model with the specified model ID."
                })),
        )
        .mount(&bedrock)
        .await;

    let args = vec![
        "doctor".into(),
        "--stack".into(),
        bed.describe().display().to_string(),
    ];
    let run = myao_with(
        args,
        vec![("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.uri())],
    )
    .await;

    run.assert_failed(&[&format!("llm {WRITER}")]);
    insta::assert_snapshot!(bed.report(&run));
    // One one-token request per model; nothing to the OpenAI-compatible stub.
    let sent = bedrock.received_requests().await.unwrap();
    assert_eq!(sent.len(), 2);
    for request in &sent {
        let body: Value = request.body_json().unwrap();
        assert_eq!(body["inferenceConfig"]["maxTokens"], 1, "{body}");
    }
    assert!(bed.llm.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_missing_table() {
    let bed = Bed::new().await;
    let dynamodb = dynamodb_client().await;
    dynamodb
        .delete_table()
        .table_name(&bed.table)
        .send()
        .await
        .unwrap();
    let run = bed.doctor().await;
    run.assert_failed(&["table"]);
    insta::assert_snapshot!(bed.report(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_dead_letter_queue_that_holds_a_job() {
    let bed = Bed::new().await;
    let job = r#"{"kind":"thread_memory","channel":"C1","thread_ts":"1767600000.000100"}"#;
    bed.queues.send(QueueId::MemoryDeadLetter, job).await;
    let run = bed.doctor().await;
    run.assert_failed(&["queue MemoryDeadLetterQueue"]);
    insta::assert_snapshot!(bed.report(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_a_wrong_signing_secret() {
    let bed = Bed::new().await;
    put(
        &bed.ssm,
        &bed.secret_name(Secret::SigningSecret),
        "fedcba9876543210fedcba9876543210",
        ParameterType::SecureString,
    )
    .await;
    let run = bed.doctor().await;
    run.assert_failed(&["function url"]);
    insta::assert_snapshot!(bed.report(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_missing_and_bad_settings() {
    let bed = Bed::new().await;
    let cooldown = format!("{}cooldown_seconds", bed.path);
    bed.ssm
        .delete_parameter()
        .name(&cooldown)
        .send()
        .await
        .unwrap();
    put(
        &bed.ssm,
        &format!("{}chattiness", bed.path),
        "loud",
        ParameterType::String,
    )
    .await;
    let run = bed.doctor().await;
    run.assert_failed(&["settings"]);
    assert!(
        !run.stdout.contains("loud"),
        "values are not repeated: {}",
        run.stdout
    );
    insta::assert_snapshot!(bed.report(&run));
}

/// Issue 56: a bot named `max` answered "max batch size?" at once. Its
/// name is now read strictly, and doctor warns of it (a warning passes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_warns_of_a_name_that_is_a_common_word_and_says_what_aliases_do() {
    let bed = Bed::new().await;
    put(
        &bed.ssm,
        &format!("{}persona_name", bed.path),
        "max",
        ParameterType::String,
    )
    .await;
    let run = bed.doctor().await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.named("ok"), CHECKS, "{}", run.stdout);
    assert_eq!(run.named("warn"), ["names"], "{}", run.stdout);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("warn"))
        .unwrap_or_default();
    assert!(
        line.contains("max (persona_name) is also a common word")
            && line.contains("name_aliases maxbot"),
        "{line}"
    );
    let all = format!("all {} checks passed", CHECKS.len() + 1);
    assert!(run.stdout.contains(&all), "{}", run.stdout);

    // With an alias that is no common word, the hint names it.
    put(
        &bed.ssm,
        &format!("{}name_aliases", bed.path),
        "maxbot",
        ParameterType::String,
    )
    .await;
    let run = bed.doctor().await;
    assert!(
        run.stdout
            .contains("people can call it by maxbot (name_aliases)"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_without_a_stack_says_what_it_needs() {
    // Nothing at all: a usage error, not fifteen failed checks.
    let run = myao(vec!["doctor".into()]).await;
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    // Some names but not all: each check says what it lacks.
    let run = myao(vec!["doctor".into(), "--set".into(), "AlarmTopic=t".into()]).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    insta::assert_snapshot!(&run.stdout);
}

// ---- settings -----------------------------------------------------------------

/// The value of the parameter `name` and its type; `None` when there is none.
async fn parameter(ssm: &aws_sdk_ssm::Client, name: &str) -> Option<(String, ParameterType)> {
    match ssm.get_parameter().name(name).send().await {
        Ok(out) => {
            let p = out.parameter.expect("a parameter");
            Some((p.value.expect("a value"), p.r#type.expect("a type")))
        }
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_parameter_not_found()) =>
        {
            None
        }
        Err(e) => panic!("get {name}: {e:?}"),
    }
}

/// A stage of this run's own (a stage's name is at most 20 characters:
/// `letter` and this run's numbers), its settings path holding every
/// setting's default as the stack creates them.
async fn fresh_stage(ssm: &aws_sdk_ssm::Client, letter: char) -> (String, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let stage = format!("{letter}{:08x}{:08x}", std::process::id(), nanos);
    let path = format!("/myao/{stage}/");
    for (name, default) in Settings::default_pairs() {
        put(
            ssm,
            &format!("{path}{name}"),
            &default,
            ParameterType::String,
        )
        .await;
    }
    (stage, path)
}

/// `myao settings WORDS --stage STAGE`.
fn settings_of(stage: &str, words: &[&str]) -> impl std::future::Future<Output = Run> + 'static {
    let mut args: Vec<String> = std::iter::once("settings")
        .chain(words.iter().copied())
        .map(str::to_owned)
        .collect();
    args.extend(["--stage".to_owned(), stage.to_owned()]);
    myao(args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_set_refuses_a_bad_value_writes_a_good_one_and_unset_restores_the_default() {
    let ssm = ssm_client().await;
    let (stage, path) = fresh_stage(&ssm, 't').await;
    let settings = |words: &[&str]| settings_of(&stage, words);
    let chattiness = format!("{path}chattiness");

    // A value the functions would not read is refused with the parser's
    // message, and nothing is written.
    let run = settings(&["set", "chattiness", "loud"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("chattiness: not one of mentions_only, quiet, normal, chatty"),
        "{}",
        run.stderr
    );
    assert_eq!(parameter(&ssm, &chattiness).await.unwrap().0, "normal");

    // A good one is written as a String, and read back.
    let run = settings(&["set", "chattiness", "quiet"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        parameter(&ssm, &chattiness).await,
        Some(("quiet".to_owned(), ParameterType::String))
    );
    let run = settings(&["get", "chattiness"]).await;
    assert_eq!(run.stdout, "quiet\n", "{}", run.stderr);
    let run = settings(&["list"]).await;
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("chattiness "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(line.contains("quiet") && line.ends_with("SSM"), "{line}");
    let listed = run.stdout.lines().skip(1).count();
    assert_eq!(
        listed,
        myao_domain::settings::SETTING_NAMES.len(),
        "{}",
        run.stdout
    );

    // Back to the default.
    let run = settings(&["unset", "chattiness"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(parameter(&ssm, &chattiness).await.unwrap().0, "normal");

    // A setting the stack does not create: set creates it (SSM wants a
    // type for a new parameter), unset deletes it.
    let levels = format!("{path}channel_chattiness");
    assert_eq!(parameter(&ssm, &levels).await, None);
    let run = settings(&["set", "channel_chattiness", "C1=quiet"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        parameter(&ssm, &levels).await,
        Some(("C1=quiet".to_owned(), ParameterType::String))
    );
    let run = settings(&["unset", "channel_chattiness"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(parameter(&ssm, &levels).await, None);

    // A value that breaks a combination with the others is refused too.
    let run = settings(&["set", "min_wait_seconds", "40000"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("max_message_age_seconds"),
        "{}",
        run.stderr
    );
    assert_eq!(
        parameter(&ssm, &format!("{path}min_wait_seconds"))
            .await
            .unwrap()
            .0,
        "300"
    );
}

/// Issue 56: `settings set persona_name max` warns that the name is a
/// common word and says what `name_aliases` does; other values, no warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_set_warns_of_a_name_that_is_a_common_word() {
    let ssm = ssm_client().await;
    let (stage, path) = fresh_stage(&ssm, 'n').await;
    let settings = |words: &[&str]| settings_of(&stage, words);

    let run = settings(&["set", "persona_name", "tama"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);

    let run = settings(&["set", "persona_name", "max"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        parameter(&ssm, &format!("{path}persona_name"))
            .await
            .unwrap()
            .0,
        "max",
        "written all the same"
    );
    assert!(
        run.stderr
            .starts_with("warning: max (persona_name) is also a common word")
            && run.stderr.contains("myao settings set name_aliases maxbot"),
        "{}",
        run.stderr
    );
    // The same for a team's own name.
    let run = settings(&["set", "persona_name", "max", "--team", "T0ACME"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("common word"), "{}", run.stderr);

    // Once an alias that is no common word is set, the warning says people
    // can call it by that.
    let run = settings(&["set", "name_aliases", "maxbot"]).await;
    assert!(
        run.stderr
            .contains("people can call it by maxbot (name_aliases)"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_of_one_team_are_its_own_over_the_stacks_and_unset_gives_the_stacks_back() {
    let ssm = ssm_client().await;
    let (stage, path) = fresh_stage(&ssm, 'u').await;
    let settings = |words: &[&str]| settings_of(&stage, words);
    let own = format!("{path}teams/T0ACME/chattiness");

    let run = settings(&["set", "chattiness", "quiet", "--team", "T0ACME"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        parameter(&ssm, &own).await,
        Some(("quiet".to_owned(), ParameterType::String))
    );
    assert_eq!(
        parameter(&ssm, &format!("{path}chattiness"))
            .await
            .unwrap()
            .0,
        "normal",
        "the stack's is untouched"
    );
    let run = settings(&["get", "chattiness", "--team", "T0ACME"]).await;
    assert_eq!(run.stdout, "quiet\n", "{}", run.stderr);
    let run = settings(&["get", "chattiness", "--team", "T0BETA"]).await;
    assert_eq!(run.stdout, "normal\n", "another team has the stack's");
    let run = settings(&["list", "--team", "T0ACME"]).await;
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("chattiness "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        line.contains("quiet") && line.ends_with("SSM, team T0ACME"),
        "{line}"
    );
    // A bad value is refused for a team as for the stack.
    let run = settings(&["set", "chattiness", "loud", "--team", "T0ACME"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);

    let run = settings(&["unset", "chattiness", "--team", "T0ACME"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(parameter(&ssm, &own).await, None);
    let run = settings(&["get", "chattiness", "--team", "T0ACME"]).await;
    assert_eq!(run.stdout, "normal\n", "{}", run.stderr);
    // Not a team's id: refused before anything is read.
    let run = settings(&["get", "chattiness", "--team", "T0-ACME"]).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_reads_the_path_from_the_stack_and_names_what_is_not_a_setting() {
    let ssm = ssm_client().await;
    let queues = Queues::new().await;
    let path = format!("/{}/", unique("settings"));
    put(
        &ssm,
        &format!("{path}cooldown_secs"),
        "9",
        ParameterType::String,
    )
    .await;
    put(
        &ssm,
        &format!("{path}min_wait_seconds"),
        "-5",
        ParameterType::String,
    )
    .await;
    let stack = queues.describe(&[(SETTINGS_PATH, &path)]);
    let run = myao(vec![
        "settings".into(),
        "list".into(),
        "--stack".into(),
        stack.display().to_string(),
    ])
    .await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("cooldown_secs: no setting has this name"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains(" 9 "),
        "unknown values are not shown: {}",
        run.stdout
    );
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("min_wait_seconds "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        line.contains("300") && line.contains("invalid: out of range"),
        "{line}"
    );
    // Local settings need no stack; writing does.
    let run = myao(vec![
        "settings".into(),
        "set".into(),
        "proactive".into(),
        "true".into(),
    ])
    .await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
}

// ---- redrive ------------------------------------------------------------------

const RESPONSE_JOB: &str = r#"{"kind":"response","channel":"C1","thread_ts":null,"newest_ts":"1767600000.000100","mention":true}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_sends_failed_jobs_back_to_their_queues_and_leaves_the_rest() {
    let queues = Queues::new().await;
    let response = queues.send(QueueId::ResponseDeadLetter, RESPONSE_JOB).await;
    // Lambda's record of a scheduled job that failed after its retries.
    let record = json!({
        "version": "1.0",
        "requestContext": {"condition": "RetriesExhausted", "approximateInvokeCount": 3},
        "requestPayload": {"kind": "memory_sweep"},
        "responsePayload": {"errorType": "Retryable", "errorMessage": "llm unavailable"}
    });
    let sweep = queues
        .send(QueueId::AsyncFailure, &record.to_string())
        .await;
    let judgment =
        r#"{"kind":"judgment","channel":"C1","thread_ts":null,"newest_ts":"1767600000.000100"}"#;
    let judgment = queues.send(QueueId::ScheduleDeadLetter, judgment).await;
    let stray = queues
        .send(QueueId::MemoryDeadLetter, "PRIVATE words of a person")
        .await;
    let stack = queues.describe(&[]).display().to_string();

    let run = myao(vec!["redrive".into(), "--stack".into(), stack]).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("PRIVATE"), "{}", run.stdout);
    let mut names = queues.names();
    for (id, name) in [
        (response, "[response id]"),
        (sweep, "[sweep id]"),
        (judgment, "[judgment id]"),
        (stray, "[stray id]"),
    ] {
        names.push((id, name.to_owned()));
    }
    insta::assert_snapshot!(redact(&run.stdout, &names));

    assert_eq!(queues.bodies(QueueId::Response).await, [RESPONSE_JOB]);
    assert_eq!(
        queues.bodies(QueueId::Memory).await,
        [r#"{"kind":"memory_sweep"}"#]
    );
    assert!(queues.bodies(QueueId::ResponseDeadLetter).await.is_empty());
    assert!(queues.bodies(QueueId::AsyncFailure).await.is_empty());
    // What stays is in view again at once, for the console or a later run.
    assert_eq!(queues.bodies(QueueId::ScheduleDeadLetter).await.len(), 1);
    assert_eq!(
        queues.bodies(QueueId::MemoryDeadLetter).await,
        ["PRIVATE words of a person"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_dry_run_lists_and_moves_nothing() {
    let queues = Queues::new().await;
    let id = queues.send(QueueId::ResponseDeadLetter, RESPONSE_JOB).await;
    let stack = queues.describe(&[]).display().to_string();

    let run = myao(vec![
        "redrive".into(),
        "--stack".into(),
        stack,
        "--dry-run".into(),
    ])
    .await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let mut names = queues.names();
    names.push((id, "[response id]".to_owned()));
    insta::assert_snapshot!(redact(&run.stdout, &names));
    assert!(queues.bodies(QueueId::Response).await.is_empty());
    assert_eq!(
        queues.bodies(QueueId::ResponseDeadLetter).await,
        [RESPONSE_JOB]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_keeps_a_job_it_could_not_send() {
    let queues = Queues::new().await;
    let id = queues.send(QueueId::ResponseDeadLetter, RESPONSE_JOB).await;
    let gone = create_queue(&queues.sqs, &unique("doctor-gone"))
        .await
        .unwrap();
    queues
        .sqs
        .delete_queue()
        .queue_url(&gone)
        .send()
        .await
        .unwrap();
    let stack = queues.describe(&[]).display().to_string();
    let set = format!("{}={gone}", QueueId::Response.output());

    let run = myao(vec![
        "redrive".into(),
        "--stack".into(),
        stack,
        "--set".into(),
        set,
    ])
    .await;
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    let mut names = queues.names();
    names.push((id, "[response id]".to_owned()));
    names.push((gone.clone(), "[deleted queue url]".to_owned()));
    insta::assert_snapshot!(redact(&run.stdout, &names));
    // Deleted only after a send: it is still there, and in view.
    assert_eq!(
        queues.bodies(QueueId::ResponseDeadLetter).await,
        [RESPONSE_JOB]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_refuses_a_stack_whose_queues_it_does_not_know() {
    let run = myao(vec![
        "redrive".into(),
        "--settings-path".into(),
        "/myao/prod/".into(),
    ])
    .await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("no ResponseQueueUrl in the stack's description"),
        "{}",
        run.stderr
    );
}

// ---- the template -------------------------------------------------------------

#[test]
fn the_template_declares_every_output_and_parameter_doctor_reads() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");
    let template: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let target = |value: &serde_yaml::Value| match value {
        serde_yaml::Value::Tagged(t) => t.value.as_str().map(str::to_owned),
        other => other.as_str().map(str::to_owned),
    };
    for key in [FUNCTION_URL, TABLE, SETTINGS_PATH, SCHEDULE_GROUP] {
        assert!(
            template["Outputs"][key]["Value"] != serde_yaml::Value::Null,
            "output {key}"
        );
    }
    for queue in QueueId::ALL {
        let value = &template["Outputs"][queue.output()]["Value"];
        assert_eq!(
            target(value).as_deref(),
            Some(queue.logical_id()),
            "{}",
            queue.output()
        );
    }
    // The secrets' default names are what doctor derives for /myao/prod/.
    let stack = myao_local::stack::Stack::from_json(
        r#"[{"OutputKey": "SettingsPath", "OutputValue": "/myao/prod/"}]"#,
    )
    .unwrap();
    for secret in Secret::ALL {
        let default = &template["Parameters"][secret.stack_parameter()]["Default"];
        assert_eq!(default.as_str(), stack.secret_parameter(secret).as_deref());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_and_settings_list_tell_the_channels_hints_tune() {
    use myao_aws::dynamodb::DynamoStore;
    use myao_core::adapters::system::SystemClock;
    use myao_core::ports::{ChannelRecords, LabelRecords};
    use myao_domain::hints::Hint;
    use myao_domain::labels::{Label, Source};
    use myao_domain::{ChannelId, EmojiName, Ts, UserId};

    let bed = Bed::new().await;
    let store = DynamoStore::new(
        dynamodb_client().await,
        bed.table.clone(),
        std::sync::Arc::new(SystemClock),
    );
    for user in ["U0001", "U0002"] {
        let label = Label {
            channel: ChannelId::parse("C0HINTED").expect("id"),
            post: Ts::parse("1767600000.000100").expect("ts"),
            user: UserId::parse(user).expect("id"),
            hint: Hint::Negative,
            source: Source::Reaction(EmojiName::parse("-1").expect("emoji")),
            at: chrono::Utc::now(),
        };
        assert!(store.put_label(&label).await.expect("stored"));
    }
    // A channel the bot has seen, as every channel with its posts is.
    let channel = myao_domain::Channel {
        id: ChannelId::parse("C0HINTED").expect("id"),
        name: "hinted".into(),
        visibility: myao_domain::Visibility::PUBLIC,
    };
    let now = chrono::Utc::now();
    store
        .touch_channel(&channel, now, now + chrono::Duration::days(30))
        .await
        .expect("recorded");
    let tuned = "#C0HINTED tuned=+14 (2 hints on 1 posts)";

    let run = bed.doctor().await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("ok    hints: "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(line.contains(tuned), "{line}");

    let run = myao(vec![
        "settings".into(),
        "list".into(),
        "--stack".into(),
        bed.describe().display().to_string(),
    ])
    .await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("tuned by hints") && run.stdout.contains(&format!("  {tuned}\n")),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_lists_the_installations_and_fails_on_an_expired_token() {
    use myao_aws::dynamodb::DynamoStore;
    use myao_core::adapters::system::SystemClock;
    use myao_core::ports::Installations;
    use myao_domain::install::{Installation, Rotation, Token};
    use myao_domain::{TeamId, UserId};

    let bed = Bed::new().await;
    let store = DynamoStore::new(
        dynamodb_client().await,
        bed.table.clone(),
        std::sync::Arc::new(SystemClock),
    );
    let install = |team: &str, expires_in: chrono::Duration| Installation {
        team: TeamId::parse(team).expect("team"),
        enterprise: None,
        team_name: team.to_lowercase(),
        bot_user_id: UserId::parse("U0BOT").expect("user"),
        scopes: vec!["chat:write".into(), "channels:history".into()],
        bot_token: Token::new("xoxe.xoxb-secret-token"),
        rotation: Some(Rotation {
            refresh_token: Token::new("xoxe-fake-secret-refresh"),
            expires_at: chrono::Utc::now() + expires_in,
        }),
        installed_at: chrono::Utc::now(),
    };
    store
        .put_installation(&install("T0ACME", chrono::Duration::hours(11)))
        .await
        .expect("stored");
    let run = bed.doctor().await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("ok    installations: "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        line.contains("T0ACME (t0acme): 2 scopes, token until "),
        "{line}"
    );
    assert!(
        !run.stdout.contains("xoxe"),
        "no token shown: {}",
        run.stdout
    );

    store
        .put_installation(&install("T0BETA", chrono::Duration::minutes(-5)))
        .await
        .expect("stored");
    let run = bed.doctor().await;
    run.assert_failed(&["installations"]);
    assert!(
        run.stdout.contains("the token of T0BETA has expired"),
        "{}",
        run.stdout
    );
}
