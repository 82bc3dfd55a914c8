//! Answers like a person: an emoji reaction, a short word or a full reply,
//! over the real judgment and response code, DynamoDB on the emulator, and
//! the LLM and Slack stubs (`reactions.add`, `emoji.list`).

use chrono::Duration;
use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::Outcome;
use myao_core::ports::Messages;
use myao_domain::routing::Route;
use myao_domain::rules::{Decision, Gate};
use myao_domain::{EmojiName, Job, JudgmentJob, Reply, ResponseJob, Settings, Ts};
use myao_services::jobs::JobOutcome;
use myao_services::judgment::JudgmentOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{message, ts, verdict_of, Bed, PromptKind, ALICE, BOB, BOT, GENERAL};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(tweak).await
}

fn judgment(newest_ts: Ts) -> Job {
    Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts,
    })
}

const NEWS: &str = "we shipped the new release to everyone";

/// Seeds Bob's morning and Alice's news, judges the top level with the
/// LLM answering `answer`, and runs the response job it makes.
async fn judged_and_answered(bed: &Bed<DynamoStore>, answer: String) -> Vec<(Job, JobOutcome)> {
    bed.seed(&[
        message(GENERAL, BOB, ts(-400), None, "morning"),
        message(GENERAL, ALICE, ts(-300), None, NEWS),
    ])
    .await;
    bed.script.set_judgment(answer);
    let outcome = bed.run(&judgment(ts(-300))).await;
    assert!(
        matches!(
            outcome,
            JobOutcome::Judgment(JudgmentOutcome::Respond { .. })
        ),
        "{outcome:?}"
    );
    bed.run_due().await
}

fn reaction_names(reactions: &[Value]) -> Vec<&str> {
    reactions
        .iter()
        .map(|r| r["name"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_reaction_verdict_reacts_once_and_calls_no_reply_model() {
    let bed = bed(|_| {}).await;
    let done = judged_and_answered(&bed, verdict_of("reaction", Some(":tada:"))).await;

    assert_eq!(done.len(), 1, "{done:?}");
    let (job, outcome) = &done[0];
    assert!(
        matches!(
            outcome,
            JobOutcome::Response(ResponseOutcome::Reacted { ts: on, emoji })
                if *on == ts(-300) && emoji.as_str() == "tada"
        ),
        "{outcome:?}"
    );
    let reactions = bed.reactions().await;
    assert_eq!(
        reactions,
        vec![json!({"channel": GENERAL, "timestamp": ts(-300).to_string(), "name": "tada"})]
    );
    assert!(bed.posts().await.is_empty(), "no message posted");
    assert!(
        bed.llm_calls_of(PromptKind::Response).await.is_empty(),
        "no reply model call"
    );

    // Delivered twice: reacted once.
    let again = bed.run(job).await;
    assert!(
        matches!(again, JobOutcome::Response(ResponseOutcome::AlreadyDone)),
        "{again:?}"
    );
    assert_eq!(bed.reactions().await.len(), 1);

    // The reaction is stored with the message: the next judgment sees it
    // and holds, as after the bot's own message.
    let stored = bed
        .store
        .get_message(&channel(GENERAL), ts(-300))
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.bot_reaction, EmojiName::parse("tada").ok());
    let next = bed.run(&judgment(ts(-300))).await;
    assert_eq!(
        next,
        JobOutcome::Judgment(JudgmentOutcome::Held(Gate::BotSpokeLast))
    );
}

#[tokio::test]
async fn a_short_verdict_posts_one_short_reply_within_its_limit() {
    let bed = bed(|s| s.short_max_tokens = 33).await;
    bed.script.set_reply("おめでとう！");
    let done = judged_and_answered(&bed, verdict_of("short", None)).await;

    assert!(
        matches!(
            &done[..],
            [(
                Job::Response(ResponseJob {
                    reply: Reply::Short,
                    ..
                }),
                JobOutcome::Response(ResponseOutcome::Posted { .. })
            )]
        ),
        "{done:?}"
    );
    assert_eq!(bed.posts().await.len(), 1);
    let calls = bed.llm_calls_of(PromptKind::Response).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].body["max_tokens"], json!(33));
    assert!(
        calls[0]
            .system
            .contains("一言だけ、短い一文で返答してください"),
        "the short instruction is in the prompt"
    );
    assert!(bed.reactions().await.is_empty());
}

#[tokio::test]
async fn an_emoji_the_workspace_lacks_falls_back_to_the_default() {
    let bed = bed(|s| s.default_reaction = EmojiName::parse("eyes").expect("emoji")).await;
    // Valid as a name, but neither standard nor custom here.
    judged_and_answered(&bed, verdict_of("reaction", Some("rainbow-unicorn"))).await;
    assert_eq!(reaction_names(&bed.reactions().await), vec!["eyes"]);

    // A custom emoji of the workspace is used as chosen.
    let bed = self::bed(|_| {}).await;
    judged_and_answered(&bed, verdict_of("reaction", Some("party-parrot"))).await;
    assert_eq!(reaction_names(&bed.reactions().await), vec!["party-parrot"]);
}

#[tokio::test]
async fn without_the_emoji_list_slacks_invalid_name_falls_back_to_the_default() {
    let bed = bed(|_| {}).await;
    // No `emoji:read` scope: the list is refused.
    Mock::given(method("GET"))
        .and(path("/api/emoji.list"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": false, "error": "missing_scope"})),
        )
        .with_priority(1)
        .mount(&bed.slack_server)
        .await;
    let done = judged_and_answered(&bed, verdict_of("reaction", Some("rainbow-unicorn"))).await;

    // Tried as chosen, refused as `invalid_name`, then the default.
    assert_eq!(
        reaction_names(&bed.reactions().await),
        vec!["rainbow-unicorn", "+1"]
    );
    assert!(
        matches!(
            &done[0].1,
            JobOutcome::Response(ResponseOutcome::Reacted { emoji, .. }) if emoji.as_str() == "+1"
        ),
        "{done:?}"
    );
}

#[tokio::test]
async fn a_plain_thanks_to_the_bot_gets_a_reaction_and_no_llm_call() {
    let bed = bed(|_| {}).await;
    let outcome = bed
        .deliver(json!({
            "type": "message", "channel": GENERAL, "channel_type": "channel",
            "user": ALICE, "text": format!("<@{BOT}> thanks!"), "ts": ts(0).to_string(),
        }))
        .await;
    let Outcome::Stored {
        routed: Route::RespondNow(job),
    } = outcome
    else {
        panic!("a mention is answered now: {outcome:?}");
    };
    assert!(
        matches!(&job, Job::Response(ResponseJob { reply: Reply::Reaction { emoji }, mention: true, .. }) if emoji.as_str() == "+1"),
        "{job:?}"
    );
    let done = bed.run_due().await;
    assert!(
        matches!(
            &done[..],
            [(_, JobOutcome::Response(ResponseOutcome::Reacted { .. }))]
        ),
        "{done:?}"
    );
    assert_eq!(reaction_names(&bed.reactions().await), vec!["+1"]);
    assert!(bed.llm_calls().await.is_empty(), "no LLM call at all");
    assert!(bed.posts().await.is_empty());

    // A mention that asks something gets words.
    let outcome = bed
        .deliver(json!({
            "type": "message", "channel": GENERAL, "channel_type": "channel",
            "user": ALICE, "text": format!("<@{BOT}> thanks! and how do I rerun it?"),
            "ts": ts(1).to_string(),
        }))
        .await;
    assert!(
        matches!(
            outcome,
            Outcome::Stored {
                routed: Route::RespondNow(Job::Response(ResponseJob {
                    reply: Reply::Full,
                    ..
                }))
            }
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_thanks_after_the_bots_answer_earns_a_reaction_from_the_rule_stage() {
    // The product's thresholds: the rule stage decides.
    let bed = bed(|s| s.rule_thresholds = None).await;
    bed.seed(&[
        message(
            GENERAL,
            ALICE,
            ts(-900),
            None,
            "how do I clear the build cache?",
        ),
        message(GENERAL, BOT, ts(-800), None, "run make clean first"),
        message(GENERAL, ALICE, ts(-300), None, "that worked, thank you!"),
    ])
    .await;
    let outcome = bed.run(&judgment(ts(-300))).await;
    let JobOutcome::Judgment(JudgmentOutcome::Sure { ruling, .. }) = &outcome else {
        panic!("expected the rule stage's answer, got {outcome:?}");
    };
    assert_eq!(ruling.decision, Decision::React);
    // After a person's moment (10-30 s).
    bed.clock.advance(Duration::seconds(30));
    let done = bed.run_due().await;
    assert!(
        matches!(
            &done[..],
            [(_, JobOutcome::Response(ResponseOutcome::Reacted { ts: on, .. }))] if *on == ts(-300)
        ),
        "{done:?}"
    );
    assert!(bed.llm_calls().await.is_empty(), "no LLM call");
    assert!(bed.posts().await.is_empty());
}

#[tokio::test]
async fn a_reaction_counts_for_the_cooldown_like_a_reply() {
    let bed = bed(|s| s.cooldown_seconds = 120).await;
    let mut reacted = message(GENERAL, ALICE, ts(-100), None, NEWS);
    reacted.bot_reaction = EmojiName::parse("tada").ok();
    bed.seed(&[
        reacted,
        message(GENERAL, BOB, ts(-50), None, "anyone up for lunch?"),
    ])
    .await;
    // 100 s after the message the bot reacted to: within the cooldown.
    let outcome = bed.run(&judgment(ts(-50))).await;
    assert_eq!(
        outcome,
        JobOutcome::Judgment(JudgmentOutcome::Held(Gate::Cooldown))
    );
}
