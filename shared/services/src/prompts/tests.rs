//! The worked examples of designs extra05b and 08, and every memory
//! template, rendered from the same data and snapshotted: a template change
//! shows up in review.

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;

use super::memory::{ChannelLine, MemoryPrompt, MergeTask, ThreadTask, WindowTask, WorkspaceTask};
use super::*;
use myao_domain::{
    ChannelId, ChannelMemory, ChannelMessages, Context, MemoryKind, Message, Persona, Settings, Ts,
    UserId,
};
use myao_testkit::ids::{channel, ts, user};

fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("valid date")
}

fn message(
    channel: &ChannelId,
    user: &str,
    when: DateTime<Utc>,
    text: &str,
    thread: Option<&str>,
) -> Message {
    Message::new(
        channel.clone(),
        myao_testkit::ids::user(user),
        text,
        Ts::from_datetime(when),
        thread.map(ts),
        false,
    )
}

fn names(pairs: &[(&str, &str)]) -> BTreeMap<UserId, String> {
    pairs
        .iter()
        .map(|(id, name)| (user(id), (*name).to_owned()))
        .collect()
}

/// The "前提データ" of extra05b.
fn seed_judgment_context(target: Option<&str>) -> Context {
    let general = channel("C001");
    let thread = "1709280000.000001";
    let messages = vec![
        message(
            &general,
            "UALICE",
            at(2024, 3, 1, 10, 0),
            "おはよう！",
            None,
        ),
        message(&general, "UBOB", at(2024, 3, 1, 10, 5), "おはよう〜", None),
        message(
            &general,
            "UALICE",
            at(2024, 3, 1, 10, 10),
            "今日のタスク確認しよう",
            Some(thread),
        ),
        message(
            &general,
            "UBOB",
            at(2024, 3, 1, 10, 15),
            "了解、リスト共有するね",
            Some(thread),
        ),
    ];
    Context::new(
        Persona {
            name: "みゃお".into(),
            system_prompt:
                "あなたは「みゃお」という名前の猫キャラクターです。友達のように振る舞います。"
                    .into(),
        },
        ChannelMessages::new(general.clone(), "general", messages),
    )
    .with_workspace_memories(
        Some("- 2024年1月: プロジェクトAが開始された\n- 2024年2月: 新メンバーが参加した".into()),
        Some("- プロジェクトAの進捗確認中\n- 来週のミーティング準備".into()),
    )
    .with_channel_memories(vec![ChannelMemory::new(general, "general").with_memories(
        Some("- チーム全体の連絡に使用\n- 週次報告が行われる".into()),
        Some("- 今週の進捗報告が投稿された\n- 新しいツールの導入検討中".into()),
    )])
    .with_target_thread(target.map(ts))
    .with_user_names(names(&[("UALICE", "alice"), ("UBOB", "bob")]))
}

fn seed_now() -> DateTime<Utc> {
    at(2024, 3, 1, 12, 0)
}

#[test]
fn judgment_of_a_thread_matches_the_seed_example() {
    let view = ContextView::new(
        &seed_judgment_context(Some("1709280000.000001")),
        seed_now(),
        Tz::UTC,
        20,
    );
    let prompt = judgment_prompt(&view).expect("renders");
    insta::assert_snapshot!("judgment_thread", prompt);
}

#[test]
fn judgment_of_the_top_level_matches_the_seed_example() {
    let view = ContextView::new(&seed_judgment_context(None), seed_now(), Tz::UTC, 20);
    let prompt = judgment_prompt(&view).expect("renders");
    insta::assert_snapshot!("judgment_top_level", prompt);
}

#[test]
fn a_message_the_bot_reacted_to_says_so_in_the_judgment() {
    let general = channel("C001");
    let mut shipped = message(
        &general,
        "UALICE",
        at(2024, 3, 1, 11, 50),
        "リリースできた！",
        None,
    );
    shipped.bot_reaction = Some(myao_domain::EmojiName::parse("tada").expect("emoji"));
    let context = Context::new(
        Persona {
            name: "みゃお".into(),
            system_prompt: "あなたは「みゃお」です。".into(),
        },
        ChannelMessages::new(general, "general", vec![shipped]),
    )
    .with_user_names(names(&[("UALICE", "alice")]));
    let view = ContextView::new(&context, seed_now(), Tz::UTC, 20);
    let prompt = judgment_prompt(&view).expect("renders");
    insta::assert_snapshot!("judgment_reacted", prompt);
    let at = positions(
        &prompt,
        &["リリースできた！", "（あなたが :tada: でリアクション済み）"],
    );
    assert!(at[0] < at[1], "the note follows its message");
}

#[test]
fn a_short_answer_asks_for_one_sentence_within_its_token_limit() {
    let settings = Settings {
        short_max_tokens: 42,
        ..Settings::default()
    };
    let context = seed_full_memory_context();
    let short = ContextPrompt::ShortResponse
        .request(&context, &settings, seed_now())
        .expect("renders");
    let full = ContextPrompt::Response
        .request(&context, &settings, seed_now())
        .expect("renders");
    assert_eq!(short.max_tokens, Some(42));
    assert_eq!(full.max_tokens, None);
    assert!(short
        .system
        .contains("一言だけ、短い一文で返答してください"));
    assert!(!full.system.contains("一言だけ、短い一文で返答してください"));
    insta::assert_snapshot!("response_short", short.system);
}

/// The "完全な記憶あり" example of design 08.
fn seed_full_memory_context() -> Context {
    let general = channel("C001");
    let random = channel("C002");
    let dev = channel("C003");
    let thread = "1234567890.000000";
    let messages = vec![
        message(
            &general,
            "U1",
            at(2024, 1, 1, 12, 0),
            "メッセージ1",
            Some(thread),
        ),
        message(
            &general,
            "U2",
            at(2024, 1, 1, 12, 1),
            "メッセージ2",
            Some(thread),
        ),
    ];
    Context::new(
        Persona {
            name: "みゃお".into(),
            system_prompt: "{persona.system_prompt}".into(),
        },
        ChannelMessages::new(general.clone(), "general", messages),
    )
    .with_workspace_memories(
        Some("{workspace_long_term_memory}".into()),
        Some("{workspace_short_term_memory}".into()),
    )
    .with_channel_memories(vec![
        ChannelMemory::new(general, "general").with_memories(
            Some("{general_long_term_memory}".into()),
            Some("{general_short_term_memory}".into()),
        ),
        ChannelMemory::new(random, "random")
            .with_memories(Some("{random_long_term_memory}".into()), None),
        ChannelMemory::new(dev, "dev"),
    ])
    .with_thread_memories(BTreeMap::from([
        (ts("1234567890.000000"), "{thread_summary_1}".to_owned()),
        (ts("1234567891.000000"), "{thread_summary_2}".to_owned()),
    ]))
    .with_target_thread(Some(ts(thread)))
    .with_user_names(names(&[("U1", "user1"), ("U2", "user2")]))
}

#[test]
fn response_with_full_memory_matches_the_seed_example() {
    let view = ContextView::new(&seed_full_memory_context(), seed_now(), Tz::UTC, 20);
    let prompt = response_prompt(&view).expect("renders");
    insta::assert_snapshot!("response_full_memory", prompt);
}

#[test]
fn response_without_memory_matches_the_seed_example() {
    let general = channel("C001");
    let context = Context::new(
        Persona {
            name: "みゃお".into(),
            system_prompt: "{persona.system_prompt}".into(),
        },
        ChannelMessages::new(
            general.clone(),
            "general",
            vec![message(
                &general,
                "U1",
                at(2024, 1, 1, 12, 0),
                "メッセージ1",
                None,
            )],
        ),
    )
    .with_user_names(names(&[("U1", "user1")]));
    let view = ContextView::new(&context, seed_now(), Tz::UTC, 20);
    let prompt = response_prompt(&view).expect("renders");
    insta::assert_snapshot!("response_no_memory", prompt);
    assert!(!prompt.contains("## 記憶"));
    assert!(!prompt.contains("## チャンネル情報"));
}

/// The index of each heading in `text`, failing if one is missing.
fn positions(text: &str, headings: &[&str]) -> Vec<usize> {
    headings
        .iter()
        .map(|h| {
            text.find(h)
                .unwrap_or_else(|| panic!("{h:?} missing from:\n{text}"))
        })
        .collect()
}

#[test]
fn response_sections_go_from_broad_to_narrow() {
    let view = ContextView::new(&seed_full_memory_context(), seed_now(), Tz::UTC, 20);
    let prompt = response_prompt(&view).expect("renders");
    let p = positions(
        &prompt,
        &[
            "{persona.system_prompt}",
            "### ワークスペースの歴史",
            "### ワークスペースの最近の出来事",
            "## チャンネル情報",
            "## 各チャンネルの記憶",
            "## 現在のスレッド一覧",
            "## 現在の会話",
            "上記の情報をもとに",
        ],
    );
    assert!(p.windows(2).all(|w| w[0] < w[1]), "out of order: {p:?}");
    // a channel without memories is listed but has no memory section
    assert!(prompt.contains("- #dev"));
    assert!(!prompt.contains("### #dev"));
}

#[test]
fn judgment_puts_the_judged_thread_last_and_names_the_persona() {
    let view = ContextView::new(
        &seed_judgment_context(Some("1709280000.000001")),
        seed_now(),
        Tz::UTC,
        20,
    );
    let prompt = judgment_prompt(&view).expect("renders");
    let p = positions(
        &prompt,
        &[
            "## 記憶",
            "## チャンネル情報",
            "## 現在の会話",
            "### トップレベル",
            "## 判定対象スレッド",
            "現在時刻",
        ],
    );
    assert!(p.windows(2).all(|w| w[0] < w[1]), "out of order: {p:?}");
    assert!(prompt.contains("みゃおとして応答すべきか"));
    assert!(prompt.contains("自分（みゃお）が最後に発言している場合"));
    assert!(prompt.contains("\"delay_seconds\""));
    // the judged thread is not repeated among the other threads
    assert_eq!(prompt.matches("今日のタスク確認しよう").count(), 1);
}

#[test]
fn times_follow_the_configured_zone() {
    let view = ContextView::new(
        &seed_judgment_context(None),
        seed_now(),
        chrono_tz::Asia::Tokyo,
        20,
    );
    let prompt = judgment_prompt(&view).expect("renders");
    assert!(
        prompt.contains("**2024-03-01 19:00:00** alice:"),
        "{prompt}"
    );
    assert!(prompt.contains("現在時刻: 2024-03-01 21:00:00 JST"));
}

#[test]
fn the_target_conversation_is_cut_to_the_message_limit() {
    let view = ContextView::new(&seed_judgment_context(None), seed_now(), Tz::UTC, 1);
    assert_eq!(view.target_messages.len(), 1);
    assert_eq!(view.target_messages[0].text, "おはよう〜");
}

#[test]
fn mentions_inside_text_show_names() {
    let general = channel("C001");
    let context = Context::new(
        Persona {
            name: "myao".into(),
            system_prompt: "cat".into(),
        },
        ChannelMessages::new(
            general.clone(),
            "general",
            vec![message(
                &general,
                "U1",
                at(2024, 1, 1, 12, 0),
                "<@U2> &amp; <@UBOT> ping",
                None,
            )],
        ),
    )
    .with_user_names(names(&[("U1", "alice"), ("U2", "bob"), ("UBOT", "myao")]));
    let view = ContextView::new(&context, seed_now(), Tz::UTC, 20);
    assert_eq!(view.target_messages[0].text, "@bob & @myao ping");
    assert_eq!(view.target_messages[0].user, "alice");
}

#[test]
fn a_long_thread_keeps_its_root_within_the_message_limit() {
    let general = channel("C001");
    let root = at(2024, 1, 1, 9, 0);
    let root_ts = Ts::from_datetime(root).to_string();
    let mut messages = vec![message(
        &general,
        "U1",
        root,
        "what is the thread about",
        None,
    )];
    for i in 0..30 {
        messages.push(message(
            &general,
            "U2",
            at(2024, 1, 1, 10, i),
            &format!("reply {i}"),
            Some(&root_ts),
        ));
    }
    let context = Context::new(
        Persona {
            name: "myao".into(),
            system_prompt: "cat".into(),
        },
        ChannelMessages::new(general, "general", messages),
    )
    .with_target_thread(Some(ts(&root_ts)));
    let view = ContextView::new(&context, seed_now(), Tz::UTC, 5);
    let texts: Vec<&str> = view
        .target_messages
        .iter()
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "what is the thread about",
            "reply 26",
            "reply 27",
            "reply 28",
            "reply 29"
        ]
    );
}

#[test]
fn the_judged_top_level_is_cut_to_the_message_limit_too() {
    let view = ContextView::new(&seed_judgment_context(None), seed_now(), Tz::UTC, 1);
    let prompt = judgment_prompt(&view).expect("renders");
    assert!(
        !prompt.contains("おはよう！"),
        "the older top-level message is cut:\n{prompt}"
    );
    assert!(prompt.contains("おはよう〜"));
}

/// A budget cuts, in order: other channels' memories (least recently
/// active first), thread summaries (the judged thread's last), then the
/// oldest messages outside the judged conversation; never the judged
/// conversation nor the persona.
#[test]
fn a_prompt_over_budget_leaves_out_the_least_needed_first() {
    let c = channel("C001");
    let root = "1709280000.000000";
    let big = |tag: &str| format!("{tag} {}", "word ".repeat(400));
    let other_root = "1709280000.500000";
    let at_ts = |at: &str, user: &str, text: String, thread: Option<&str>| {
        myao_testkit::message::message(c.as_str(), user, at, thread, &text)
    };
    let messages = vec![
        at_ts(root, "UALICE", big("JUDGED-ROOT"), None),
        at_ts("1709280000.100000", "UALICE", big("OLD-TOP"), None),
        at_ts(other_root, "UBOB", big("OTHER-ROOT"), None),
        at_ts(
            "1709280600.000000",
            "UBOB",
            big("OTHER-THREAD"),
            Some(other_root),
        ),
        at_ts("1709281200.000000", "UBOB", big("REPLY"), Some(root)),
    ];
    let memories = ["RECENT", "STALE", "MIDDLE"]
        .iter()
        .zip([3, 1, 2])
        .map(|(tag, hour)| {
            ChannelMemory::new(
                ChannelId::parse(&format!("C{tag}")).unwrap(),
                tag.to_lowercase(),
            )
            .with_memories(Some(big(&format!("MEM-{tag}"))), None)
            .with_last_active(at(2024, 3, 1, hour, 0))
        })
        .chain(std::iter::once(
            ChannelMemory::new(c.clone(), "general").with_memories(Some(big("MEM-OWN")), None),
        ))
        .collect();
    let threads = BTreeMap::from([
        (ts(other_root), big("SUM-OTHER")),
        (ts(root), big("SUM-JUDGED")),
    ]);
    let context = Context::new(
        Persona {
            name: "myao".into(),
            system_prompt: "PERSONA".into(),
        },
        ChannelMessages::new(c.clone(), "general", messages),
    )
    .with_channel_memories(memories)
    .with_thread_memories(threads)
    .with_target_thread(Some(ts(root)));
    let view = ContextView::new(&context, at(2024, 3, 1, 12, 0), Tz::UTC, 20);
    let full = judgment_prompt(&view).unwrap();
    let order = [
        "MEM-STALE",
        "MEM-MIDDLE",
        "MEM-RECENT",
        "SUM-OTHER",
        "SUM-JUDGED",
        "OLD-TOP",
    ];
    for tag in order
        .iter()
        .chain(&["MEM-OWN", "JUDGED-ROOT", "REPLY", "PERSONA"])
    {
        assert!(full.contains(tag), "{tag} in the full prompt");
    }
    // Shrinking budgets: each cut takes the next in order, never the kept.
    let full_tokens = myao_domain::budget::estimate_tokens(&full);
    let mut gone = 0;
    for budget in (1_000..full_tokens).rev().step_by(50) {
        let (prompt, cuts) = view.clone().fit(budget, judgment_prompt).unwrap();
        let now_gone = order.iter().take_while(|t| !prompt.contains(**t)).count();
        assert!(now_gone >= gone, "cut in order at {budget}: {cuts:?}");
        for later in &order[now_gone..] {
            assert!(prompt.contains(later), "{later} kept while earlier remain");
        }
        gone = now_gone;
        for kept in ["MEM-OWN", "JUDGED-ROOT", "REPLY", "PERSONA"] {
            assert!(prompt.contains(kept), "{kept} is never cut");
        }
        assert!(cuts.over || myao_domain::budget::estimate_tokens(&prompt) <= budget);
    }
    assert_eq!(gone, order.len(), "at the smallest budget all were cut");
}

/// The reply prompt shows only the answered conversation: leaving the rest
/// of the channel's messages out of its view changes nothing it renders.
#[test]
fn the_reply_view_leaves_out_only_what_the_reply_prompt_never_shows() {
    for target in [None, Some("1709280000.000001")] {
        let context = seed_judgment_context(target);
        let view = ContextView::new(&context, at(2024, 3, 1, 12, 0), Tz::UTC, 20);
        let full = response_prompt(&view).expect("prompt");
        let reply = view.for_reply();
        assert!(reply.top_level_messages.is_empty() && reply.threads.is_empty());
        assert_eq!(response_prompt(&reply).expect("prompt"), full);
    }
}

fn memory_settings() -> Settings {
    Settings {
        persona_name: "みゃお".into(),
        persona_system_prompt: "あなたは「みゃお」という名前の猫キャラクターです。".into(),
        ..Settings::default()
    }
}

fn memory_messages() -> Vec<MessageView> {
    vec![
        MessageView {
            time: "2024-03-01 10:10:00".into(),
            user: "alice".into(),
            text: "今日のタスク確認しよう".into(),
            reaction: None,
        },
        MessageView {
            time: "2024-03-01 10:15:00".into(),
            user: "bob".into(),
            text: "了解、リスト共有するね".into(),
            reaction: None,
        },
    ]
}

/// Every memory template rendered from fixed data and snapshotted, like
/// the judgment and response prompts: a template change shows in review.
#[test]
fn memory_prompts_are_snapshotted() {
    let s = memory_settings();
    let now = DateTime::<Utc>::from_timestamp(1_709_294_400, 0).unwrap();
    let thread = ThreadTask {
        channel_name: "general".into(),
        thread_ts: "1709280000.000001".into(),
        previous: Some("- 2024-03-01 alice がタスク確認を提案した".into()),
        messages: memory_messages(),
    };
    let window = WindowTask {
        channel_name: "general".into(),
        window_hours: 24,
        messages: memory_messages(),
    };
    let merge = MergeTask {
        channel_name: "general".into(),
        previous: Some("- 2024-02-20 週次報告が始まった".into()),
        short_term: "- 2024-03-01 タスクのリストが共有された".into(),
    };
    let first_merge = MergeTask {
        channel_name: "general".into(),
        previous: None,
        short_term: "- 2024-03-01 タスクのリストが共有された".into(),
    };
    let workspace = WorkspaceTask {
        channels: vec![
            ChannelLine {
                name: "general".into(),
                memory: "- 2024-03-01 タスクのリストが共有された".into(),
                last_active: None,
            },
            ChannelLine {
                name: "random".into(),
                memory: "- 2024-03-01 猫の写真が投稿された".into(),
                last_active: None,
            },
        ],
    };
    let prompt = |kind, template| MemoryPrompt {
        settings: &s,
        now,
        kind,
        template,
    };
    let (short, long) = (MemoryKind::Short, MemoryKind::Long);
    let cases: Vec<(&str, String)> = vec![
        (
            "memory_thread_short",
            prompt(short, "memory_thread_short.j2")
                .render(&thread)
                .unwrap(),
        ),
        (
            "memory_channel_short",
            prompt(short, "memory_channel_short.j2")
                .render(&window)
                .unwrap(),
        ),
        (
            "memory_channel_long",
            prompt(long, "memory_channel_long.j2")
                .render(&merge)
                .unwrap(),
        ),
        (
            "memory_channel_long_first",
            prompt(long, "memory_channel_long.j2")
                .render(&first_merge)
                .unwrap(),
        ),
        (
            "memory_workspace_short",
            prompt(short, "memory_workspace_short.j2")
                .render(&workspace)
                .unwrap(),
        ),
        (
            "memory_workspace_long",
            prompt(long, "memory_workspace_long.j2")
                .render(&merge)
                .unwrap(),
        ),
    ];
    for (name, prompt) in cases {
        assert!(prompt.contains("YYYY-MM-DD"), "{name}: every item is dated");
        insta::assert_snapshot!(name, prompt);
    }
}

/// A channel's digest, asking for everything (its short-term and long-term
/// memories, two threads' summaries, the facts of its new messages), and
/// for threads alone: snapshotted, JSON, with room for its answer.
#[test]
fn the_digest_prompt_is_snapshotted() {
    use crate::prompts::memory::{
        digest_request, DigestLine, DigestSketch, DigestTask, DigestThread,
    };
    let s = memory_settings();
    let now = DateTime::<Utc>::from_timestamp(1_709_294_400, 0).unwrap();
    let lines: Vec<DigestLine> = memory_messages()
        .into_iter()
        .enumerate()
        .map(|(i, message)| DigestLine {
            n: i + 1,
            message,
            thread: (i > 0).then(|| "1709280000.000001".to_owned()),
            new: i > 0,
            keep: false,
            covered: i == 0,
        })
        .collect();
    let full = DigestTask {
        channel_name: "general".into(),
        window_hours: 24,
        ask_channel: true,
        ask_long: true,
        ask_facts: true,
        previous_long: Some("- 2024-02-20 週次報告が始まった".into()),
        previous_short: Some("- 2024-02-29 ビルドが遅いと話題になった".into()),
        threads: vec![
            DigestThread {
                ts: "1709280000.000001".into(),
                previous: Some("- 2024-03-01 alice がタスク確認を提案した".into()),
            },
            DigestThread {
                ts: "1709290000.000001".into(),
                previous: None,
            },
        ],
        sketches: vec![DigestSketch {
            name: "alice".into(),
            tags: vec!["Rust".into(), "ビルド".into()],
            note: "バックエンド担当、ビルドの速さにこだわる".into(),
            last_talk: "CI のキャッシュの設定".into(),
        }],
        messages: lines.clone(),
        strict: false,
    };
    let threads_only = DigestTask {
        ask_channel: false,
        ask_long: false,
        ask_facts: false,
        previous_long: None,
        previous_short: None,
        threads: full.threads[1..].to_vec(),
        sketches: Vec::new(),
        ..full.clone()
    };
    // Asked again after an answer that could not be read (issue 45).
    let strict = DigestTask {
        strict: true,
        ..full.clone()
    };
    for (name, task) in [
        ("memory_digest", &full),
        ("memory_digest_threads", &threads_only),
        ("memory_digest_strict", &strict),
    ] {
        let (request, shown) = digest_request(&s, now, task).unwrap();
        assert_eq!(shown, [1, 2], "{name}: within its budget, every message");
        assert!(request.json, "{name}");
        assert!(request
            .max_tokens
            .is_some_and(|t| t >= s.short_term_max_tokens / 2));
        insta::assert_snapshot!(name, request.system);
    }
}

/// The proactive prompts over one quiet channel: its memories, its people,
/// its shareable facts and its last messages.
fn proactive_view() -> ProactiveView {
    let general = channel("C001");
    let names = names(&[("UALICE", "alice"), ("UBOB", "bob")]);
    let tz = Tz::Asia__Tokyo;
    ProactiveView {
        persona: PersonaView {
            name: "みゃお".into(),
            system_prompt: "あなたは「みゃお」という名前の猫キャラクターです。".into(),
        },
        channel_name: "general".into(),
        long_term: Some("- 2024-02 ボブが大阪への引っ越しを決めた".into()),
        short_term: None,
        people: vec![PersonView {
            name: "bob".into(),
            familiarity: "友達".into(),
            topics: vec!["引っ越し".into()],
            tags: vec!["Rust".into(), "自転車".into()],
            note: Some("バックエンド担当で、週末は自転車に乗る".into()),
            last_talk: Some("大阪の新居の近くのラーメン屋".into()),
        }],
        facts: vec!["ボブは3月に大阪へ引っ越す".into()],
        recent_messages: vec![
            MessageView::new(
                &message(
                    &general,
                    "UBOB",
                    at(2024, 3, 1, 10, 0),
                    "来週引っ越しです",
                    None,
                ),
                &names,
                tz,
            ),
            MessageView::new(
                &message(
                    &general,
                    "UALICE",
                    at(2024, 3, 1, 10, 5),
                    "がんばって！",
                    None,
                ),
                &names,
                tz,
            ),
        ],
        silent_hours: 50,
        current_time: format_now(at(2024, 3, 3, 3, 0), tz),
        topic: None,
    }
}

#[test]
fn proactive_judgment_and_opener() {
    let settings = Settings::default();
    let judged = proactive_view()
        .judgment_request(&settings)
        .expect("renders");
    assert_eq!(judged.role, LlmRole::Judgment);
    assert!(judged.json);
    insta::assert_snapshot!("proactive_judgment", judged.system);
    let post = proactive_view()
        .post_request("ボブの引っ越しがどうだったか", &settings)
        .expect("renders");
    assert_eq!(post.role, LlmRole::Response);
    assert!(!post.json);
    insta::assert_snapshot!("proactive_opener", post.system);
}

#[test]
fn a_proactive_prompt_over_budget_drops_the_oldest_messages_first() {
    let mut view = proactive_view();
    let general = channel("C001");
    let names = names(&[("UBOB", "bob")]);
    for i in 0..200 {
        view.recent_messages.push(MessageView::new(
            &message(
                &general,
                "UBOB",
                at(2024, 3, 1, 11, 0) + chrono::Duration::seconds(i),
                &format!("msg-{i:03} {}", "あ".repeat(100)),
                None,
            ),
            &names,
            Tz::UTC,
        ));
    }
    let settings = Settings {
        judgment_prompt_max_tokens: 2_000,
        ..Settings::default()
    };
    let system = view.judgment_request(&settings).expect("renders").system;
    assert!(myao_domain::budget::estimate_tokens(&system) <= 2_000);
    assert!(system.contains("msg-199"), "the newest stays");
    assert!(!system.contains("msg-000"), "the oldest goes");
    assert!(
        system.contains("ボブは3月に大阪へ引っ越す"),
        "the facts stay"
    );
}

/// A workspace of three channels with memories, seen from `channel` with
/// `messages`, its thread `1234567890.000000` judged.
fn workspace_seen_from(channel: &str, name: &str, messages: Vec<Message>) -> Context {
    let id = |c: &str| ChannelId::parse(c).expect("channel");
    Context::new(
        Persona {
            name: "みゃお".into(),
            system_prompt: "{persona.system_prompt}".into(),
        },
        ChannelMessages::new(id(channel), name, messages),
    )
    .with_workspace_memories(
        Some("{workspace_long_term_memory}".into()),
        Some("{workspace_short_term_memory}".into()),
    )
    .with_channel_memories(vec![
        ChannelMemory::new(id("C001"), "general").with_memories(
            Some("{general_long_term_memory}".into()),
            Some("{general_short_term_memory}".into()),
        ),
        ChannelMemory::new(id("C002"), "random")
            .with_memories(Some("{random_long_term_memory}".into()), None),
    ])
    .with_thread_memories(BTreeMap::from([(
        ts("1234567890.000000"),
        "{thread_summary}".to_owned(),
    )]))
    .with_target_thread(Some(ts("1234567890.000000")))
    .with_user_names(names(&[("U1", "user1"), ("U2", "user2")]))
}

#[test]
fn consecutive_judgment_prompts_begin_with_the_same_stable_part_byte_for_byte() {
    let settings = Settings::default();
    let general = channel("C001");
    let thread = Some("1234567890.000000");
    let said = |minute: u32, user: &str, text: &str| {
        message(&general, user, at(2024, 1, 1, 12, minute), text, thread)
    };
    let before = vec![said(0, "U1", "ビルドが落ちる"), said(1, "U2", "ログある?")];
    let mut after = before.clone();
    after.push(said(6, "U1", "これです"));
    let first = ContextPrompt::Judgment
        .request(
            &workspace_seen_from("C001", "general", before),
            &settings,
            at(2024, 1, 1, 12, 5),
        )
        .expect("renders");
    let second = ContextPrompt::Judgment
        .request(
            &workspace_seen_from("C001", "general", after),
            &settings,
            at(2024, 1, 1, 12, 10),
        )
        .expect("renders");

    assert!(first.stable_prefix > 0);
    let stable = &first.system[..first.stable_prefix];
    assert_eq!(second.system.get(..second.stable_prefix), Some(stable));
    assert_ne!(first.system, second.system);
    insta::assert_snapshot!("stable_prefix", stable);
    // Nothing of the time, the current channel or the conversation.
    for per_call in [
        "12:0",
        "12:1",
        "現在は",
        "現在、あなたは",
        "スレッド",
        "ビルド",
    ] {
        assert!(!stable.contains(per_call), "{per_call} in the stable part");
    }

    // A reply in another channel of the workspace begins with it too.
    let random = channel("C002");
    let elsewhere = ContextPrompt::Response
        .request(
            &workspace_seen_from(
                "C002",
                "random",
                vec![message(
                    &random,
                    "U2",
                    at(2024, 1, 1, 12, 7),
                    "ランチどこ?",
                    None,
                )],
            )
            .with_target_thread(None),
            &settings,
            at(2024, 1, 1, 12, 8),
        )
        .expect("renders");
    assert_eq!(
        elsewhere.system.get(..elsewhere.stable_prefix),
        Some(stable)
    );
}

/// A digest over its budget leaves out what a memory already covers first,
/// then the newest new messages (for the next digest), never an asked
/// thread's root.
#[test]
fn a_digest_over_its_budget_keeps_the_roots_and_the_oldest_new_messages() {
    use crate::prompts::memory::{digest_request, DigestLine, DigestTask};
    let s = Settings {
        memory_prompt_max_tokens: 2_000,
        ..memory_settings()
    };
    let now = DateTime::<Utc>::from_timestamp(1_709_294_400, 0).unwrap();
    let long_text = "ビルドの話。".repeat(60);
    let line = |n: usize, new: bool, keep: bool| DigestLine {
        n,
        message: MessageView {
            time: "2024-03-01 10:00:00".into(),
            user: "alice".into(),
            text: format!("{n}: {long_text}"),
            reaction: None,
        },
        thread: None,
        new,
        keep,
        covered: !new,
    };
    let task = DigestTask {
        channel_name: "general".into(),
        window_hours: 24,
        ask_channel: true,
        ask_long: false,
        ask_facts: false,
        previous_long: None,
        previous_short: None,
        threads: vec![],
        // 1: an asked root, covered; 2, 3: covered; 4-8: new.
        sketches: Vec::new(),
        messages: vec![
            line(1, false, true),
            line(2, false, false),
            line(3, false, false),
            line(4, true, false),
            line(5, true, false),
            line(6, true, false),
            line(7, true, false),
            line(8, true, false),
        ],
        strict: false,
    };
    let (request, shown) = digest_request(&s, now, &task).unwrap();
    assert!(shown.contains(&1), "the root stays: {shown:?}");
    assert!(!shown.contains(&2) && !shown.contains(&3), "{shown:?}");
    assert!(
        shown.contains(&4),
        "the oldest new message stays: {shown:?}"
    );
    assert!(!shown.contains(&8), "the newest waits: {shown:?}");
    let kept_new: Vec<usize> = shown.iter().copied().filter(|n| *n >= 4).collect();
    assert_eq!(
        kept_new,
        (4..4 + kept_new.len()).collect::<Vec<_>>(),
        "a run from the oldest"
    );
    assert!(myao_domain::budget::estimate_tokens(&request.system) <= 2_000);
}
