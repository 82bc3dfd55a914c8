//! Knowing when it is spoken to, and spending an LLM call only in doubt: the
//! engagement window, the rule stage, the judgment ceiling of a busy
//! conversation, and the over-talking guards, over the real ingest and
//! judgment code, DynamoDB on the emulator and the LLM and Slack stubs.

use chrono::Duration;
use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::Outcome;
use myao_core::schedule::ScheduleName;
use myao_domain::routing::Route;
use myao_domain::rules::{Decision, Gate, Signal};
use myao_domain::{Conversation, Job, JobKind, JudgmentJob, ResponseJob, Settings, Ts};
use myao_services::jobs::JobOutcome;
use myao_services::judgment::JudgmentOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{message, ts, verdict, Bed, PromptKind, ALICE, BOB, BOT, GENERAL};
use serde_json::{json, Value};

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(|s| {
        // The product's thresholds (`normal`), not the LLM-only ones of the
        // other tests.
        s.rule_thresholds = None;
        tweak(s);
    })
    .await
}

fn said(user: &str, at: Ts, thread: Option<Ts>, text: &str) -> Value {
    let mut event = json!({
        "type": "message", "channel": GENERAL, "channel_type": "channel",
        "user": user, "text": text, "ts": at.to_string(),
    });
    if let Some(root) = thread {
        event["thread_ts"] = json!(root.to_string());
    }
    event
}

fn judgment(thread_ts: Option<Ts>, newest_ts: Ts) -> Job {
    Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts,
        newest_ts,
    })
}

const QUESTION: &str = "does anyone know why the deploy job hangs?";

/// Seeds Bob's greeting at `hello` and, at `asked`, Alice's question.
async fn seed_question(bed: &Bed<DynamoStore>, hello: i64, asked: i64) {
    bed.seed(&[
        message(GENERAL, BOB, ts(hello), None, "morning"),
        message(GENERAL, ALICE, ts(asked), None, QUESTION),
    ])
    .await;
}

/// [`seed_question`] at -400 s, then Alice's detail at the top level at
/// -300 s: the question is no longer the newest message.
async fn seed_question_with_detail(bed: &Bed<DynamoStore>) {
    seed_question(bed, -900, -400).await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-300),
        None,
        "it started on friday",
    )])
    .await;
}

async fn judge(bed: &Bed<DynamoStore>, job: &Job) -> JudgmentOutcome {
    match bed.run(job).await {
        JobOutcome::Judgment(outcome) => outcome,
        other => panic!("not a judgment: {other:?}"),
    }
}

/// The one post of the top level's judgment up to `newest`, which must
/// answer without asking, once its delay has passed.
async fn the_sure_answer(bed: &Bed<DynamoStore>, newest: Ts) -> Value {
    let outcome = judge(bed, &judgment(None, newest)).await;
    let JudgmentOutcome::Sure { at, .. } = &outcome else {
        panic!("expected an answer without asking, got {outcome:?}");
    };
    bed.clock.set(*at);
    bed.run_due().await;
    let mut posts = bed.posts().await;
    assert_eq!(posts.len(), 1, "{posts:?}");
    posts.remove(0)
}

/// Whether ingest routed the message as addressed (answered at once).
fn answered_at_once(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Stored {
            routed: Route::RespondNow(Job::Response(ResponseJob { mention: true, .. }))
        }
    )
}

#[tokio::test]
async fn a_reply_in_the_bots_thread_within_the_window_is_answered_at_once() {
    let bed = bed(|_| {}).await;
    let root = ts(-600);
    bed.seed(&[
        message(GENERAL, ALICE, root, None, "the build is red again"),
        message(GENERAL, BOT, ts(-200), Some(root), "looks like the cache"),
    ])
    .await;
    // Alice, whom the bot answered, 200 s after it spoke (window 300 s):
    // addressed, on the queue now.
    let outcome = bed
        .deliver(said(ALICE, ts(0), Some(root), "you mean the npm cache"))
        .await;
    assert!(answered_at_once(&outcome), "{outcome:?}");
    assert!(bed.board.scheduled().is_empty(), "no judgment wait");

    // One that @-mentions someone else is theirs, even inside the window.
    let outcome = bed
        .deliver(said(ALICE, ts(1), Some(root), "<@UBOB> can you clear it"))
        .await;
    assert!(!answered_at_once(&outcome), "{outcome:?}");
    // Bob, a third person replying under the bot's answer to Alice, is
    // judged.
    let other = ts(-500);
    bed.seed(&[
        message(GENERAL, ALICE, other, None, "the deploy is slow"),
        message(GENERAL, BOT, ts(-100), Some(other), "the cache again?"),
    ])
    .await;
    let outcome = bed
        .deliver(said(BOB, ts(3), Some(other), "I can clear it"))
        .await;
    assert!(!answered_at_once(&outcome), "{outcome:?}");

    // Its own top-level message counts as speaking in its thread.
    let own = ts(-30);
    bed.seed(&[message(GENERAL, BOT, own, None, "lunch is at noon")])
        .await;
    let outcome = bed.deliver(said(BOB, ts(2), Some(own), "thanks!")).await;
    assert!(answered_at_once(&outcome), "{outcome:?}");

    // Past the window, a reply waits for its judgment like any other.
    bed.clock.advance(Duration::seconds(400));
    let outcome = bed
        .deliver(said(BOB, ts(400), Some(root), "cleared it, still red"))
        .await;
    assert!(
        matches!(
            outcome,
            Outcome::Stored {
                routed: Route::JudgeAt { .. }
            }
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_low_score_conversation_makes_no_llm_call() {
    let bed = bed(|_| {}).await;
    bed.seed(&[
        message(GENERAL, BOB, ts(-400), None, "morning"),
        message(GENERAL, ALICE, ts(-300), None, "nice weather today"),
    ])
    .await;
    let outcome = judge(&bed, &judgment(None, ts(-300))).await;
    let JudgmentOutcome::Quiet(ruling) = &outcome else {
        panic!("expected the rule stage's silence, got {outcome:?}");
    };
    assert_eq!(ruling.decision, Decision::Silent);
    assert!(ruling.score.total < ruling.thresholds.low);
    assert!(bed.llm_calls().await.is_empty(), "no LLM call");
}

#[tokio::test]
async fn a_question_left_hanging_is_answered_without_a_judgment_call() {
    let bed = bed(|_| {}).await;
    bed.script.set_judgment(verdict(false, None));
    seed_question(&bed, -400, -300).await;
    let outcome = judge(&bed, &judgment(None, ts(-300))).await;
    let JudgmentOutcome::Sure { ruling, at } = &outcome else {
        panic!("expected an answer without asking, got {outcome:?}");
    };
    assert!(ruling.score.signals.contains(&Signal::UnansweredQuestion));
    assert_eq!(ruling.score.answers, Some(ts(-300)));
    bed.clock.set(*at);
    bed.run_due().await;
    assert!(bed.llm_calls_of(PromptKind::Judgment).await.is_empty());
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
    let posts = bed.posts().await;
    assert_eq!(posts.len(), 1);
    // The question is the newest message: the answer goes where it was asked.
    assert!(posts[0].get("thread_ts").is_none(), "{:?}", posts[0]);
}

/// A bed whose channel talks in threads: an hour earlier, Bob and Alice
/// talked in one, five replies; then Bob's greeting and Alice's question
/// at the top level.
async fn threading_channel() -> Bed<DynamoStore> {
    let bed = bed(|_| {}).await;
    bed.seed_thread_habit(60).await;
    seed_question(&bed, -400, -300).await;
    bed
}

/// The posts once the top level's sure answer up to `newest` is due, Bob
/// having written `meanwhile` at the top level after the judgment.
async fn answered_after(bed: &Bed<DynamoStore>, newest: Ts, meanwhile: &str) -> Vec<Value> {
    let outcome = judge(bed, &judgment(None, newest)).await;
    let JudgmentOutcome::Sure { at, .. } = &outcome else {
        panic!("expected an answer without asking, got {outcome:?}");
    };
    bed.seed(&[message(GENERAL, BOB, ts(-299), None, meanwhile)])
        .await;
    bed.clock.set(*at);
    bed.run_due().await;
    bed.posts().await
}

#[tokio::test]
async fn where_people_talk_in_threads_the_newest_question_is_answered_in_its_thread() {
    let bed = threading_channel().await;
    let post = the_sure_answer(&bed, ts(-300)).await;
    // The question is the newest message, yet the answer goes in its
    // thread, as this channel's people answer.
    assert_eq!(post["thread_ts"], json!(ts(-300).to_string()));
}

#[tokio::test]
async fn an_answer_on_its_way_to_a_threads_root_stands_down_when_a_person_speaks_at_the_top_level()
{
    // People talk at the top level here; Alice's detail after her question
    // sends the answer to the question's thread.
    let bed = bed(|_| {}).await;
    seed_question_with_detail(&bed).await;
    // Before the answer is posted, Bob answers at the top level: the
    // thread had not begun, so the top level is still the question's
    // conversation.
    let posts = answered_after(&bed, ts(-300), "restart the runner").await;
    assert!(posts.is_empty(), "{posts:?}");
}

#[tokio::test]
async fn where_people_talk_in_threads_a_new_top_level_message_does_not_stop_an_answer() {
    let bed = threading_channel().await;
    // Bob starts a conversation of his own: here that is no answer to
    // Alice's question, which is answered in its thread.
    let posts = answered_after(&bed, ts(-300), "lunch anyone").await;
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert_eq!(posts[0]["thread_ts"], json!(ts(-300).to_string()));
}

#[tokio::test]
async fn an_earlier_question_is_answered_in_its_thread() {
    let bed = bed(|_| {}).await;
    seed_question_with_detail(&bed).await;
    let post = the_sure_answer(&bed, ts(-300)).await;
    assert_eq!(post["thread_ts"], json!(ts(-400).to_string()));
}

#[tokio::test]
async fn a_conversation_that_keeps_talking_is_judged_within_max_wait() {
    let bed = bed(|s| {
        s.min_wait_seconds = 300;
        s.max_wait_seconds = 900;
    })
    .await;
    let name = ScheduleName::for_conversation(
        JobKind::Judgment,
        &Conversation::top_level(channel(GENERAL)),
    );
    let due = |bed: &Bed<DynamoStore>| {
        bed.board
            .scheduled()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.at)
    };
    // A message every two minutes: each one pushes the wait back, but never
    // past 900 s after the first.
    let start = bed.now();
    for i in 0..8 {
        let who = if i % 2 == 0 { ALICE } else { BOB };
        bed.deliver(said(who, Ts::from_datetime(bed.now()), None, "lol yes"))
            .await;
        let at = due(&bed).expect("a pending judgment");
        assert!(
            at <= start + Duration::seconds(900),
            "due {at} at message {i}"
        );
        bed.clock.advance(Duration::seconds(120));
    }
    assert_eq!(due(&bed), Some(start + Duration::seconds(900)));
    // The judgment runs late (EventBridge's minute): a message after the
    // ceiling is judged at once, not given a window of its own.
    bed.clock.set(start + Duration::seconds(905));
    bed.deliver(said(BOB, Ts::from_datetime(bed.now()), None, "still here"))
        .await;
    assert_eq!(due(&bed), Some(bed.now()));
    let ran = bed.run_due().await;
    assert!(
        ran.iter()
            .any(|(job, outcome)| job.kind() == JobKind::Judgment
                && !matches!(outcome, JobOutcome::Judgment(JudgmentOutcome::Stale))),
        "{ran:?}"
    );
    // The judgment closed the window: the next message waits the usual time.
    bed.clock.advance(Duration::seconds(60));
    bed.deliver(said(ALICE, Ts::from_datetime(bed.now()), None, "anyway"))
        .await;
    assert_eq!(due(&bed), Some(bed.now() + Duration::seconds(300)));
}

/// Seeds a question in a thread of its own at `offset` and judges it.
async fn ask(bed: &Bed<DynamoStore>, offset: i64) -> JudgmentOutcome {
    let root = ts(offset);
    bed.seed(&[message(
        GENERAL,
        ALICE,
        root,
        None,
        &format!("question {offset}: how do I rotate the api keys?"),
    )])
    .await;
    judge(bed, &judgment(Some(root), root)).await
}

#[tokio::test]
async fn the_cooldown_and_the_hourly_cap_hold_under_a_burst() {
    let bed = bed(|s| {
        s.cooldown_seconds = 120;
        s.max_unprompted_per_channel_hour = 2;
    })
    .await;
    // Where the rule stage asks (the bot spoke recently), the LLM says yes.
    bed.script.set_judgment(verdict(true, Some(0)));
    bed.seed(&[message(GENERAL, BOB, ts(-3600), None, "hi")])
        .await;
    // The first question is answered; the bot's message goes out with it.
    let JudgmentOutcome::Sure { at, .. } = ask(&bed, -10).await else {
        panic!("the first question is answered");
    };
    bed.clock.set(at);
    bed.run_due().await;
    assert_eq!(bed.posts().await.len(), 1);

    // Within the cooldown, nothing unprompted, whatever the score; the
    // conversation is judged again when the cooldown is over.
    let posted_at = at;
    bed.clock.advance(Duration::seconds(30));
    let offset = (bed.now() - myao_tests::stubs::at(0)).num_seconds();
    assert_eq!(
        ask(&bed, offset - 1).await,
        JudgmentOutcome::Held(Gate::Cooldown)
    );
    let held = Conversation::thread(channel(GENERAL), ts(offset - 1));
    let name = ScheduleName::for_conversation(JobKind::Judgment, &held);
    let again = bed.board.scheduled().into_iter().find(|s| s.name == name);
    let again = again.expect("judged again").at;
    let over = posted_at + Duration::seconds(120);
    assert!(
        again >= over && again < over + Duration::seconds(1),
        "judged again at {again}, the cooldown ends at {over}"
    );

    // After it, the second reply of the hour; the third is over the cap.
    bed.clock.advance(Duration::seconds(120));
    let offset = (bed.now() - myao_tests::stubs::at(0)).num_seconds();
    let at = match ask(&bed, offset - 1).await {
        JudgmentOutcome::Sure { at, .. } | JudgmentOutcome::Respond { at, .. } => at,
        other => panic!("the second question is answered: {other:?}"),
    };
    bed.clock.set(at);
    bed.run_due().await;
    bed.clock.advance(Duration::seconds(130));
    let offset = (bed.now() - myao_tests::stubs::at(0)).num_seconds();
    assert!(matches!(
        ask(&bed, offset - 1).await,
        JudgmentOutcome::Capped(_)
    ));
    assert_eq!(bed.posts().await.len(), 2);
}

#[tokio::test]
async fn declines_in_a_row_back_the_channel_off_until_it_is_called() {
    let bed = Bed::on_emulator(|s| {
        s.backoff_after_declines = 2;
        s.backoff_seconds = 1_800;
    })
    .await;
    bed.script.set_judgment(verdict(false, None));
    for (i, offset) in [-300, -200].into_iter().enumerate() {
        let root = ts(offset);
        bed.seed(&[message(GENERAL, ALICE, root, None, "so the build broke")])
            .await;
        let outcome = judge(&bed, &judgment(Some(root), root)).await;
        assert!(
            matches!(outcome, JudgmentOutcome::Declined(..)),
            "{i}: {outcome:?}"
        );
    }
    let root = ts(-100);
    bed.seed(&[message(GENERAL, ALICE, root, None, "and the tests too")])
        .await;
    let calls = bed.llm_calls().await.len();
    assert_eq!(
        judge(&bed, &judgment(Some(root), root)).await,
        JudgmentOutcome::Held(Gate::Backoff)
    );
    assert_eq!(
        bed.llm_calls().await.len(),
        calls,
        "no LLM call in a backoff"
    );

    // Calling it by name ends the backoff.
    let outcome = bed
        .deliver(said(BOB, ts(0), None, "myao, are you there"))
        .await;
    assert!(answered_at_once(&outcome), "{outcome:?}");
    let outcome = judge(&bed, &judgment(Some(root), root)).await;
    assert!(
        matches!(outcome, JudgmentOutcome::Declined(..)),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn mentions_only_in_a_channel_schedules_no_judgment() {
    let bed = bed(|s| {
        s.channel_chattiness.insert(
            channel(GENERAL),
            myao_domain::rules::Chattiness::MentionsOnly,
        );
    })
    .await;
    let outcome = bed
        .deliver(said(
            ALICE,
            ts(0),
            None,
            "does anyone know how the cache works?",
        ))
        .await;
    assert_eq!(
        outcome,
        Outcome::Stored {
            routed: Route::Nothing
        }
    );
    assert!(bed.board.scheduled().is_empty());
    // Nor is talking on in a thread where the bot answered a mention.
    let root = ts(-100);
    bed.seed(&[
        message(GENERAL, ALICE, root, None, "<@UBOT> what time is it?"),
        message(GENERAL, BOT, ts(-90), Some(root), "three o'clock"),
    ])
    .await;
    let outcome = bed
        .deliver(said(BOB, ts(0), Some(root), "thanks, lunch then"))
        .await;
    assert!(!answered_at_once(&outcome), "{outcome:?}");
    bed.seed(&[message(GENERAL, ALICE, ts(1), None, "anyone?")])
        .await;
    assert_eq!(
        judge(&bed, &judgment(None, ts(1))).await,
        JudgmentOutcome::Held(Gate::MentionsOnly)
    );
}

#[tokio::test]
async fn a_question_over_the_hourly_cap_is_judged_again_when_the_hour_turns() {
    use myao_tests::stubs::at;
    let bed = bed(|s| {
        s.max_unprompted_per_channel_hour = 1;
        s.cooldown_seconds = 0;
    })
    .await;
    bed.clock.set(at(50 * 60));
    bed.seed(&[message(GENERAL, BOB, ts(-3600), None, "hi")])
        .await;
    let JudgmentOutcome::Sure { at: due, .. } = ask(&bed, 50 * 60 - 10).await else {
        panic!("the first question is answered");
    };
    bed.clock.set(due);
    bed.run_due().await;
    assert_eq!(bed.posts().await.len(), 1);

    // The next question comes after that answer (posted at the top level,
    // where the question was the newest message).
    bed.clock.advance(chrono::Duration::seconds(2));
    let offset = (bed.now() - at(0)).num_seconds() - 1;
    let outcome = ask(&bed, offset).await;
    assert!(matches!(outcome, JudgmentOutcome::Capped(_)), "{outcome:?}");
    let capped = Conversation::thread(channel(GENERAL), ts(offset));
    let name = ScheduleName::for_conversation(JobKind::Judgment, &capped);
    let again = bed.board.scheduled().into_iter().find(|s| s.name == name);
    assert_eq!(again.map(|s| s.at), Some(at(3600)), "judged again at 09:00");
}

/// Issue 45: a question cross-posted to 200 channels gets at most
/// `max_unprompted_per_workspace_hour` unprompted answers in its hour; the
/// other channels' judgments are capped (judged again when the hour turns).
#[tokio::test]
async fn the_workspace_cap_on_unprompted_answers_holds_across_200_channels() {
    let bed = bed(|s| s.cooldown_seconds = 0).await;
    let cap = Settings::default().max_unprompted_per_workspace_hour as usize;
    let (mut answered, mut capped) = (0, 0);
    for i in 0..200 {
        let ch = format!("CW{i:03}");
        bed.seed(&[
            message(&ch, BOB, ts(-3600), None, "morning"),
            message(&ch, ALICE, ts(-600), None, QUESTION),
        ])
        .await;
        let job = Job::Judgment(JudgmentJob {
            channel: channel(&ch),
            thread_ts: None,
            newest_ts: ts(-600),
        });
        match judge(&bed, &job).await {
            JudgmentOutcome::Sure { .. } => answered += 1,
            JudgmentOutcome::Capped(_) => capped += 1,
            other => panic!("{ch}: {other:?}"),
        }
    }
    assert_eq!((answered, capped), (cap, 200 - cap));
}

#[tokio::test]
async fn a_name_call_and_a_direct_message_are_answered_without_a_judgment_wait() {
    let bed = bed(|_| {}).await;
    let outcome = bed
        .deliver(said(ALICE, ts(0), None, "ねえ myao、今日の天気は?"))
        .await;
    assert!(answered_at_once(&outcome), "{outcome:?}");
    let outcome = bed
        .deliver(json!({
            "type": "message", "channel": "D1", "channel_type": "im",
            "user": ALICE, "text": "hello", "ts": ts(1).to_string(),
        }))
        .await;
    assert!(answered_at_once(&outcome), "{outcome:?}");
    assert!(bed.board.scheduled().is_empty(), "no judgment wait");
    assert_eq!(bed.board.queued().len(), 2);
}

/// The posts made when, after the rule stage decided to answer Alice's
/// top-level question and before the answer went out, `who` replied in
/// the question's thread (delivered: the reply makes a judgment of the
/// thread), once everything due within the hour has run.
async fn posts_after_a_reply_in_its_thread(who: &str) -> Vec<Value> {
    let bed = bed(|_| {}).await;
    seed_question(&bed, -900, -300).await;
    let JudgmentOutcome::Sure { at, .. } = judge(&bed, &judgment(None, ts(-300))).await else {
        panic!("the question is answered");
    };
    bed.deliver(said(
        who,
        Ts::from_datetime(bed.now()),
        Some(ts(-300)),
        "about that",
    ))
    .await;
    bed.clock.set(at);
    bed.run_due().await;
    assert!(
        bed.posts().await.is_empty(),
        "the top-level answer stood down"
    );
    for _ in 0..6 {
        bed.clock.advance(Duration::minutes(10));
        bed.run_due().await;
    }
    bed.posts().await
}

#[tokio::test]
async fn a_top_level_answer_stands_down_once_its_question_has_a_thread() {
    // Someone else answered there: nothing more to say.
    assert!(posts_after_a_reply_in_its_thread(BOB).await.is_empty());
    // The asker added details there: it is answered once, in the thread.
    let posts = posts_after_a_reply_in_its_thread(ALICE).await;
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert_eq!(posts[0]["thread_ts"], json!(ts(-300).to_string()));
}

#[tokio::test]
async fn an_absurd_timestamp_is_refused_and_its_conversation_still_answered() {
    let bed = bed(|_| {}).await;
    // Signed, from the year 33658: before, it was stored, and every later
    // judgment of the top level found a newer message and stood down.
    let far = Ts::parse("999999999999.999999").expect("a ts");
    let outcome = bed
        .deliver(said(BOB, far, None, "hello from the future"))
        .await;
    assert!(matches!(outcome, Outcome::Refused(_)), "{outcome:?}");
    let outcome = bed.deliver(said(ALICE, ts(0), None, QUESTION)).await;
    assert!(matches!(outcome, Outcome::Stored { .. }), "{outcome:?}");
    for _ in 0..12 {
        bed.clock.advance(Duration::minutes(5));
        bed.run_due().await;
    }
    assert_eq!(bed.posts().await.len(), 1, "the question is answered");
}

/// Regression guard for the learned answer times: a channel whose people
/// answer each other's questions within minutes, again and again, has its
/// answer times kept on its record by the judgments, and the next waiting
/// question is held to the wait learned from them.
#[tokio::test]
async fn a_judgment_learns_the_channels_answer_times_and_holds_a_question_to_them() {
    use myao_core::ports::ChannelRecords;

    let bed = bed(|s| s.rule_thresholds = None).await;
    bed.script.set_judgment(verdict(false, None));
    // Eight questions, each answered by another person four minutes later,
    // hours apart, over the day before.
    let mut history = Vec::new();
    for n in 0..8 {
        let asked = -30 * 3600 + n * 3 * 3600;
        let q = format!("does anyone know how to rotate the logs on host {n}?");
        history.push(message(GENERAL, ALICE, ts(asked), None, &q));
        history.push(message(
            GENERAL,
            BOB,
            ts(asked + 240),
            None,
            "yes: logrotate -f",
        ));
    }
    bed.seed(&history).await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-120),
        None,
        "does anyone know why the build is red?",
    )])
    .await;

    let outcome = judge(&bed, &judgment(None, ts(-120))).await;
    let record = bed
        .store
        .get_channel(&channel(GENERAL))
        .await
        .expect("read")
        .expect("the channel's record");
    let times = record.answer_times.expect("answer times learned");
    let wait = times.wait(
        myao_domain::rules::Chattiness::Normal,
        Duration::seconds(300),
        Ts::from_datetime(bed.now()),
    );
    assert!(wait.is_some(), "enough history to learn from: {times:?}");
    let ruling = outcome.ruling().expect("scored");
    assert_eq!(
        ruling.score.wait, wait,
        "the question is held to it: {outcome:?}"
    );
}
