//! A test bed for the application services with the outside world stubbed
//! at the HTTP level: the real `OpenAiLlm` and `SlackWebApi` adapters talk to
//! wiremock servers (an OpenAI-compatible LLM and the Slack Web API), and the
//! in-process twins stand in for AWS (`MemoryStore`, `JobBoard`,
//! `ManualClock`, `FixedRandom`). Tests assert on what the stubs received
//! and on what the twins hold.
//!
//! The LLM stub answers by the kind of prompt it is sent, read from the
//! system message (see [`classify`]): a judgment gets [`LlmScript`]'s
//! verdict, a response its reply, and a memory task a numbered memory such as
//! `- 2026-01-05 CHANNEL-SHORT-1`, so that a later prompt can be searched for
//! it. A test replaces an answer by mounting its own mock with a higher
//! priority (`Mock::with_priority(1)`: the default mocks have priority 5).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration as StdDuration, Instant};

use chrono::{DateTime, Utc};
use myao_aws::dynamodb::DynamoStore;
use myao_core::adapters::system::{FixedRandom, ManualClock, StaticSecrets};
use myao_core::adapters::twins::{JobBoard, MemoryStore, RecordedMetrics};
use myao_core::app::ingest::{Ingest, Outcome};
use myao_core::app::Ports;
use myao_core::ports::{Clock, Store};
use myao_core::wire::Twins;
use myao_domain::rules::Thresholds;
use myao_domain::{ChannelMemoryJob, Job, Message, Settings, Ts};
use myao_llm::openai::OpenAiLlm;
use myao_services::jobs::{self, JobOutcome};
use myao_services::Services;
use myao_slack::event::parse_envelope;
use myao_slack_api::SlackWebApi;
use myao_testkit::http::completion;
use myao_testkit::ids::{channel, user};
use myao_testkit::time::clock_at;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The bed's starting time: 2026-01-05 08:00:00 UTC.
pub const START: i64 = 1_767_600_000;
/// The bot's user id (what `auth.test` answers) and its persona's name.
pub const BOT: &str = "UBOT";
pub const BOT_NAME: &str = "myao";
pub const ALICE: &str = "UALICE";
pub const BOB: &str = "UBOB";
/// The channels `conversations.info` knows: `#general` and `#random`
/// (public), `#secret-plans` (private) and `#partners` (public, shared with
/// another organisation).
pub const GENERAL: &str = "C1";
pub const RANDOM: &str = "C2";
pub const SECRET: &str = "G3";
pub const PARTNERS: &str = "C4";

/// `users.info`: id, display name, is_bot.
const USERS: &[(&str, &str, bool)] = &[
    (ALICE, "alice", false),
    (BOB, "bob", false),
    (BOT, BOT_NAME, true),
];
/// `conversations.info`: id, name, is_private, is_ext_shared.
const CHANNELS: &[(&str, &str, bool, bool)] = &[
    (GENERAL, "general", false, false),
    (RANDOM, "random", false, false),
    (SECRET, "secret-plans", true, false),
    (PARTNERS, "partners", false, true),
];

/// The emoji `emoji.list` knows: the workspace's custom ones, and the
/// standard ones (`include_categories=true`). `reactions.add` refuses
/// any other name with `invalid_name`.
pub const CUSTOM_EMOJI: &[&str] = &["party-parrot"];
pub const STANDARD_EMOJI: &[&str] = &["+1", "eyes", "pray", "tada", "wave"];

/// A word starting with this, in a message, is repeated by every memory the
/// LLM stub writes from it: the tests follow facts through the memories.
pub const MARK_PREFIX: &str = "MARK-";

/// The section of a digest that asks for the facts of its new messages.
pub const FACTS_MARK: &str = "### facts: 覚えておくべき事実";

/// The heading of a channel's digest (its memories in one JSON answer).
pub const DIGEST_MARK: &str = "## 課題: チャンネルの記憶の更新";

/// The line that ends every judgment prompt's instructions.
pub const JUDGMENT_MARK: &str = "応答すべきかを判断してください";
/// The line that ends every response prompt.
pub const RESPONSE_MARK: &str = "上記の情報をもとに、現在の会話に返答してください";

/// The line of the proactive judgment's prompt (whether to open a topic).
pub const PROACTIVE_MARK: &str = "自分から新しい話題を切り出すべきかを判断してください";
/// The line of the opening post's prompt.
pub const OPENER_MARK: &str = "に新しい話題を切り出す投稿を書いてください";

/// A proactive judgment's answer: open with `topic`, or (`None`) not.
pub fn opening(topic: Option<&str>) -> String {
    json!({"open": topic.is_some(), "topic": topic.unwrap_or("")}).to_string()
}

/// The reply the LLM stub writes unless told otherwise.
pub const DEFAULT_REPLY: &str = "それなら依存のバージョンを確認してみるといいにゃ";

/// A judgment answer of the given form (`reaction`, `short`, `full`,
/// `none`), with an emoji for a reaction.
pub fn verdict_of(response_type: &str, emoji: Option<&str>) -> String {
    json!({
        "should_respond": response_type != "none",
        "response_type": response_type,
        "emoji": emoji,
        "reason": "テスト用の判断",
        "confidence": 0.9,
        "delay_seconds": 0,
    })
    .to_string()
}

/// A judgment answer as the LLM would write it.
pub fn verdict(should_respond: bool, delay_seconds: Option<u32>) -> String {
    json!({
        "should_respond": should_respond,
        "reason": "テスト用の判断",
        "confidence": 0.9,
        "delay_seconds": delay_seconds,
    })
    .to_string()
}

/// The memory tasks, by the heading of their template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MemoryTask {
    /// A channel's digest: its short-term memory, its threads' summaries,
    /// facts and, when due, its long-term memory, in one JSON answer.
    Digest,
    Thread,
    ChannelShort,
    ChannelLong,
    WorkspaceShort,
    WorkspaceLong,
}

impl MemoryTask {
    const ALL: [(MemoryTask, &'static str, &'static str); 6] = [
        (MemoryTask::Digest, DIGEST_MARK, "DIGEST"),
        (MemoryTask::Thread, "## 課題: スレッドの要約", "THREAD"),
        (
            MemoryTask::ChannelShort,
            "## 課題: チャンネルの短期記憶",
            "CHANNEL-SHORT",
        ),
        (
            MemoryTask::ChannelLong,
            "## 課題: チャンネルの長期記憶",
            "CHANNEL-LONG",
        ),
        (
            MemoryTask::WorkspaceShort,
            "## 課題: ワークスペースの短期記憶",
            "WORKSPACE-SHORT",
        ),
        (
            MemoryTask::WorkspaceLong,
            "## 課題: ワークスペースの長期記憶",
            "WORKSPACE-LONG",
        ),
    ];

    fn tag(self) -> &'static str {
        MemoryTask::ALL
            .iter()
            .find(|(t, _, _)| *t == self)
            .map(|(_, _, tag)| *tag)
            .unwrap_or("MEMORY")
    }
}

/// What a system prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Judgment,
    Response,
    Memory(MemoryTask),
    /// Whether to open a topic in a quiet channel.
    Proactive,
    /// The post opening that topic.
    Opener,
}

/// The kind of a system prompt, by the instructions only its template holds.
pub fn classify(system: &str) -> Option<PromptKind> {
    if system.contains(PROACTIVE_MARK) {
        return Some(PromptKind::Proactive);
    }
    if system.contains(OPENER_MARK) {
        return Some(PromptKind::Opener);
    }
    if let Some((task, _, _)) = MemoryTask::ALL.iter().find(|(_, h, _)| system.contains(h)) {
        return Some(PromptKind::Memory(*task));
    }
    if system.contains(JUDGMENT_MARK) {
        return Some(PromptKind::Judgment);
    }
    if system.contains(RESPONSE_MARK) {
        return Some(PromptKind::Response);
    }
    None
}

/// What the LLM stub answers; tests may change it between runs.
#[derive(Debug)]
pub struct LlmScript {
    judgment: Mutex<String>,
    reply: Mutex<String>,
    reflection: Mutex<String>,
    proactive: Mutex<String>,
    memories: Mutex<BTreeMap<MemoryTask, u32>>,
    /// Whether a digest's answer leaves out the threads it was asked about.
    threads_left_out: Mutex<bool>,
    /// What a digest answers instead of its memories (prose, say), if set,
    /// and for how many more calls (`None`: every one).
    digest_answer: Mutex<Option<(String, Option<u32>)>>,
}

impl Default for LlmScript {
    fn default() -> Self {
        LlmScript {
            judgment: Mutex::new(verdict(true, Some(0))),
            reply: Mutex::new(DEFAULT_REPLY.to_owned()),
            reflection: Mutex::new(r#"{"facts": []}"#.to_owned()),
            // Most of the time, nothing worth opening with.
            proactive: Mutex::new(opening(None)),
            memories: Mutex::new(BTreeMap::new()),
            threads_left_out: Mutex::new(false),
            digest_answer: Mutex::new(None),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LlmScript {
    /// The text answered to judgment prompts (normally a [`verdict`]).
    pub fn set_judgment(&self, answer: impl Into<String>) {
        *lock(&self.judgment) = answer.into();
    }

    /// The facts a digest answers when it asks for them (`{"facts": []}`
    /// unless told; its `facts` list is taken).
    pub fn set_reflection(&self, answer: impl Into<String>) {
        *lock(&self.reflection) = answer.into();
    }

    /// Whether a digest's answer leaves out the threads it is asked about
    /// (as a model may).
    pub fn leave_out_threads(&self, yes: bool) {
        *lock(&self.threads_left_out) = yes;
    }

    /// What a digest answers instead of its memories (an unusable answer,
    /// say); `None`: the memories, as normally.
    pub fn set_digest_answer(&self, answer: Option<&str>) {
        *lock(&self.digest_answer) = answer.map(|a| (a.to_owned(), None));
    }

    /// [`Self::set_digest_answer`] for the next `calls` digests only.
    pub fn set_digest_answer_for(&self, answer: &str, calls: u32) {
        *lock(&self.digest_answer) = Some((answer.to_owned(), Some(calls)));
    }

    /// The text answered to proactive judgment prompts (normally an
    /// [`opening`]).
    pub fn set_proactive(&self, answer: impl Into<String>) {
        *lock(&self.proactive) = answer.into();
    }

    /// The text answered to response prompts.
    pub fn set_reply(&self, reply: impl Into<String>) {
        *lock(&self.reply) = reply.into();
    }

    pub fn reply(&self) -> String {
        lock(&self.reply).clone()
    }

    /// A digest's answer: the memories it asks for, each as [`Self::memory`]
    /// writes it under its own task, and the reflection's facts.
    fn digest(&self, system: &str) -> String {
        {
            let mut scripted = lock(&self.digest_answer);
            if let Some((answer, left)) = scripted.clone() {
                *scripted = match left {
                    Some(1) => None,
                    Some(n) => Some((answer.clone(), Some(n - 1))),
                    None => Some((answer.clone(), None)),
                };
                return answer;
            }
        }
        let mut answer = json!({"channel": null, "long": null, "threads": {}, "facts": []});
        if system.contains("### channel:") {
            answer["channel"] = json!(self.memory(MemoryTask::ChannelShort, system));
        }
        if system.contains("### long:") {
            answer["long"] = json!(self.memory(MemoryTask::ChannelLong, system));
        }
        let threads: Vec<&str> = system
            .split("### threads:")
            .nth(1)
            .map(|rest| rest.split("\n### ").next().unwrap_or(""))
            .unwrap_or("")
            .lines()
            .filter_map(|l| l.strip_prefix("- スレッド "))
            .map(|l| l.split('（').next().unwrap_or(l).trim())
            .collect();
        let left_out = *lock(&self.threads_left_out);
        for thread in threads.into_iter().filter(|_| !left_out) {
            answer["threads"][thread] = json!(self.memory(MemoryTask::Thread, system));
        }
        if system.contains(FACTS_MARK) {
            let facts: Value =
                serde_json::from_str(&lock(&self.reflection)).unwrap_or_else(|_| json!({}));
            answer["facts"] = facts.get("facts").cloned().unwrap_or(json!("not facts"));
            if let Some(people) = facts.get("people") {
                answer["people"] = people.clone();
            }
        }
        answer.to_string()
    }

    fn memory(&self, task: MemoryTask, system: &str) -> String {
        let mut counts = lock(&self.memories);
        let n = counts.entry(task).or_insert(0);
        *n += 1;
        // Like a real summary, it repeats the facts it was given: every
        // `MARK-...` word of the prompt (outside the shown examples).
        let mut marks: Vec<&str> = system
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with(MARK_PREFIX) && w.len() > MARK_PREFIX.len())
            .collect();
        marks.sort_unstable();
        marks.dedup();
        let mut memory = format!("- 2026-01-05 {}-{n}", task.tag());
        for mark in marks {
            memory.push(' ');
            memory.push_str(mark);
        }
        memory
    }
}

fn system_of(request: &Request) -> Option<String> {
    let body: Value = request.body_json().ok()?;
    body.pointer("/messages/0/content")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

struct LlmResponder(Arc<LlmScript>);

impl Respond for LlmResponder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let kind = system_of(request).as_deref().and_then(classify);
        match kind {
            Some(PromptKind::Judgment) => completion(&lock(&self.0.judgment)),
            Some(PromptKind::Response) => completion(&self.0.reply()),
            Some(PromptKind::Proactive) => completion(&lock(&self.0.proactive)),
            Some(PromptKind::Opener) => completion(&self.0.reply()),
            Some(PromptKind::Memory(MemoryTask::Digest)) => {
                completion(&self.0.digest(&system_of(request).unwrap_or_default()))
            }
            Some(PromptKind::Memory(task)) => {
                completion(&self.0.memory(task, &system_of(request).unwrap_or_default()))
            }
            // A prompt of no known kind is a bug the test should see.
            None => ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"message": "unknown prompt"}})),
        }
    }
}

/// Answers `chat.postMessage` with a new `ts` at the bed's current time
/// (`.5000nn`: after every seeded message of the same second, and distinct).
struct PostResponder {
    clock: Arc<ManualClock>,
    posted: AtomicU32,
}

impl Respond for PostResponder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let n = self.posted.fetch_add(1, Ordering::SeqCst);
        let secs = u64::try_from(self.clock.now().timestamp()).unwrap_or(0);
        let ts = Ts::from_parts(secs, 500_000 + n);
        let body: Value = request.body_json().unwrap_or(Value::Null);
        ResponseTemplate::new(200).set_body_json(json!({
            "ok": true,
            "channel": body["channel"],
            "ts": ts.to_string(),
            "message": {"text": body["text"], "user": BOT}
        }))
    }
}

/// Answers `reactions.add` as Slack does: `invalid_name` for an emoji
/// it does not know, `already_reacted` for the same reaction twice.
#[derive(Default)]
struct ReactionResponder {
    added: Mutex<Vec<(String, String, String)>>,
}

impl Respond for ReactionResponder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        let field = |k: &str| body[k].as_str().unwrap_or_default().to_owned();
        let (name, reaction) = (
            field("name"),
            (field("channel"), field("timestamp"), field("name")),
        );
        let refuse = |code: &str| {
            ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": code}))
        };
        if !CUSTOM_EMOJI.contains(&name.as_str()) && !STANDARD_EMOJI.contains(&name.as_str()) {
            return refuse("invalid_name");
        }
        let mut added = lock(&self.added);
        if added.contains(&reaction) {
            return refuse("already_reacted");
        }
        added.push(reaction);
        ResponseTemplate::new(200).set_body_json(json!({"ok": true}))
    }
}

fn emoji_list(_: &Request) -> ResponseTemplate {
    let custom: serde_json::Map<String, Value> = CUSTOM_EMOJI
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                json!(format!("https://emoji.example/{n}.png")),
            )
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "ok": true,
        "emoji": custom,
        "categories_version": "5",
        "categories": [{"name": "all", "emoji_names": STANDARD_EMOJI}]
    }))
}

fn query<'a>(request: &'a Request, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    request
        .url
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn users_info(request: &Request) -> ResponseTemplate {
    let id = query(request, "user").unwrap_or_default();
    match USERS.iter().find(|(u, _, _)| *u == id) {
        Some((u, name, is_bot)) => ResponseTemplate::new(200).set_body_json(json!({
            "ok": true,
            "user": {
                "id": u, "name": format!("{name}-handle"), "is_bot": is_bot,
                "profile": {"display_name": name, "real_name": format!("{name} real")}
            }
        })),
        None => ResponseTemplate::new(200)
            .set_body_json(json!({"ok": false, "error": "user_not_found"})),
    }
}

fn conversations_info(request: &Request) -> ResponseTemplate {
    let id = query(request, "channel").unwrap_or_default();
    match CHANNELS.iter().find(|(c, ..)| *c == id) {
        Some((c, name, is_private, is_ext_shared)) => {
            ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "channel": {
                    "id": c, "name": name, "is_channel": !is_private, "is_group": is_private,
                    "is_private": is_private, "is_ext_shared": is_ext_shared,
                    "is_shared": is_ext_shared
                }
            }))
        }
        None => ResponseTemplate::new(200)
            .set_body_json(json!({"ok": false, "error": "channel_not_found"})),
    }
}

/// Answers with `responses` in turn (the last one from then on) and records
/// when each request arrived.
pub struct Sequence {
    responses: Vec<ResponseTemplate>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Sequence {
    /// The responder and the arrival times it will record.
    pub fn new(responses: Vec<ResponseTemplate>) -> (Sequence, Arc<Mutex<Vec<Instant>>>) {
        assert!(!responses.is_empty(), "a sequence needs a response");
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        (
            Sequence {
                responses,
                arrivals: arrivals.clone(),
            },
            arrivals,
        )
    }
}

impl Respond for Sequence {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut arrivals = lock(&self.arrivals);
        arrivals.push(Instant::now());
        let i = (arrivals.len() - 1).min(self.responses.len() - 1);
        self.responses[i].clone()
    }
}

/// One request the LLM stub received.
#[derive(Debug, Clone)]
pub struct LlmCall {
    pub kind: Option<PromptKind>,
    pub system: String,
    /// The whole chat-completions body.
    pub body: Value,
}

/// The `ts` `offset` seconds after [`START`] (`.000100`, so that the stub's
/// posts in the same second come later).
pub fn ts(offset: i64) -> Ts {
    Ts::from_parts(u64::try_from(START + offset).expect("after 1970"), 100)
}

/// The instant `offset` seconds after [`START`].
pub fn at(offset: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(START + offset, 0).expect("a valid time")
}

/// A message; a bot's when `user_id` is [`BOT`].
pub fn message(ch: &str, user_id: &str, ts: Ts, thread: Option<Ts>, text: &str) -> Message {
    Message::new(channel(ch), user(user_id), text, ts, thread, user_id == BOT)
}

/// Asserts that `parts` occur in `text` in this order (each after the end of
/// the previous one).
pub fn assert_in_order(text: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        match text[from..].find(part) {
            Some(i) => from += i + part.len(),
            None => panic!(
                "{part:?} is missing, or not after {:?}, in:\n{text}",
                &text[..from].chars().rev().take(60).collect::<String>()
            ),
        }
    }
}

/// The services on a store (the twin, or DynamoDB on the emulator), the
/// job board and the two stub servers.
pub struct Bed<S = MemoryStore> {
    pub clock: Arc<ManualClock>,
    pub store: Arc<S>,
    pub board: Arc<JobBoard>,
    /// What the services counted (the twin of the EMF metrics).
    pub metrics: Arc<RecordedMetrics>,
    pub settings: Settings,
    pub script: Arc<LlmScript>,
    pub llm_server: MockServer,
    pub slack_server: MockServer,
    pub services: Services,
}

/// Thresholds that leave every score to the LLM's judgment.
pub const ALWAYS_ASK: Thresholds = Thresholds {
    low: i32::MIN,
    high: i32::MAX,
};

impl Bed<MemoryStore> {
    /// A bed with the default settings (pointed at the stubs).
    pub async fn new() -> Bed {
        Bed::with_settings(|_| {}).await
    }

    /// A bed whose settings `tweak` adjusts after they are pointed at the stubs.
    pub async fn with_settings(tweak: impl FnOnce(&mut Settings)) -> Bed {
        Bed::assemble(Twins::new(clock_at(at(0))), tweak).await
    }
}

impl Bed<DynamoStore> {
    /// A bed whose store is DynamoDB on the emulator (a new table).
    pub async fn on_emulator(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
        let clock = clock_at(at(0));
        let store = Arc::new(crate::tables::fresh_store_with_clock(clock.clone()).await);
        Bed::assemble(Twins::with_store(clock, store), tweak).await
    }
}

/// The LLM's stub server: chat completions answered from `script`.
async fn llm_stub(script: &Arc<LlmScript>) -> MockServer {
    let llm_server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(LlmResponder(script.clone()))
        .mount(&llm_server)
        .await;
    llm_server
}

/// Slack's stub server: posts stamped on `clock`, searches that find
/// nothing, and the users, channel, reaction, status, emoji and auth calls.
async fn slack_stub(clock: &Arc<ManualClock>) -> MockServer {
    let slack_server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(PostResponder {
            clock: clock.clone(),
            posted: AtomicU32::new(0),
        })
        .mount(&slack_server)
        .await;
    // A search for a post's mark finds nothing unless a test says so
    // (below the default priority, so that a test's own answer wins).
    for history in ["/api/conversations.replies", "/api/conversations.history"] {
        Mock::given(method("GET"))
            .and(path(history))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"ok": true, "messages": []})),
            )
            .with_priority(10)
            .mount(&slack_server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/api/users.info"))
        .respond_with(users_info)
        .mount(&slack_server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/conversations.info"))
        .respond_with(conversations_info)
        .mount(&slack_server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/reactions.add"))
        .respond_with(ReactionResponder::default())
        .mount(&slack_server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/assistant.threads.setStatus"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&slack_server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/emoji.list"))
        .respond_with(emoji_list)
        .mount(&slack_server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/auth.test"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"ok": true, "user_id": BOT, "bot_id": "B1", "team_id": "T1"}),
            ),
        )
        .mount(&slack_server)
        .await;
    slack_server
}

/// The bed's default settings, pointed at the stubs.
fn settings_for(llm_server: &MockServer, slack_server: &MockServer) -> Settings {
    Settings {
        llm_base_url: format!("{}/v1", llm_server.uri()),
        slack_api_base_url: format!("{}/api", slack_server.uri()),
        persona_name: BOT_NAME.to_owned(),
        // Every judgment in the ambiguous band, so that tests of the
        // LLM judgment reach it; tests of the rule stage set their own.
        rule_thresholds: Some(ALWAYS_ASK),
        // Every memory run with something new digests it, so that tests
        // of what memories hold need no crowd of messages; the wait for
        // enough of them has its own test.
        memory_min_new_messages: 1,
        ..Settings::default()
    }
}

/// The services over `ports` with the real LLM and Slack clients (their
/// backoff cut to a millisecond), whose keys are fakes the stubs accept.
fn http_services(ports: Ports) -> Services {
    let secrets = Arc::new(
        StaticSecrets::new()
            .with("llm_api_key", "fake-llm-key")
            .with("slack_bot_token", "xoxb-test"),
    );
    let llm = OpenAiLlm::new(
        myao_http::http_client(),
        ports.settings.clone(),
        secrets.clone(),
        "llm_api_key",
    )
    .with_backoff(StdDuration::from_millis(1))
    .with_metrics(ports.metrics.clone());
    let slack = SlackWebApi::new(
        myao_http::http_client(),
        ports.settings.clone(),
        secrets,
        "slack_bot_token",
    )
    .with_backoff(StdDuration::from_millis(1))
    .with_metrics(ports.metrics.clone());
    Services::new(ports, Arc::new(llm), Arc::new(slack))
}

impl<S: Store + 'static> Bed<S> {
    async fn assemble(twins: Twins<ManualClock, S>, tweak: impl FnOnce(&mut Settings)) -> Bed<S> {
        let script = Arc::new(LlmScript::default());
        let llm_server = llm_stub(&script).await;
        let slack_server = slack_stub(&twins.clock).await;
        let mut settings = settings_for(&llm_server, &slack_server);
        tweak(&mut settings);
        let ports = twins.ports(FixedRandom(0.5), settings.clone());
        let services = http_services(ports);
        let Twins {
            clock,
            store,
            board,
            metrics,
        } = twins;
        Bed {
            clock,
            store,
            board,
            metrics,
            settings,
            script,
            llm_server,
            slack_server,
            services,
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Ingest over the bed's ports.
    pub fn ingest(&self) -> Ingest {
        Ingest::new(
            self.services.ports.clone(),
            Arc::new(StaticSecrets::new()),
            "unused",
        )
    }

    /// Delivers one Events API event (of the bot `UBOT`) to ingest, now:
    /// parsed, not signed (the signature has its own tests).
    pub async fn deliver(&self, event: Value) -> Outcome {
        let body = serde_json::to_vec(&json!({
            "type": "event_callback", "event_id": "Ev1", "team_id": "T1", "event": event,
            "authorizations": [{"user_id": BOT, "is_bot": true}]
        }))
        .expect("json");
        let envelope = parse_envelope(&body).expect("an event");
        self.ingest()
            .process(envelope, self.now())
            .await
            .expect("ingest")
            .0
    }

    /// Stores messages as ingest would (routed, kept for a year).
    pub async fn seed(&self, messages: &[Message]) {
        for m in messages {
            self.store
                .insert_message(m, true, at(365 * 24 * 3600))
                .await
                .expect("seed a message");
        }
    }

    /// Seeds a habit of threads in #general: an hour before now, Bob's
    /// message and five replies under it (Alice's and Bob's in turn), `gap`
    /// seconds apart, the pace at which its people answer each other.
    pub async fn seed_thread_habit(&self, gap: i64) {
        let root = ts(-4000);
        let mut earlier = vec![message(GENERAL, BOB, root, None, "the build is red")];
        for i in 0..5 {
            let who = if i % 2 == 0 { ALICE } else { BOB };
            earlier.push(message(
                GENERAL,
                who,
                ts(-3900 + i * gap),
                Some(root),
                "on it",
            ));
        }
        self.seed(&earlier).await;
    }

    /// Seeds a question at the top level of #general, 5 minutes old.
    pub async fn seed_top_level_question(&self) {
        self.seed(&[message(
            GENERAL,
            ALICE,
            ts(-300),
            None,
            "誰か Rust の非同期でおすすめの本知ってる?",
        )])
        .await;
    }

    /// Runs one job as the functions do. A memory sweep also runs the
    /// channel and workspace jobs it fanned out, as the memory queue would
    /// (the workspace's last), and returns their reports merged into its own.
    pub async fn run(&self, job: &Job) -> JobOutcome {
        let outcome = jobs::run(&self.services, job)
            .await
            .unwrap_or_else(|e| panic!("{job:?} failed: {e}"));
        let (Job::MemorySweep, JobOutcome::Memory(mut report)) = (job, outcome.clone()) else {
            return outcome;
        };
        let fanned = self.board.take_queued(|j| {
            matches!(
                j,
                Job::ChannelMemory(ChannelMemoryJob { .. }) | Job::WorkspaceMemory
            )
        });
        for job in fanned {
            if let JobOutcome::Memory(r) = Box::pin(self.run(&job)).await {
                report.merge(r);
            }
        }
        JobOutcome::Memory(report)
    }

    /// Takes the jobs due now from the board and runs them in due order.
    pub async fn run_due(&self) -> Vec<(Job, JobOutcome)> {
        let mut done = Vec::new();
        for due in self.board.take_due(self.now()) {
            let job = due.job;
            let outcome = self.run(&job).await;
            done.push((job, outcome));
        }
        done
    }

    /// Every request the LLM stub received, in order.
    pub async fn llm_calls(&self) -> Vec<LlmCall> {
        self.llm_server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let body: Value = r.body_json().unwrap_or(Value::Null);
                let system = body
                    .pointer("/messages/0/content")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                LlmCall {
                    kind: classify(&system),
                    system,
                    body,
                }
            })
            .collect()
    }

    /// The LLM requests of one kind, in order.
    pub async fn llm_calls_of(&self, kind: PromptKind) -> Vec<LlmCall> {
        self.llm_calls()
            .await
            .into_iter()
            .filter(|c| c.kind == Some(kind))
            .collect()
    }

    /// The digests that asked for facts (what reflection was), in order.
    pub async fn fact_asks(&self) -> Vec<LlmCall> {
        self.llm_calls()
            .await
            .into_iter()
            .filter(|c| c.system.contains(FACTS_MARK))
            .collect()
    }

    /// Every request the Slack stub received for `slack_method`, in order.
    pub async fn slack_requests(&self, slack_method: &str) -> Vec<Request> {
        let wanted = format!("/api/{slack_method}");
        self.slack_server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.url.path() == wanted)
            .collect()
    }

    /// The bodies of every `reactions.add` the Slack stub received.
    pub async fn reactions(&self) -> Vec<Value> {
        self.slack_requests("reactions.add")
            .await
            .iter()
            .map(|r| r.body_json().unwrap_or(Value::Null))
            .collect()
    }

    /// The bodies of every `chat.postMessage` the Slack stub received.
    pub async fn posts(&self) -> Vec<Value> {
        self.slack_requests("chat.postMessage")
            .await
            .iter()
            .map(|r| r.body_json().unwrap_or(Value::Null))
            .collect()
    }
}
