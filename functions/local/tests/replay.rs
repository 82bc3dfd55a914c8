//! The replay, end to end, on the shipped example export.
//!
//! - `dry_run_*`: no LLM configured: prompts only, no reply, counts.
//! - `with_an_llm_stub_*`: an OpenAI-compatible stub (wiremock) decides;
//!   replies land in the right threads at the right virtual times.
//! - `malformed_*`, `unknown_subtypes_*`, `a_zip_*`, `an_oversized_zip_*`:
//!   reading exports.
//!
//! A timeline is snapshotted whole (insta, in `snapshots/`).

use myao_testkit::http::{completion, llm_stub};

use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use myao_domain::rules::Decision;
use myao_local::cli::{self, Command, ReplayArgs};
use myao_local::export::{self, Filter};
use myao_local::replay;
use myao_local::timeline::{Event, EventKind, Recorder, TextSink, Verdict};
use myao_services::judgment::JudgmentOutcome;
use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/export")
}

fn at(ts: &str) -> DateTime<Utc> {
    myao_domain::Ts::parse(ts).expect("ts").to_datetime()
}

fn replay_args(extra: &[&str]) -> ReplayArgs {
    let mut args = vec!["replay".to_owned(), example().display().to_string()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    match cli::parse(&args).expect("arguments") {
        Command::Replay(r) => r,
        other => panic!("not a replay: {other:?}"),
    }
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Replays the example with `args` and `env` through the CLI's own wiring.
async fn replay_example(extra: &[&str], vars: &[(&str, &str)]) -> Recorder {
    let args = replay_args(extra);
    let config = cli::replay_config(&args, &env(vars)).expect("config");
    assert!(config.issues.is_empty(), "{:?}", config.issues);
    let (filter, options) = cli::replay_plan(&args, &config).expect("plan");
    let export = export::read(&args.export, &filter).expect("export");
    let mut recorder = Recorder::default();
    replay::run(&export, options, &mut recorder)
        .await
        .expect("replayed");
    recorder
}

/// Thresholds that put every score in the rule stage's ambiguous band: the
/// LLM (or the dry run) judges every conversation, as before the rule stage.
const ALWAYS_ASK: (&str, &str) = ("MYAO_RULE_THRESHOLDS", "-1000,1000");

fn judgments(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Judgment { .. }))
        .collect()
}

#[tokio::test]
async fn dry_run_of_the_example_shows_prompts_and_invents_nothing() {
    let rec = replay_example(&[], &[]).await;
    let s = rec.summary.clone().unwrap();
    assert!(s.dry_run);
    assert!(rec.header.as_ref().unwrap().llm.is_none());
    assert_eq!(s.messages, 51);
    assert_eq!((s.edits, s.deletions), (1, 1));
    assert_eq!(s.channels, 4);
    assert_eq!(s.threads, 7);
    assert_eq!(
        s.skipped.keys().collect::<Vec<_>>(),
        [
            "message subtype channel_join",
            "message subtype channel_topic",
            "message subtype huddle_thread"
        ]
    );
    assert_eq!(s.replies, 0, "a dry run invents no reply");
    assert_eq!(s.memory_count(), 0, "nor a memory");
    // The rule stage decides judgments alone: silent (a low score) or sure
    // (a high one); each sure one makes a response job, which a dry run
    // cannot write either.
    let count = |name: &str| s.judgments.get(name).copied().unwrap_or(0);
    let sure = count("rule_yes") + count("rule_react");
    assert!(sure + count("rule_silent") >= 1, "{:?}", s.judgments);
    let no_reply = |mention: bool| {
        rec.events
            .iter()
            .filter(|e| {
                matches!(&e.kind, EventKind::NoReply { mention: m, reason, .. }
                    if *m == mention && reason == "dry run")
            })
            .count()
    };
    assert_eq!(no_reply(true), 3, "the three mentions");
    assert!(no_reply(false) <= sure, "the sure answers, unless stale");
    // Every judgment that reached the LLM (the ambiguous band) is a dry run
    // with its prompt.
    let dry = count("dry run");
    let judge = s.llm.get("judgment").copied().unwrap_or_default();
    assert_eq!(judge.calls as usize, dry);
    assert_eq!(judge.prompt_tokens, 0);
    for e in judgments(&rec.events) {
        let EventKind::Judgment { verdict, prompts } = &e.kind else {
            unreachable!()
        };
        // Every judgment past the gates shows its ruling.
        let decision = verdict.ruling().map(|r| r.decision);
        match &verdict.outcome {
            JudgmentOutcome::Silent { .. } => {
                assert_eq!(verdict.name(), "dry run");
                assert_eq!(decision, Some(Decision::Ask));
                assert_eq!(prompts.len(), 1);
                assert!(prompts[0].text.contains("should_respond"));
            }
            JudgmentOutcome::Quiet(_) => assert_eq!(decision, Some(Decision::Silent)),
            JudgmentOutcome::Sure { .. } => assert_eq!(decision, Some(Decision::Respond)),
            JudgmentOutcome::Stale | JudgmentOutcome::Empty | JudgmentOutcome::Held(_) => {
                assert_eq!(decision, None)
            }
            other => panic!("a dry run has no {other:?}"),
        }
        if !verdict.is_dry_run() {
            assert!(prompts.is_empty(), "no LLM call outside the ambiguous band");
        }
    }
    assert_eq!(s.jobs_left, 0);
    assert!(s.last.unwrap() > s.first.unwrap() + Duration::days(2));
}

#[tokio::test]
async fn dry_run_prompts_follow_edits_and_deletions() {
    let rec = replay_example(&[], &[ALWAYS_ASK]).await;
    // (channel, time, prompt) of every judgment.
    let prompts: Vec<(String, DateTime<Utc>, String)> = rec
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Judgment { prompts, .. } => Some(
                prompts
                    .iter()
                    .map(|p| {
                        (
                            e.channel.as_ref().unwrap().name.clone(),
                            e.at,
                            p.text.clone(),
                        )
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    let edit = at("1767612040.001700");
    let after_edit: Vec<_> = prompts
        .iter()
        .filter(|(_, t, p)| *t > edit && p.contains("lockfile"))
        .collect();
    assert!(!after_edit.is_empty());
    for (_, _, p) in after_edit {
        assert!(p.contains("fixed, main is green again"));
        assert!(!p.contains("fixd"), "the edit replaced the text");
    }
    let deletion = at("1767629445.002300");
    let random: Vec<_> = prompts
        .iter()
        .filter(|(c, t, _)| c == "random" && *t > deletion)
        .collect();
    assert!(!random.is_empty());
    for (_, _, p) in random {
        assert!(p.contains("wrong channel"));
        assert!(
            !p.contains("deploying billing-api"),
            "the deleted message is gone"
        );
    }
}

#[tokio::test]
async fn dry_run_text_and_prompts_folder() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    let args = replay_args(&["--prompts-dir", prompts.to_str().unwrap()]);
    let config = cli::replay_config(&args, &env(&[ALWAYS_ASK])).unwrap();
    let (filter, options) = cli::replay_plan(&args, &config).unwrap();
    let export = export::read(&args.export, &filter).unwrap();
    let mut out = Vec::new();
    let s = replay::run(&export, options, &mut TextSink::new(&mut out))
        .await
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("│ "), "not printed when written to files");
    // Every prompt referenced by its file, under the temporary folder; the
    // export named as the test gave it.
    let text = text
        .replace(&prompts.display().to_string(), "[prompts]")
        .replace(&example().display().to_string(), "[example]");
    insta::assert_snapshot!(crate::cli::without_wall_clock(&text));
    let files = std::fs::read_dir(&prompts).unwrap().count();
    let calls: u64 = s.llm.values().map(|r| r.calls).sum();
    assert_eq!(files as u64, calls);
    assert_eq!(s.prompts_written as u64, calls);
    assert!(prompts.join("001-judgment.txt").is_file());
}

#[tokio::test]
async fn the_same_seed_replays_the_same_timeline() {
    let a = replay_example(&["--seed", "42"], &[]).await;
    let b = replay_example(&["--seed", "42"], &[]).await;
    let times = |r: &Recorder| {
        judgments(&r.events)
            .iter()
            .map(|e| e.at)
            .collect::<Vec<_>>()
    };
    assert_eq!(times(&a), times(&b));
    let c = replay_example(&["--seed", "43"], &[]).await;
    assert_ne!(times(&a), times(&c), "the jitter depends on the seed");
}

/// The LLM stub: judges by model name (set per role through the settings).
/// It wants to speak only in the thread of Eve's welcome, once her question
/// about the onboarding doc is there; it writes replies and memories.
struct Stub {
    thread: &'static str,
}

const REPLY: &str = "オンボーディング資料は Handbook の Getting started にあるよ🐈";

impl Respond for Stub {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).expect("json");
        let prompt = body["messages"][0]["content"].as_str().expect("a prompt");
        let text = match body["model"].as_str().expect("a model") {
            "judge" => {
                let target = format!("判定対象スレッド: {}", self.thread);
                let yes = prompt.contains(&target) && prompt.contains("onboarding doc");
                json!({"should_respond": yes, "delay_seconds": 0, "confidence": 0.9,
                       "reason": if yes { "an unanswered question" } else { "nothing to add" }})
                .to_string()
            }
            "writer" => REPLY.to_owned(),
            // A channel's digest answers in JSON.
            _ if prompt.contains("## 課題: チャンネルの記憶の更新") => {
                json!({"channel": "覚えておくこと: いろいろ", "threads": {}, "facts": []})
                    .to_string()
            }
            _ => "覚えておくこと: いろいろ".to_owned(),
        };
        completion(&text)
    }
}

#[tokio::test]
async fn with_an_llm_stub_replies_land_in_the_right_threads_at_the_right_times() {
    let eve_thread = "1767609060.000800";
    let (server, base) = llm_stub(Stub { thread: eve_thread }).await;
    let rec = replay_example(
        &[],
        &[
            ("MYAO_LLM_BASE_URL", &base),
            ("MYAO_MIN_WAIT_SECONDS", "300"),
            ("MYAO_JITTER_RATIO", "0"),
            // The stub's declines would back #general off before Eve asks.
            ALWAYS_ASK,
            ("MYAO_BACKOFF_AFTER_DECLINES", "0"),
            ("MYAO_JUDGMENT_MODEL", "judge"),
            ("MYAO_RESPONSE_MODEL", "writer"),
            ("MYAO_MEMORY_MODEL", "memo"),
            ("MYAO_LLM_MAX_RETRIES", "0"),
        ],
    )
    .await;
    let s = rec.summary.clone().unwrap();
    assert!(!s.dry_run);
    let replies: Vec<&Event> = rec
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Reply { .. }))
        .collect();
    let found: Vec<(DateTime<Utc>, &str, Option<String>, bool)> = replies
        .iter()
        .map(|e| {
            let EventKind::Reply { mention, .. } = e.kind else {
                unreachable!()
            };
            (
                e.at,
                e.channel.as_ref().unwrap().name.as_str(),
                e.thread_ts.map(|t| t.to_string()),
                mention,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            // Eve's question at 10:40:00, judged 300 s later, answered at once.
            (
                at("1767609600.001100") + Duration::seconds(300),
                "general",
                Some(eve_thread.to_owned()),
                false
            ),
            // chika's mention at the top level of #random: answered at its instant.
            (at("1767616200.002000"), "random", None, true),
            // alice's mention in the private #bob-surprise.
            (at("1767690600.003300"), "bob-surprise", None, true),
            // eve's mention in the 409/429 thread of #dev.
            (
                at("1767694800.001200"),
                "dev",
                Some("1767693600.000600".to_owned()),
                true
            ),
        ]
    );
    // The reply time is the judgment's time.
    let answered = judgments(&rec.events)
        .into_iter()
        .find(|e| {
            matches!(
                &e.kind,
                EventKind::Judgment {
                    verdict: Verdict {
                        outcome: JudgmentOutcome::Respond { .. },
                        ..
                    },
                    ..
                }
            )
        })
        .unwrap();
    assert_eq!(answered.at, found[0].0);
    assert_eq!(s.judgments.get("llm_yes"), Some(&1));
    assert_eq!(s.replies, 4);
    assert_eq!(s.mention_replies, 3);
    assert!(s.memory_count() > 0, "memories were written");
    assert!(s.llm["judgment"].prompt_tokens > 0);
    assert_eq!(s.llm["response"].calls, 4);

    // A burst in one thread made one judgment, after its last message.
    let design = "1767693600.000600";
    let burst: Vec<&Event> = judgments(&rec.events)
        .into_iter()
        .filter(|e| e.thread_ts.map(|t| t.to_string()).as_deref() == Some(design))
        .collect();
    assert_eq!(burst.len(), 1, "five replies within the wait: one judgment");
    assert_eq!(
        burst[0].at,
        at("1767694050.001100") + Duration::seconds(300)
    );

    // The bot's reply was stored at its virtual time: later prompts show it.
    let requests = server.received_requests().await.unwrap();
    let later = requests.iter().any(|r| {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        let prompt = body["messages"][0]["content"].as_str().unwrap_or("");
        body["model"] == "judge"
            && prompt.contains("**2026-01-05 10:45:00** myao:")
            && prompt.contains(REPLY)
    });
    assert!(later, "a later judgment prompt shows the bot's reply");
}

/// Memories that repeat what they were told, as real ones do: the plan of
/// the private channel shows up in every memory written from it.
struct Echo;

const SECRET: &str = "surprise party";

impl Respond for Echo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).expect("json");
        let prompt = body["messages"][0]["content"].as_str().expect("a prompt");
        let text = match body["model"].as_str().expect("a model") {
            "judge" => {
                json!({"should_respond": false, "confidence": 0.9, "reason": "quiet"}).to_string()
            }
            "writer" => "にゃ".to_owned(),
            _ => {
                let memory = if prompt.contains(SECRET) {
                    format!("- 2026-01-06 the {SECRET} plan")
                } else {
                    "- 2026-01-06 いろいろ".to_owned()
                };
                // A channel's digest answers in JSON.
                if prompt.contains("## 課題: チャンネルの記憶の更新") {
                    json!({"channel": memory, "threads": {}, "facts": []}).to_string()
                } else {
                    memory
                }
            }
        };
        completion(&text)
    }
}

#[tokio::test]
async fn a_private_channel_of_the_export_stays_in_its_own_prompts() {
    // groups.json lists #bob-surprise, private: its plan must never reach
    // a prompt of #general, #random or #dev, nor the workspace memory.
    let (server, base) = llm_stub(Echo).await;
    let rec = replay_example(
        &[],
        &[
            ("MYAO_LLM_BASE_URL", &base),
            ("MYAO_JUDGMENT_MODEL", "judge"),
            ("MYAO_RESPONSE_MODEL", "writer"),
            ("MYAO_MEMORY_MODEL", "memo"),
            ("MYAO_LLM_MAX_RETRIES", "0"),
        ],
    )
    .await;
    assert!(rec.summary.unwrap().memory_count() > 0);
    let prompts: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    let own = |p: &String| {
        p.contains("現在、あなたは #bob-surprise にいます")
            || p.contains("現在は、#bob-surprise チャンネルにいます")
            || p.contains("#bob-surprise の")
    };
    let (inside, outside): (Vec<&String>, Vec<&String>) = prompts.iter().partition(|p| own(p));
    assert!(
        inside.iter().any(|p| p.contains("the surprise party plan")),
        "the private channel's own memories come back to it"
    );
    assert!(!outside.is_empty());
    for p in outside {
        assert!(
            !p.contains(SECRET) && !p.contains("bob-surprise"),
            "a prompt outside #bob-surprise knows of it:\n{p}"
        );
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A minimal export with one channel and the given day file.
fn tiny(day: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "users.json", r#"[{"id": "U1", "name": "ann"}]"#);
    write(
        dir.path(),
        "channels.json",
        r#"[{"id": "C1", "name": "general"}]"#,
    );
    write(dir.path(), "general/2026-01-05.json", day);
    dir
}

fn read_error(dir: &Path) -> String {
    match export::read(dir, &Filter::default()) {
        Ok(_) => panic!("{} read without an error", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_export_files_are_named_with_what_is_wrong() {
    let day = "general/2026-01-05.json";
    for (content, problem) in [
        ("[{\"type\": \"message\",", "not valid JSON"),
        (
            "{\"messages\": []}",
            "expected a JSON array, found an object",
        ),
        ("[5]", "message 0 is not a JSON object"),
        (
            r#"[{"type": "message", "user": "U1", "text": "hi", "ts": "1767603612.000100"},
                {"type": "message", "user": "U1", "text": "no time"}]"#,
            "message 1 has no \"ts\"",
        ),
        (
            r#"[{"type": "message", "user": "U1", "text": "x", "ts": "yesterday"}]"#,
            "message 0: timestamp \"yesterday\"",
        ),
        (
            r#"[{"type": "message", "user": "not a user", "text": "x", "ts": "1767603612.000100"}]"#,
            "message 0 (ts 1767603612.000100): the payload has a bad user",
        ),
        (
            r#"[{"type": "message", "text": "who?", "ts": "1767603612.000100"}]"#,
            "the payload has no user",
        ),
    ] {
        let dir = tiny(content);
        let e = read_error(dir.path());
        assert!(e.contains(day), "{e}");
        assert!(e.contains(problem), "{content}: {e}");
    }

    let dir = tiny("[]");
    std::fs::remove_file(dir.path().join("channels.json")).unwrap();
    let e = read_error(dir.path());
    assert!(e.contains("channels.json: missing"), "{e}");

    let dir = tiny("[]");
    write(dir.path(), "channels.json", r#"[{"id": "C1"}]"#);
    assert!(read_error(dir.path()).contains("channels.json: channel 0: no \"name\""));

    let dir = tiny("[]");
    write(dir.path(), "users.json", r#"{"users": []}"#);
    assert!(read_error(dir.path()).contains("users.json: expected a JSON array"));

    let dir = tiny("[]");
    let e = export::read(
        dir.path(),
        &Filter {
            channels: vec!["nope".into()],
            ..Filter::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("no channel named \"nope\"") && e.contains("general"),
        "{e}"
    );

    let missing = dir.path().join("nowhere");
    assert!(read_error(&missing).contains("no such file or folder"));
    let not_zip = dir.path().join("export.zip");
    std::fs::write(&not_zip, "not a zip").unwrap();
    assert!(read_error(&not_zip).contains("neither a folder nor a readable zip"));
}

#[tokio::test]
async fn unknown_subtypes_are_skipped_and_counted() {
    let dir = tiny(
        r#"[
        {"type": "message", "user": "U1", "text": "hello", "ts": "1767603612.000100"},
        {"type": "message", "subtype": "something_new", "user": "U1", "text": "?", "ts": "1767603613.000100"},
        {"type": "message", "subtype": "something_new", "ts": "1767603614.000100"},
        {"type": "message", "subtype": "channel_join", "user": "U1", "text": "joined", "ts": "1767603615.000100"},
        {"type": "reaction_added", "user": "U1", "ts": "1767603616.000100"}
    ]"#,
    );
    let export = export::read(dir.path(), &Filter::default()).unwrap();
    let mut rec = Recorder::default();
    let s = replay::run(
        &export,
        replay::Options::dry_run(myao_domain::Settings::default()),
        &mut rec,
    )
    .await
    .unwrap();
    assert_eq!(s.messages, 1);
    assert_eq!(s.skipped.get("message subtype something_new"), Some(&2));
    assert_eq!(s.skipped.get("message subtype channel_join"), Some(&1));
    assert_eq!(s.skipped.get("event type reaction_added"), Some(&1));
    assert_eq!(s.skipped_count(), 4);
}

#[tokio::test]
async fn a_zip_of_the_export_reads_like_its_folder_and_filters_apply() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let zip_path = dir.path().join("export.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    let root = example();
    for entry in walk(&root) {
        let rel = entry
            .strip_prefix(&root)
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        // Exports are often zipped with their folder.
        zip.start_file(format!("Acme Slack export/{rel}"), options)
            .unwrap();
        zip.write_all(&std::fs::read(&entry).unwrap()).unwrap();
    }
    zip.finish().unwrap();

    let folder = export::read(&root, &Filter::default()).unwrap();
    let zipped = export::read(&zip_path, &Filter::default()).unwrap();
    assert_eq!(folder.entries, zipped.entries);
    assert_eq!(folder.users, zipped.users);
    assert_eq!(folder.entries.len(), 56);

    let filter = Filter {
        channels: vec!["#dev".into()],
        from: chrono::NaiveDate::from_ymd_opt(2026, 1, 6),
        to: chrono::NaiveDate::from_ymd_opt(2026, 1, 6),
        tz: None,
    };
    let some = export::read(&zip_path, &filter).unwrap();
    assert_eq!(some.channels.len(), 1);
    assert_eq!(some.entries.len(), 7);
    assert!(some.entries.iter().all(
        |e| e.channel.as_str() == "C0DEV" && e.time().date_naive().to_string() == "2026-01-06"
    ));

    let e = export::read(
        &zip_path,
        &Filter {
            channels: vec!["nope".into()],
            ..Filter::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("export.zip:Acme Slack export/channels.json"),
        "{e}"
    );
}

#[test]
fn an_oversized_zip_entry_is_refused_by_name() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let zip_path = dir.path().join("export.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("users.json", options).unwrap();
    zip.write_all(br#"[{"id": "U1", "name": "ann"}]"#).unwrap();
    zip.start_file("channels.json", options).unwrap();
    zip.write_all(br#"[{"id": "C1", "name": "general"}]"#)
        .unwrap();
    // Valid JSON, one byte over the cap once inflated: blanks in an array.
    zip.start_file("general/2026-01-05.json", options).unwrap();
    let cap = usize::try_from(export::MAX_ZIP_ENTRY_BYTES).unwrap();
    let blanks = vec![b' '; 1 << 20];
    zip.write_all(b"[").unwrap();
    let mut written = 1;
    while written < cap - 1 {
        let n = blanks.len().min(cap - 1 - written);
        zip.write_all(&blanks[..n]).unwrap();
        written += n;
    }
    zip.write_all(b" ]").unwrap();
    zip.finish().unwrap();

    let e = export::read(&zip_path, &Filter::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("export.zip:general/2026-01-05.json"), "{e}");
    assert!(e.contains("more than 64 MiB uncompressed"), "{e}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}
