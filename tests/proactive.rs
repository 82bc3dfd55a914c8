//! Starting a conversation now and then (issue 17): the hourly memory run
//! schedules one proactive judgment per quiet channel it may speak in,
//! inside working hours; the judgment model sees that channel's memories,
//! people and shareable facts only; a yes becomes one top-level post. Over
//! the real memory, proactive and response code, DynamoDB on the emulator,
//! and the LLM and Slack stubs.
//!
//! The bed starts on Monday 2026-01-05 08:00 UTC; working hours are the
//! defaults (10-18, mon-fri, UTC), and the bed's random source draws 0.5, so
//! a judgment planned before Monday's window runs at 14:00.

use chrono::{DateTime, Duration, Utc};
use myao_aws::dynamodb::DynamoStore;
use myao_core::ports::{ChannelRecords, FactRecords, MemoryRecords, Messages};
use myao_domain::facts::Fact;
use myao_domain::metrics;
use myao_domain::proactive::Hold;
use myao_domain::proactive::ProactiveChannels;
use myao_domain::rules::Chattiness;
use myao_domain::{
    Channel, Job, Memory, MemoryKind, MemoryScope, ProactiveJob, Reply, ResponseJob, Settings, Ts,
    Visibility,
};
use myao_services::jobs::JobOutcome;
use myao_services::proactive::{schedule_name, ProactiveOutcome};
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{
    at, message, opening, ts, Bed, PromptKind, ALICE, BOB, BOT, DEFAULT_REPLY, GENERAL, PARTNERS,
    RANDOM, SECRET,
};

const HOUR: i64 = 3_600;
const DAY: i64 = 24 * HOUR;
/// Monday 14:00, where a judgment planned on Monday before 10:00 runs.
const MONDAY_SLOT: i64 = 6 * HOUR;
const TOPIC: &str = "ask Bob how the move to Osaka went";

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(|s| {
        s.proactive = true;
        s.proactive_channels = ProactiveChannels::parse(GENERAL).expect("ids");
        tweak(s);
    })
    .await
}

fn visibility(id: &str) -> Visibility {
    match id {
        SECRET => Visibility::PRIVATE,
        PARTNERS => Visibility::PUBLIC.shared_externally(),
        _ => Visibility::PUBLIC,
    }
}

/// A channel's record as the judgments leave it: known to Slack now, last
/// active at `offset`.
async fn active(bed: &Bed<DynamoStore>, id: &str, offset: i64) {
    let ch = Channel {
        id: channel(id),
        name: id.to_lowercase(),
        visibility: visibility(id),
    };
    let until = at(90 * DAY);
    bed.store
        .put_channel_info(&ch, bed.now(), until)
        .await
        .expect("channel info");
    bed.store
        .touch_channel(&ch, at(offset), until)
        .await
        .expect("touch");
}

/// A quiet channel: Bob and Alice talked 30 hours before the start.
async fn quiet(bed: &Bed<DynamoStore>, id: &str) {
    bed.seed(&[
        message(id, BOB, ts(-30 * HOUR), None, "moving to Osaka next week!"),
        message(
            id,
            ALICE,
            ts(-30 * HOUR + 60),
            None,
            "good luck with the boxes",
        ),
    ])
    .await;
    active(bed, id, -30 * HOUR + 60).await;
}

fn fact(id: &str, n: u32, text: &str, shareable: bool) -> Fact {
    Fact {
        id: format!("f{n}"),
        channel: channel(id),
        subject: "Bob".into(),
        text: text.into(),
        keywords: vec!["osaka".into()],
        cues: Vec::new(),
        importance: 4,
        shareable,
        sources: vec![ts(-30 * HOUR)],
        speakers: vec![myao_testkit::ids::user(BOB)],
        about: None,
        written_at: at(-30 * HOUR),
        outdated: false,
        meaning: None,
    }
}

async fn sweep(bed: &Bed<DynamoStore>) -> Vec<(String, DateTime<Utc>)> {
    match bed.run(&Job::MemorySweep).await {
        JobOutcome::Memory(report) => report
            .proactive
            .into_iter()
            .map(|(c, at)| (c.to_string(), at))
            .collect(),
        other => panic!("not a memory report: {other:?}"),
    }
}

/// The pending proactive judgments, by channel.
fn pending(bed: &Bed<DynamoStore>) -> Vec<(String, DateTime<Utc>, Job)> {
    bed.board
        .scheduled()
        .into_iter()
        .filter(|s| matches!(s.job, Job::Proactive(ProactiveJob { .. })))
        .map(|s| match &s.job {
            Job::Proactive(ProactiveJob { channel, .. }) => {
                (channel.to_string(), s.at, s.job.clone())
            }
            _ => unreachable!("filtered"),
        })
        .collect()
}

async fn judge(bed: &Bed<DynamoStore>, id: &str, made_at: i64) -> ProactiveOutcome {
    let job = Job::Proactive(ProactiveJob {
        channel: channel(id),
        made_at: Ts::from_datetime(at(made_at)),
    });
    match bed.run(&job).await {
        JobOutcome::Proactive(outcome) => outcome,
        other => panic!("not a proactive judgment: {other:?}"),
    }
}

/// Runs what is due now, then what that queued for now (the opening post).
async fn run_due(bed: &Bed<DynamoStore>) -> Vec<(Job, JobOutcome)> {
    let mut done = bed.run_due().await;
    done.extend(bed.run_due().await);
    done
}

fn set(bed: &Bed<DynamoStore>, offset: i64) {
    bed.clock.set(at(offset));
}

#[tokio::test]
async fn a_quiet_listed_channel_gets_one_judgment_and_on_yes_one_post() {
    let bed = bed(|_| {}).await;
    quiet(&bed, GENERAL).await;
    quiet(&bed, RANDOM).await;
    // What it may draw on: GENERAL's memory and its shareable fact; not its
    // private fact, and nothing of another channel.
    let memory = |id: &str, content: &str| Memory {
        scope: MemoryScope::Channel {
            channel: channel(id),
        },
        kind: MemoryKind::Long,
        content: content.into(),
        updated_at: at(-DAY),
        newest_ts: Some(ts(-30 * HOUR + 60)),
    };
    for m in [
        memory(GENERAL, "- Bob plans a move MARK-GENERAL-LONG"),
        memory(RANDOM, "- cat pictures MARK-RANDOM-LONG"),
    ] {
        bed.store
            .put_memory(&m, at(90 * DAY))
            .await
            .expect("memory");
    }
    for f in [
        fact(GENERAL, 1, "Bob moves to Osaka MARK-SHAREABLE", true),
        fact(GENERAL, 2, "Bob's knee surgery MARK-PRIVATE", false),
        fact(RANDOM, 3, "Alice likes cats MARK-OTHER", true),
    ] {
        bed.store.put_fact(&f, at(90 * DAY)).await.expect("fact");
    }

    // Monday 08:00: one judgment, for the listed channel, in today's window.
    let planned = sweep(&bed).await;
    assert_eq!(planned, vec![(GENERAL.to_owned(), at(MONDAY_SLOT))]);
    let jobs = pending(&bed);
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(
        bed.board.scheduled()[0].name,
        schedule_name(&channel(GENERAL))
    );
    // The next hourly runs leave it as it is: no pile-up, no move.
    for hour in 1..=3 {
        set(&bed, hour * HOUR);
        assert_eq!(sweep(&bed).await, vec![], "hour {hour}");
    }
    assert_eq!(
        pending(&bed)
            .iter()
            .map(|(c, at, _)| (c.clone(), *at))
            .collect::<Vec<_>>(),
        vec![(GENERAL.to_owned(), at(MONDAY_SLOT))]
    );
    assert!(bed.llm_calls_of(PromptKind::Proactive).await.is_empty());

    // 14:00: the judgment says yes; the opening is posted at the top level.
    bed.script.set_proactive(opening(Some(TOPIC)));
    set(&bed, MONDAY_SLOT);
    let done = run_due(&bed).await;
    let opened = done
        .iter()
        .filter(|(_, o)| matches!(o, JobOutcome::Proactive(ProactiveOutcome::Open { .. })))
        .count();
    assert_eq!(opened, 1, "{done:?}");
    let posted: Vec<_> = done
        .iter()
        .filter_map(|(job, o)| match (job, o) {
            (
                Job::Response(ResponseJob {
                    reply: Reply::Opener { topic },
                    thread_ts: None,
                    ..
                }),
                JobOutcome::Response(ResponseOutcome::Posted { ts, text }),
            ) => Some((topic.clone(), *ts, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(posted.len(), 1, "{done:?}");
    assert_eq!(posted[0].0, TOPIC);
    assert_eq!(posted[0].2, DEFAULT_REPLY);

    let posts = bed.posts().await;
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert_eq!(posts[0]["channel"], GENERAL);
    assert!(posts[0]["thread_ts"].is_null(), "{:?}", posts[0]);
    let stored = bed
        .store
        .get_message(&channel(GENERAL), posted[0].1)
        .await
        .expect("read")
        .expect("stored as the bot's message");
    assert!(stored.is_bot && stored.thread_ts.is_none());
    assert_eq!(stored.user.as_str(), BOT);

    let judged = bed.llm_calls_of(PromptKind::Proactive).await;
    assert_eq!(judged.len(), 1);
    let system = &judged[0].system;
    assert_eq!(judged[0].body["response_format"]["type"], "json_object");
    for present in ["MARK-GENERAL-LONG", "MARK-SHAREABLE", "moving to Osaka"] {
        assert!(system.contains(present), "{present} missing:\n{system}");
    }
    for absent in ["MARK-PRIVATE", "MARK-RANDOM-LONG", "MARK-OTHER"] {
        assert!(!system.contains(absent), "{absent} leaked:\n{system}");
    }
    let written = bed.llm_calls_of(PromptKind::Opener).await;
    assert_eq!(written.len(), 1);
    assert!(written[0].system.contains(TOPIC));
    assert!(!written[0].system.contains("MARK-PRIVATE"));
    assert!(bed.llm_calls_of(PromptKind::Response).await.is_empty());

    assert_eq!(
        bed.metrics
            .total(metrics::PROACTIVE_JUDGMENTS, Some(("Outcome", "open"))),
        1.0
    );
    assert_eq!(
        bed.metrics
            .total(metrics::ANSWERS, Some(("Form", "opener"))),
        1.0
    );
    // A redelivery of the same job judges nothing again.
    let (job, _) = done
        .iter()
        .find(|(j, _)| matches!(j, Job::Proactive(ProactiveJob { .. })))
        .expect("the judgment");
    let again = bed.run(job).await;
    assert!(
        matches!(again, JobOutcome::Proactive(ProactiveOutcome::Stale)),
        "{again:?}"
    );
    assert_eq!(bed.llm_calls_of(PromptKind::Proactive).await.len(), 1);
}

#[tokio::test]
async fn outside_working_hours_it_waits_for_the_next_window_and_never_runs_late() {
    let bed = bed(|_| {}).await;
    // Friday 2026-01-09 19:00: the next window is Monday's.
    let friday_evening = 4 * DAY + 11 * HOUR;
    set(&bed, friday_evening);
    bed.seed(&[message(GENERAL, BOB, ts(3 * DAY), None, "see you monday")])
        .await;
    active(&bed, GENERAL, 3 * DAY).await;
    let planned = sweep(&bed).await;
    let monday_slot = 7 * DAY + MONDAY_SLOT;
    assert_eq!(planned, vec![(GENERAL.to_owned(), at(monday_slot))]);
    for (_, due, _) in pending(&bed) {
        assert!(
            due >= bed.now() + Duration::seconds(60),
            "never in the past"
        );
    }
    // Delivered in the evening (late, or by hand): nothing, no LLM call.
    bed.script.set_proactive(opening(Some(TOPIC)));
    let outcome = judge(&bed, GENERAL, friday_evening - HOUR).await;
    assert_eq!(outcome, ProactiveOutcome::Held(Hold::OutsideHours));
    // Saturday noon too.
    set(&bed, 5 * DAY + 4 * HOUR);
    let outcome = judge(&bed, GENERAL, friday_evening).await;
    assert_eq!(outcome, ProactiveOutcome::Held(Hold::OutsideHours));
    assert!(bed.llm_calls_of(PromptKind::Proactive).await.is_empty());
    assert!(bed.posts().await.is_empty());
}

#[tokio::test]
async fn unlisted_private_and_shared_channels_get_nothing() {
    // Listed by id: GENERAL only.
    let bed = bed(|_| {}).await;
    for id in [GENERAL, RANDOM, SECRET, PARTNERS] {
        quiet(&bed, id).await;
    }
    assert_eq!(
        sweep(&bed).await,
        vec![(GENERAL.to_owned(), at(MONDAY_SLOT))]
    );

    // `public`: the open channels, not the private or the shared one.
    let bed = self::bed(|s| {
        s.proactive_channels = ProactiveChannels::parse("public").expect("word");
    })
    .await;
    for id in [GENERAL, RANDOM, SECRET, PARTNERS] {
        quiet(&bed, id).await;
    }
    let mut planned: Vec<String> = sweep(&bed).await.into_iter().map(|(c, _)| c).collect();
    planned.sort();
    assert_eq!(planned, vec![GENERAL.to_owned(), RANDOM.to_owned()]);
    // A job for the private channel (made before it became private, say)
    // does nothing either.
    bed.script.set_proactive(opening(Some(TOPIC)));
    set(&bed, MONDAY_SLOT);
    for id in [SECRET, PARTNERS] {
        assert_eq!(
            judge(&bed, id, 0).await,
            ProactiveOutcome::Held(Hold::NotAllowed),
            "{id}"
        );
    }
    assert!(bed.llm_calls_of(PromptKind::Proactive).await.is_empty());

    // Listed, but only mentions are answered there: nothing unprompted.
    let bed = self::bed(|s| {
        s.channel_chattiness
            .insert(channel(GENERAL), Chattiness::MentionsOnly);
    })
    .await;
    quiet(&bed, GENERAL).await;
    assert_eq!(sweep(&bed).await, vec![]);
    set(&bed, MONDAY_SLOT);
    assert_eq!(
        judge(&bed, GENERAL, 0).await,
        ProactiveOutcome::Held(Hold::MentionsOnly)
    );

    // Off (the default): nothing at all.
    let bed = self::bed(|s| s.proactive = false).await;
    quiet(&bed, GENERAL).await;
    assert_eq!(sweep(&bed).await, vec![]);
    assert!(pending(&bed).is_empty());
    set(&bed, MONDAY_SLOT);
    assert_eq!(
        judge(&bed, GENERAL, 0).await,
        ProactiveOutcome::Held(Hold::Off)
    );
    assert!(bed.llm_calls_of(PromptKind::Proactive).await.is_empty());
}

#[tokio::test]
async fn a_channel_not_quiet_long_enough_or_that_spoke_since_gets_nothing() {
    let bed = bed(|_| {}).await;
    // Quiet for 23 hours only.
    bed.seed(&[message(GENERAL, BOB, ts(-23 * HOUR), None, "late again")])
        .await;
    active(&bed, GENERAL, -23 * HOUR).await;
    assert_eq!(sweep(&bed).await, vec![]);

    // Quiet long enough: planned; then someone replies in a thread before
    // it runs, and it is stale.
    let bed = self::bed(|_| {}).await;
    quiet(&bed, GENERAL).await;
    assert_eq!(sweep(&bed).await.len(), 1);
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(HOUR),
        Some(ts(-30 * HOUR)),
        "how did the move go?",
    )])
    .await;
    bed.script.set_proactive(opening(Some(TOPIC)));
    set(&bed, MONDAY_SLOT);
    let done = run_due(&bed).await;
    assert!(
        done.iter()
            .any(|(_, o)| matches!(o, JobOutcome::Proactive(ProactiveOutcome::Stale))),
        "{done:?}"
    );
    assert!(bed.llm_calls_of(PromptKind::Proactive).await.is_empty());
    assert!(bed.posts().await.is_empty());
    assert_eq!(
        bed.metrics
            .total(metrics::PROACTIVE_JUDGMENTS, Some(("Outcome", "stale"))),
        1.0
    );
}

#[tokio::test]
async fn the_weekly_cap_holds_and_it_never_opens_twice_in_a_row() {
    let bed = bed(|_| {}).await;
    quiet(&bed, GENERAL).await;
    bed.script.set_proactive(opening(Some(TOPIC)));
    sweep(&bed).await;
    set(&bed, MONDAY_SLOT);
    run_due(&bed).await;
    assert_eq!(bed.posts().await.len(), 1);

    // Tuesday 14:05, nobody answered: its own opening is the newest message.
    set(&bed, DAY + MONDAY_SLOT + 300);
    assert_eq!(
        judge(&bed, GENERAL, DAY).await,
        ProactiveOutcome::Held(Hold::BotSpokeLast)
    );
    // Someone answers on Monday evening; by Wednesday the channel is quiet
    // again, but the week's one opening is used: nothing planned, and a job
    // made anyway stops before the LLM.
    let opener = bed
        .store
        .recent_messages(&channel(GENERAL), 1)
        .await
        .expect("read")
        .pop()
        .expect("the opening");
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(MONDAY_SLOT + HOUR),
        Some(opener.ts),
        "it went fine!",
    )])
    .await;
    active(&bed, GENERAL, MONDAY_SLOT + HOUR).await;
    set(&bed, 2 * DAY);
    assert_eq!(sweep(&bed).await, vec![]);
    set(&bed, 2 * DAY + MONDAY_SLOT);
    assert_eq!(
        judge(&bed, GENERAL, 2 * DAY).await,
        ProactiveOutcome::Held(Hold::WeekFull)
    );
    assert_eq!(bed.llm_calls_of(PromptKind::Proactive).await.len(), 1);
    assert_eq!(bed.posts().await.len(), 1);

    // The next week: planned again.
    set(&bed, 7 * DAY);
    assert_eq!(
        sweep(&bed).await,
        vec![(GENERAL.to_owned(), at(7 * DAY + MONDAY_SLOT))]
    );
}

#[tokio::test]
async fn a_bad_answer_or_a_no_is_silence() {
    let bed = bed(|_| {}).await;
    quiet(&bed, GENERAL).await;
    set(&bed, MONDAY_SLOT);
    for (n, answer) in [
        "sure, let's talk about cats".to_owned(),
        r#"{"open": "yes", "topic": "cats"}"#.to_owned(),
        r#"{"open": true, "topic": ""}"#.to_owned(),
        opening(None),
    ]
    .into_iter()
    .enumerate()
    {
        bed.script.set_proactive(answer.clone());
        let outcome = judge(&bed, GENERAL, -(n as i64) - 1).await;
        if answer == opening(None) {
            assert_eq!(outcome, ProactiveOutcome::Declined);
        } else {
            assert!(
                matches!(outcome, ProactiveOutcome::Silent { .. }),
                "{answer}: {outcome:?}"
            );
        }
    }
    assert_eq!(bed.llm_calls_of(PromptKind::Proactive).await.len(), 4);
    assert!(bed.board.queued().is_empty(), "no opening queued");
    assert!(bed.posts().await.is_empty());
    // The week's opening is still there: a yes now posts.
    bed.script.set_proactive(opening(Some(TOPIC)));
    assert!(matches!(
        judge(&bed, GENERAL, -10).await,
        ProactiveOutcome::Open { .. }
    ));
    assert_eq!(
        bed.metrics
            .total(metrics::PROACTIVE_JUDGMENTS, Some(("Outcome", "unusable"))),
        3.0
    );
}
