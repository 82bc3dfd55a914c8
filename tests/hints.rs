//! Takes a hint like a member: a reaction on its post, or words to it, is a
//! label kept per person and post, and tunes that channel's judgments;
//! "not now" mutes its unprompted posts there a while, never its answers
//! to mentions. Over the real ingest, judgment and response code, DynamoDB
//! on the emulator, and the LLM and Slack stubs.

use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::{IgnoreReason, Outcome};
use myao_core::ports::LabelRecords;
use myao_domain::hints::Hint;
use myao_domain::labels::Source;
use myao_domain::rules::{Chattiness, Gate};
use myao_domain::{Job, JudgmentJob, Reply, ResponseJob, Settings, Ts};
use myao_services::jobs::JobOutcome;
use myao_services::judgment::JudgmentOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{message, ts, verdict, Bed, ALICE, BOB, BOT, GENERAL, RANDOM};
use serde_json::{json, Value};

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(tweak).await
}

/// `user`'s reaction `emoji` on the message `on` of `author` in #general.
fn reaction(added: bool, user: &str, emoji: &str, on: Ts, author: &str) -> Value {
    json!({
        "type": if added { "reaction_added" } else { "reaction_removed" },
        "user": user, "reaction": emoji, "item_user": author,
        "item": {"type": "message", "channel": GENERAL, "ts": on.to_string()},
        "event_ts": ts(0).to_string(),
    })
}

fn judgment(ch: &str, newest: i64) -> Job {
    Job::Judgment(JudgmentJob {
        channel: channel(ch),
        thread_ts: None,
        newest_ts: ts(newest),
    })
}

fn mention(newest: i64) -> Job {
    Job::Response(ResponseJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(newest),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

/// The thresholds a judgment of `job` was held to (it must have scored),
/// after checking that its log line, its metric and its ruling say how
/// the hints tuned them.
async fn thresholds_of(bed: &Bed<DynamoStore>, job: &Job) -> (i32, i32) {
    let outcome = bed.run(job).await;
    let JobOutcome::Judgment(judged) = &outcome else {
        panic!("a judgment: {outcome:?}");
    };
    let ruling = judged
        .ruling()
        .unwrap_or_else(|| panic!("scored: {judged:?}"));
    let detail = outcome.metric(job).and_then(|d| d.detail);
    let explained = ruling.explain();
    match ruling.tuned {
        0 => assert!(
            detail.is_none() && !explained.contains("tuned"),
            "{explained}"
        ),
        tuned => {
            assert_eq!(detail, Some(("Tuning", "raised".to_owned())), "{tuned}");
            assert!(
                explained.contains(&format!("tuned={tuned:+}")),
                "{explained}"
            );
        }
    }
    (ruling.thresholds.low, ruling.thresholds.high)
}

#[tokio::test]
async fn a_thumbs_down_on_its_post_is_stored_once_and_raises_that_channels_thresholds_only() {
    // The level's thresholds (the bed asks the LLM at any score otherwise).
    let bed = bed(|s| s.rule_thresholds = None).await;
    bed.script.set_judgment(verdict(false, None));
    let post = ts(-7200);
    bed.seed(&[
        message(
            GENERAL,
            BOT,
            post,
            None,
            "here is the summary you asked for",
        ),
        message(GENERAL, ALICE, ts(-7000), None, "ok"),
    ])
    .await;

    let first = bed.deliver(reaction(true, ALICE, "-1", post, BOT)).await;
    assert_eq!(
        first,
        Outcome::Hinted {
            added: true,
            new: true
        }
    );
    let again = bed
        .deliver(reaction(true, ALICE, "-1::skin-tone-3", post, BOT))
        .await;
    assert_eq!(
        again,
        Outcome::Hinted {
            added: true,
            new: false
        },
        "counted once"
    );
    let on_a_person = bed
        .deliver(reaction(true, BOB, "-1", ts(-7000), ALICE))
        .await;
    assert_eq!(on_a_person, Outcome::Ignored(IgnoreReason::NotItsPost));
    let no_hint = bed.deliver(reaction(true, BOB, "eyes", post, BOT)).await;
    assert_eq!(no_hint, Outcome::Ignored(IgnoreReason::NotAHint));

    let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(labels[0].hint, Hint::Negative);
    assert_eq!(labels[0].post, post);
    assert!(matches!(&labels[0].source, Source::Reaction(e) if e.as_str() == "-1"));
    assert!(bed
        .store
        .labels(&channel(RANDOM))
        .await
        .expect("labels")
        .is_empty());

    // The next judgment in #general is held to higher thresholds; #random's
    // to its level's.
    bed.seed(&[
        message(
            GENERAL,
            BOB,
            ts(-300),
            None,
            "does anyone know why the build is red?",
        ),
        message(
            RANDOM,
            BOB,
            ts(-300),
            None,
            "does anyone know why the build is red?",
        ),
    ])
    .await;
    let normal = Chattiness::Normal.thresholds().expect("normal");
    let (low, high) = thresholds_of(&bed, &judgment(GENERAL, -300)).await;
    assert!(
        low > normal.low && high > normal.high,
        "raised: {low}..{high}"
    );
    let (low, high) = thresholds_of(&bed, &judgment(RANDOM, -300)).await;
    assert_eq!(
        (low, high),
        (normal.low, normal.high),
        "another channel is untouched"
    );
}

#[tokio::test]
async fn a_withdrawn_reaction_takes_its_hint_back() {
    let bed = bed(|_| {}).await;
    let post = ts(-600);
    bed.seed(&[message(GENERAL, BOT, post, None, "a summary")])
        .await;
    bed.deliver(reaction(true, ALICE, "pray", post, BOT)).await;
    assert_eq!(
        bed.store
            .labels(&channel(GENERAL))
            .await
            .expect("labels")
            .len(),
        1
    );
    let withdrawn = bed.deliver(reaction(false, ALICE, "pray", post, BOT)).await;
    assert_eq!(
        withdrawn,
        Outcome::Hinted {
            added: false,
            new: false
        }
    );
    assert!(bed
        .store
        .labels(&channel(GENERAL))
        .await
        .expect("labels")
        .is_empty());
}

#[tokio::test]
async fn a_reaction_whose_author_slack_left_out_is_checked_against_the_stored_post() {
    let bed = bed(|_| {}).await;
    let post = ts(-600);
    bed.seed(&[message(GENERAL, BOT, post, None, "a summary")])
        .await;
    let mut event = reaction(true, ALICE, "+1", post, BOT);
    event
        .as_object_mut()
        .expect("an object")
        .remove("item_user");
    assert_eq!(
        bed.deliver(event).await,
        Outcome::Hinted {
            added: true,
            new: true
        }
    );
}

#[tokio::test]
async fn not_now_mutes_unprompted_posts_but_mentions_are_still_answered() {
    let bed = bed(|_| {}).await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-60),
        None,
        &format!("<@{BOT}> not now"),
    )])
    .await;
    let acknowledged = bed.run(&mention(-60)).await;
    assert!(
        matches!(
            &acknowledged,
            JobOutcome::Response(ResponseOutcome::Reacted { ts: on, .. }) if *on == ts(-60)
        ),
        "{acknowledged:?}"
    );
    assert!(bed.posts().await.is_empty(), "no words in answer");
    assert!(bed.llm_calls().await.is_empty(), "no LLM call");
    let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
    assert!(
        matches!(labels[..], [ref l] if matches!(l.hint, Hint::Mute { .. }) && l.source == Source::Words)
    );

    // A question left to the room: no unprompted answer while muted.
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-30),
        None,
        "does anyone know why the build is red?",
    )])
    .await;
    let held = bed.run(&judgment(GENERAL, -30)).await;
    assert!(
        matches!(
            held,
            JobOutcome::Judgment(JudgmentOutcome::Held(Gate::Muted))
        ),
        "{held:?}"
    );

    // A mention is still answered.
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-10),
        None,
        &format!("<@{BOT}> why is the build red?"),
    )])
    .await;
    let answered = bed.run(&mention(-10)).await;
    assert!(
        matches!(
            answered,
            JobOutcome::Response(ResponseOutcome::Posted { .. })
        ),
        "{answered:?}"
    );
}

/// Slack's feedback buttons: under an unprompted post with
/// `feedback_buttons` on, never under an answer to a mention; a click of
/// them at ingest's door, signed, is a label, and a forged one is refused.
mod buttons {
    use std::sync::Arc;

    use super::*;
    use myao_core::adapters::system::StaticSecrets;
    use myao_core::app::ingest::{Ingest, IngestRequest, IngestResponse};
    use myao_slack::signature::sign;

    const SIGNING: &str = "hints-signing-secret";

    /// The response job of #general's message `newest`: a mention's, or
    /// one nobody asked for.
    fn response(newest: i64, mentioned: bool) -> Job {
        let mut job = mention(newest);
        if let Job::Response(ResponseJob { mention, .. }) = &mut job {
            *mention = mentioned;
        }
        job
    }

    /// The one post of a response job, on a bed with the settings of
    /// `tweak`.
    async fn post_of(tweak: impl FnOnce(&mut Settings), mentioned: bool) -> Value {
        let bed = Bed::with_settings(tweak).await;
        bed.seed(&[message(
            GENERAL,
            ALICE,
            ts(-30),
            None,
            &format!(
                "{}does anyone know why the build is red?",
                if mentioned { "<@UBOT> " } else { "" }
            ),
        )])
        .await;
        let outcome = bed.run(&response(-30, mentioned)).await;
        assert!(
            matches!(
                outcome,
                JobOutcome::Response(ResponseOutcome::Posted { .. })
            ),
            "{outcome:?}"
        );
        let posts = bed.posts().await;
        assert_eq!(posts.len(), 1, "{posts:?}");
        posts[0].clone()
    }

    #[tokio::test]
    async fn an_unprompted_post_carries_the_buttons_only_with_the_setting_and_an_answer_never() {
        let with = post_of(|s| s.feedback_buttons = true, false).await;
        let blocks = with["blocks"].as_array().expect("blocks");
        let text = with["text"].as_str().expect("the notification's text");
        assert!(!text.is_empty());
        assert_eq!(blocks[0]["type"], "section");
        assert_eq!(blocks[0]["text"]["text"], text, "the reply itself");
        let buttons = blocks.last().expect("a block");
        assert_eq!(buttons["type"], "context_actions");
        let element = &buttons["elements"][0];
        assert_eq!(element["type"], "feedback_buttons");
        assert_eq!(element["action_id"], "myao_feedback");
        assert_eq!(
            (
                &element["positive_button"]["value"],
                &element["negative_button"]["value"]
            ),
            (&json!("positive"), &json!("negative"))
        );
        assert!(
            with["metadata"]["event_payload"]["key"].is_string(),
            "still marked"
        );

        let without = post_of(|s| s.feedback_buttons = false, false).await;
        assert!(without.get("blocks").is_none(), "{without}");
        let answer = post_of(|s| s.feedback_buttons = true, true).await;
        assert!(answer.get("blocks").is_none(), "{answer}");
    }

    /// A click of `value` by `user` under the bot's post `post` in
    /// #general, as Slack's interactivity posts it: a URL-encoded form.
    fn click(user: &str, post: Ts, value: &str) -> Vec<u8> {
        let payload = json!({
            "type": "block_actions",
            "team": {"id": "T1"},
            "user": {"id": user},
            "container": {"type": "message", "message_ts": post.to_string(), "channel_id": GENERAL},
            "channel": {"id": GENERAL},
            "message": {"user": BOT, "bot_id": "B1", "ts": post.to_string(), "text": "an opening"},
            "actions": [{"type": "feedback_buttons", "action_id": "myao_feedback", "value": value}],
        });
        let mut body = b"payload=".to_vec();
        for b in payload.to_string().bytes() {
            match b {
                b if b.is_ascii_alphanumeric() => body.push(b),
                b => body.extend(format!("%{b:02X}").bytes()),
            }
        }
        body
    }

    async fn send(
        ingest: &Ingest,
        timestamp: &str,
        signature: &str,
        body: &[u8],
    ) -> IngestResponse {
        ingest
            .handle(IngestRequest {
                timestamp: Some(timestamp),
                signature: Some(signature),
                retry_num: None,
                body,
            })
            .await
    }

    #[tokio::test]
    async fn a_forged_interactivity_request_is_refused_and_writes_nothing() {
        let bed = bed(|s| s.feedback_buttons = true).await;
        let post = ts(-600);
        bed.seed(&[message(GENERAL, BOT, post, None, "an opening")])
            .await;
        let ingest = Ingest::new(
            bed.services.ports.clone(),
            Arc::new(StaticSecrets::new().with("signing", SIGNING)),
            "signing",
        );
        let now = bed.now().timestamp().to_string();
        let down = click(ALICE, post, "negative");
        let up = click(ALICE, post, "positive");
        let forged = [
            (sign(b"another-secret", &now, &down), down.clone()),
            (format!("v0={}", "0".repeat(64)), down.clone()),
            // A signed click turned into the other button on the way.
            (sign(SIGNING.as_bytes(), &now, &down), up.clone()),
        ];
        for (signature, body) in &forged {
            let r = send(&ingest, &now, signature, body).await;
            assert_eq!((r.status, r.body.as_str()), (401, ""));
        }
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert!(labels.is_empty(), "{labels:?}");
        assert_eq!(bed.board.call_counts(), (0, 0));

        // Signed: kept in the table, and the other button later in its place.
        let r = send(&ingest, &now, &sign(SIGNING.as_bytes(), &now, &down), &down).await;
        assert_eq!((r.status, r.body.as_str()), (200, ""));
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert!(
            matches!(&labels[..], [l] if l.hint == Hint::Negative && l.source == Source::Button && l.post == post),
            "{labels:?}"
        );
        let r = send(&ingest, &now, &sign(SIGNING.as_bytes(), &now, &up), &up).await;
        assert_eq!(r.status, 200);
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert!(
            matches!(&labels[..], [l] if l.hint == Hint::Positive),
            "{labels:?}"
        );
    }
}

/// Issue 56: one person's eleven negative emojis on one post moved the
/// thresholds as far as three people's do. A person counts once.
#[tokio::test]
async fn eleven_emojis_from_one_person_count_as_one_hint() {
    let bed = bed(|s| s.rule_thresholds = None).await;
    bed.script.set_judgment(verdict(false, None));
    let post = ts(-7200);
    bed.seed(&[message(GENERAL, BOT, post, None, "here is the summary")])
        .await;
    let emojis = myao_domain::settings::DEFAULT_NEGATIVE_REACTIONS;
    assert_eq!(emojis.len(), 11);
    for emoji in emojis {
        let taken = bed.deliver(reaction(true, ALICE, emoji, post, BOT)).await;
        assert!(
            matches!(taken, Outcome::Hinted { added: true, .. }),
            "{taken:?}"
        );
    }
    let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
    assert_eq!(labels.len(), 11, "each kept, as given");
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-300),
        None,
        "does anyone know why the build is red?",
    )])
    .await;
    let normal = Chattiness::Normal.thresholds().expect("normal");
    let step = myao_domain::tuning::STEP as i32;
    assert_eq!(
        thresholds_of(&bed, &judgment(GENERAL, -300)).await,
        (normal.low + step, normal.high + step),
        "one step, not three"
    );
    // A second person is a second step.
    bed.deliver(reaction(true, BOB, "-1", post, BOT)).await;
    assert_eq!(
        thresholds_of(&bed, &judgment(GENERAL, -300)).await,
        (normal.low + 2 * step, normal.high + 2 * step)
    );
}

/// `user`'s mention of the bot in #general at `offset`, and its response
/// job's outcome.
async fn say(bed: &Bed<DynamoStore>, user: &str, offset: i64, text: &str) -> JobOutcome {
    bed.seed(&[message(
        GENERAL,
        user,
        ts(offset),
        None,
        &format!("<@{BOT}> {text}"),
    )])
    .await;
    bed.run(&mention(offset)).await
}

/// Whether a judgment of a question left to #general at `offset` is held
/// by the mute.
async fn held_by_mute(bed: &Bed<DynamoStore>, offset: i64) -> bool {
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(offset),
        None,
        "does anyone know why the build is red?",
    )])
    .await;
    matches!(
        bed.run(&judgment(GENERAL, offset)).await,
        JobOutcome::Judgment(JudgmentOutcome::Held(Gate::Muted))
    )
}

/// Issue 56: one "be quiet" muted the channel for everyone, and two other
/// members' "thanks, you can talk again" did not lift it.
#[tokio::test]
async fn another_member_ends_a_mute() {
    for (lift, by) in [
        ("thanks, you can talk again", BOB),
        ("もう話していいよ", BOB),
        ("you can talk again", ALICE),
    ] {
        let bed = bed(|_| {}).await;
        let muted = say(&bed, ALICE, -90, "be quiet for 2 hours").await;
        assert!(
            matches!(muted, JobOutcome::Response(ResponseOutcome::Reacted { .. })),
            "{muted:?}"
        );
        assert!(held_by_mute(&bed, -80).await, "muted");
        bed.clock.advance(chrono::Duration::seconds(30));
        let lifted = say(&bed, by, -20, lift).await;
        assert!(
            matches!(
                lifted,
                JobOutcome::Response(ResponseOutcome::Reacted { .. })
            ),
            "{lift}: {lifted:?}"
        );
        assert!(!held_by_mute(&bed, -10).await, "{lift}: the mute is over");
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert_eq!(labels.len(), 2, "{labels:?}");
    }
}

/// Issue 56: a request with a colon quotes what follows; it was taken as a
/// mute and the request went unanswered.
#[tokio::test]
async fn a_request_with_a_colon_is_answered_not_taken_as_a_mute() {
    for text in [
        "translate to Japanese: be quiet for an hour",
        "reply to Bob: not now, I'm busy",
        "how do I tell my cat: not now?",
        "英語に訳して：静かにして",
    ] {
        let bed = bed(|_| {}).await;
        let answered = say(&bed, ALICE, -60, text).await;
        assert!(
            matches!(
                answered,
                JobOutcome::Response(ResponseOutcome::Posted { .. })
            ),
            "{text}: {answered:?}"
        );
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert!(labels.is_empty(), "{text}: {labels:?}");
    }
}

/// Issue 56: "be quiet for a week", 「1週間黙ってて」 were no hint at all; any
/// duration mutes, held to a day, and the acknowledgment says so.
#[tokio::test]
async fn a_mute_for_longer_than_a_day_is_held_to_one_and_said() {
    for text in [
        "be quiet for a week",
        "1週間黙ってて",
        "please be quiet in here for a year",
    ] {
        let bed = bed(|_| {}).await;
        let acknowledged = say(&bed, ALICE, -60, text).await;
        let JobOutcome::Response(ResponseOutcome::Posted { text: said, .. }) = &acknowledged else {
            panic!("{text}: {acknowledged:?}");
        };
        assert_eq!(
            said,
            &myao_domain::text::escape(myao_domain::hints::CAPPED_NOTICE)
        );
        assert!(bed.llm_calls().await.is_empty(), "{text}: no LLM call");
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert!(
            matches!(&labels[..], [l] if l.hint == Hint::Mute { minutes: 24 * 60 }),
            "{text}: {labels:?}"
        );
        assert!(held_by_mute(&bed, -30).await, "{text}");
    }
}

/// "Today" and "until tomorrow" last until midnight in the workspace's
/// time zone (`timezone`).
#[tokio::test]
async fn today_lasts_until_midnight_in_the_workspaces_time_zone() {
    for (text, zone) in [
        ("be quiet until tomorrow", "UTC"),
        ("not now, today", "Asia/Tokyo"),
        ("今日はもう黙ってて", "Asia/Tokyo"),
        ("明日まで静かにしてて", "America/New_York"),
    ] {
        let (set, issues) = Settings::from_pairs([("timezone", zone)]);
        assert!(issues.is_empty(), "{issues:?}");
        let zone = set.timezone;
        let bed = bed(|s| s.timezone = zone).await;
        let acknowledged = say(&bed, ALICE, -60, text).await;
        assert!(
            matches!(
                acknowledged,
                JobOutcome::Response(ResponseOutcome::Reacted { .. })
            ),
            "{text}: {acknowledged:?}"
        );
        let local = bed.now().with_timezone(&zone);
        let midnight = local
            .date_naive()
            .succ_opt()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .and_then(|m| m.and_local_timezone(zone).earliest())
            .expect("a midnight");
        let minutes = u32::try_from((midnight - local).num_minutes()).expect("minutes");
        let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
        assert!(
            matches!(&labels[..], [l] if l.hint == Hint::Mute { minutes: minutes.max(5) }),
            "{text} in {zone}: {labels:?}, want {minutes} minutes"
        );
    }
}
