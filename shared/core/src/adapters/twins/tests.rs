use crate::ports::{Claims, Messages};
use std::sync::Arc;

use crate::ports::{Clock, Edit, Insert, Queue, Scheduler};
use crate::schedule::ScheduleName;
use myao_domain::{
    ChannelId, Conversation, Job, JudgmentJob, Message, TeamJob, ThreadMemoryJob, Ts, UserId,
};

use super::*;
use crate::adapters::system::ManualClock;
use chrono::Duration;
use myao_domain::JobKind;
use myao_testkit::message::message;
use myao_testkit::time::at;

/// U1's message in C1, its text `m` and its ts.
fn msg(ts: &str, thread: Option<&str>) -> Message {
    message("C1", "U1", ts, thread, &format!("m{ts}"))
}

#[tokio::test]
async fn store_inserts_once_and_keeps_tombstones() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    let m = msg("10.0", None);
    assert_eq!(
        s.insert_message(&m, false, at(9_999)).await.unwrap(),
        Insert::New
    );
    assert_eq!(
        s.insert_message(&m, true, at(9_999)).await.unwrap(),
        Insert::Duplicate { routed: false }
    );
    s.mark_routed(&m.channel, m.ts).await.unwrap();
    assert_eq!(
        s.insert_message(&m, true, at(9_999)).await.unwrap(),
        Insert::Duplicate { routed: true }
    );
    s.delete_message(&m.channel, m.ts, at(9_999)).await.unwrap();
    assert_eq!(
        s.insert_message(&m, false, at(9_999)).await.unwrap(),
        Insert::Deleted
    );
    assert_eq!(s.get_message(&m.channel, m.ts).await.unwrap(), None);
    assert_eq!(
        s.edit_message(&m.channel, m.ts, "x", at(9_999))
            .await
            .unwrap(),
        Edit::Deleted
    );
}

#[tokio::test]
async fn an_edit_that_comes_first_wins_over_its_late_message() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    let m = Message::new(
        ChannelId::parse("C1").unwrap(),
        UserId::parse("U1").unwrap(),
        "the old text",
        Ts::parse("5.0").unwrap(),
        None,
        false,
    );
    assert_eq!(
        s.edit_message(&m.channel, m.ts, "the new text", at(9_999))
            .await
            .unwrap(),
        Edit::Pending
    );
    assert_eq!(s.get_message(&m.channel, m.ts).await.unwrap(), None);
    assert_eq!(
        s.insert_message(&m, false, at(9_999)).await.unwrap(),
        Insert::New
    );
    let stored = s.get_message(&m.channel, m.ts).await.unwrap().unwrap();
    assert_eq!(stored.text, "the new text");
    assert_eq!(
        s.edit_message(&m.channel, m.ts, "third", at(9_999))
            .await
            .unwrap(),
        Edit::Applied
    );
}

#[tokio::test]
async fn store_reads_by_conversation_and_recency() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    for (ts, th) in [
        ("1.0", None),
        ("2.0", Some("1.0")),
        ("3.0", None),
        ("4.0", Some("1.0")),
        ("5.0", None),
    ] {
        s.insert_message(&msg(ts, th), true, at(9_999))
            .await
            .unwrap();
    }
    let c = ChannelId::parse("C1").unwrap();
    let texts = |v: Vec<Message>| v.into_iter().map(|m| m.text).collect::<Vec<_>>();
    assert_eq!(
        texts(s.recent_messages(&c, 2).await.unwrap()),
        ["m4.0", "m5.0"]
    );
    let thread = Conversation::thread(c.clone(), Ts::parse("1.0").unwrap());
    assert_eq!(
        texts(s.conversation_messages(&thread, 10).await.unwrap()),
        ["m2.0", "m4.0"]
    );
    let top = Conversation::top_level(c.clone());
    assert_eq!(
        texts(s.conversation_messages(&top, 2).await.unwrap()),
        ["m3.0", "m5.0"]
    );
    assert_eq!(
        texts(
            s.messages_after(&c, Some(Ts::parse("3.0").unwrap()), 10)
                .await
                .unwrap()
        ),
        ["m4.0", "m5.0"]
    );
    // expired messages are not read
    clock.set(at(10_000));
    assert!(s.recent_messages(&c, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn claims_are_granted_once_until_released_or_expired() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    assert!(s.claim("k", at(2_000)).await.unwrap());
    assert!(!s.claim("k", at(2_000)).await.unwrap());
    assert_eq!(s.held_until("k").await.unwrap(), Some(at(2_000)));
    s.release("k").await.unwrap();
    assert_eq!(s.held_until("k").await.unwrap(), None);
    assert!(s.claim("k", at(2_000)).await.unwrap());
    clock.set(at(2_001));
    assert_eq!(s.held_until("k").await.unwrap(), None);
    assert!(s.claim("k", at(3_000)).await.unwrap());
}

#[tokio::test]
async fn counters_stop_at_their_limit_until_they_expire() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    assert!(!s.count("none", 0, at(2_000)).await.unwrap());
    for _ in 0..3 {
        assert!(s.count("k", 3, at(2_000)).await.unwrap());
    }
    assert!(!s.count("k", 3, at(2_000)).await.unwrap());
    assert!(s.count("k", 4, at(2_000)).await.unwrap(), "a higher limit");
    assert!(s.count("other", 3, at(2_000)).await.unwrap());
    // The first count set the expiry: a later one does not move it.
    clock.set(at(1_999));
    assert!(!s.count("k", 4, at(9_000)).await.unwrap());
    clock.set(at(2_000));
    assert!(
        s.count("k", 1, at(3_000)).await.unwrap(),
        "expired: from zero"
    );
    assert!(!s.count("k", 1, at(3_000)).await.unwrap());
}

#[tokio::test]
async fn board_upsert_replaces_the_pending_job_of_a_name() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let b = JobBoard::new(clock.clone());
    let c = ChannelId::parse("C1").unwrap();
    let conv = Conversation::top_level(c.clone());
    let name = ScheduleName::for_conversation(JobKind::Judgment, &conv);
    let job = |n: &str| {
        Job::Judgment(JudgmentJob {
            channel: c.clone(),
            thread_ts: None,
            newest_ts: Ts::parse(n).unwrap(),
        })
    };
    b.upsert(&name, at(1_300), &job("1.0")).await.unwrap();
    b.upsert(&name, at(1_400), &job("2.0")).await.unwrap();
    assert_eq!(b.scheduled().len(), 1);
    assert!(
        b.take_due(at(1_300)).is_empty(),
        "the first time was replaced"
    );
    assert_eq!(b.take_due(at(1_400)), vec![stacks(job("2.0"))]);
    assert!(b.scheduled().is_empty());
}

/// `job` as the stack's own (no team).
fn stacks(job: Job) -> TeamJob {
    TeamJob { team: None, job }
}

#[tokio::test]
async fn a_teams_jobs_carry_the_team_and_never_move_another_teams_wait() {
    use myao_domain::TeamId;
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let b = JobBoard::new(clock.clone());
    let (acme, beta) = (
        TeamId::parse("T0ACME").unwrap(),
        TeamId::parse("T0BETA").unwrap(),
    );
    let c = ChannelId::parse("C1").unwrap();
    let name =
        ScheduleName::for_conversation(JobKind::Judgment, &Conversation::top_level(c.clone()));
    let job = Job::Judgment(JudgmentJob {
        channel: c,
        thread_ts: None,
        newest_ts: Ts::parse("1.0").unwrap(),
    });
    // One channel shared by two workspaces: one name in each, and the stack's.
    b.for_team(&acme)
        .upsert(&name, at(1_100), &job)
        .await
        .unwrap();
    Scheduler::for_team(&b, &beta)
        .upsert(&name, at(1_200), &job)
        .await
        .unwrap();
    b.upsert(&name, at(1_300), &job).await.unwrap();
    Queue::for_team(&b, &beta)
        .send(&Job::Purge, 0)
        .await
        .unwrap();
    assert_eq!(b.scheduled().len(), 3);
    assert!(b.for_team(&acme).get(&name).await.unwrap().is_some());
    let due = b.take_due(at(1_300));
    let teams: Vec<_> = due.iter().map(|d| (d.team.clone(), d.job.kind())).collect();
    assert_eq!(
        teams,
        vec![
            (Some(beta.clone()), JobKind::Purge),
            (Some(acme), JobKind::Judgment),
            (Some(beta), JobKind::Judgment),
            (None, JobKind::Judgment),
        ]
    );
}

#[tokio::test]
async fn board_queue_honours_delays_and_order() {
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let b = JobBoard::new(clock.clone());
    let a = Job::MemorySweep;
    let c = Job::ThreadMemory(ThreadMemoryJob {
        channel: ChannelId::parse("C1").unwrap(),
        thread_ts: Ts::parse("1.0").unwrap(),
    });
    b.send(&a, 30).await.unwrap();
    b.send(&c, 0).await.unwrap();
    assert!(b.send(&a, 901).await.is_err());
    assert_eq!(b.next_due(), Some(at(1_000)));
    assert_eq!(b.take_due(at(1_000)), vec![stacks(c)]);
    clock.advance(Duration::seconds(30));
    assert_eq!(b.take_due(clock.now()), vec![stacks(a)]);
}

#[tokio::test]
async fn board_runs_jobs_in_real_time() {
    use crate::adapters::system::SystemClock;
    let b = Arc::new(JobBoard::new(Arc::new(SystemClock)));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let runner = tokio::spawn(b.clone().run(
        move |job| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(job);
            }
        },
        std::future::pending(),
    ));
    b.send(&Job::MemorySweep, 0).await.unwrap();
    let got = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
        .await
        .unwrap();
    assert_eq!(got, Some(stacks(Job::MemorySweep)));
    runner.abort();
}

#[tokio::test]
async fn the_twin_renews_an_installation_once_and_takes_a_state_back_once() {
    use crate::ports::Installations;
    use myao_domain::install::{Installation, Rotation, Token};
    use myao_domain::TeamId;

    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    let install = |token: &str, expires: i64| Installation {
        team: TeamId::parse("T1").unwrap(),
        enterprise: None,
        team_name: "acme".into(),
        bot_user_id: UserId::parse("UBOT").unwrap(),
        scopes: vec![],
        bot_token: Token::new(token),
        rotation: Some(Rotation {
            refresh_token: Token::new("r"),
            expires_at: at(expires),
        }),
        installed_at: at(1_000),
    };
    s.put_installation(&install("a", 5_000)).await.unwrap();
    assert!(s
        .renew_installation(&install("b", 9_000), at(5_000))
        .await
        .unwrap());
    assert!(!s
        .renew_installation(&install("c", 9_000), at(5_000))
        .await
        .unwrap());
    let team = TeamId::parse("T1").unwrap();
    let kept = s.installation(&team).await.unwrap().unwrap();
    assert_eq!(kept.bot_token.expose(), "b");
    s.delete_installation(&team).await.unwrap();
    assert!(s.installations().await.unwrap().is_empty());

    s.put_oauth_state("st", at(1_600)).await.unwrap();
    s.put_oauth_state("old", at(1_100)).await.unwrap();
    clock.set(at(1_200));
    assert!(s.take_oauth_state("st").await.unwrap());
    assert!(!s.take_oauth_state("st").await.unwrap(), "once");
    assert!(!s.take_oauth_state("old").await.unwrap(), "expired");
}

/// Issue 56: `myao serve` kept every install state forever (156 B more
/// per anonymous `GET /slack/install`).
#[tokio::test]
async fn the_twins_install_states_are_deleted_once_expired_and_held_to_a_number() {
    use super::OAUTH_STATES_HELD;
    use crate::ports::Installations;

    let clock = Arc::new(ManualClock::new(at(1_000)));
    let s = MemoryStore::new(clock.clone());
    for i in 0..100 {
        s.put_oauth_state(&format!("early{i}"), at(1_600))
            .await
            .unwrap();
    }
    // Past their ten minutes, the next install's state finds them gone.
    clock.set(at(1_601));
    s.put_oauth_state("next", at(2_200)).await.unwrap();
    assert_eq!(s.oauth_states_kept(), 1);

    // A flood within ten minutes: never more than the bound, the oldest
    // dropped first, the newest kept.
    for i in 0..OAUTH_STATES_HELD + 50 {
        let until = at(2_201) + chrono::Duration::milliseconds(i as i64);
        s.put_oauth_state(&format!("flood{i}"), until)
            .await
            .unwrap();
    }
    assert_eq!(s.oauth_states_kept(), OAUTH_STATES_HELD);
    assert!(
        !s.take_oauth_state("next").await.unwrap(),
        "the oldest made room"
    );
    assert!(!s.take_oauth_state("flood0").await.unwrap());
    let newest = format!("flood{}", OAUTH_STATES_HELD + 49);
    assert!(s.take_oauth_state(&newest).await.unwrap());
}

#[tokio::test]
async fn each_team_has_its_own_part_of_the_twin_and_a_purge_empties_only_its_own() {
    use crate::ports::{Installations, Teams};
    use myao_domain::TeamId;
    let clock = Arc::new(ManualClock::new(at(1_000)));
    let stack = MemoryStore::new(clock);
    let acme_id = TeamId::parse("T0ACME").unwrap();
    let acme = stack.for_team(&acme_id);
    let beta = Teams::for_team(&stack, &TeamId::parse("T0BETA").unwrap());
    let said = |text: &str| message("C1", "U1", "10.0", None, text);
    stack
        .insert_message(&said("plinth"), false, at(9_999))
        .await
        .unwrap();
    acme.insert_message(&said("quokka"), false, at(9_999))
        .await
        .unwrap();
    beta.insert_message(&said("zephyr"), false, at(9_999))
        .await
        .unwrap();
    assert!(acme.count("llm", 1, at(9_999)).await.unwrap());
    assert_eq!(text(&stack).await.as_deref(), Some("plinth"));
    assert_eq!(text(&acme).await.as_deref(), Some("quokka"));
    assert_eq!(text(beta.as_ref()).await.as_deref(), Some("zephyr"));
    // The same team's store again is the same part.
    assert_eq!(
        text(&stack.for_team(&acme_id)).await.as_deref(),
        Some("quokka")
    );

    assert_eq!(stack.purge_team(&acme_id).await.unwrap(), 2);
    // A store of the team handed out before the purge finds nothing either.
    assert_eq!(text(&acme).await, None);
    assert!(
        acme.count("llm", 1, at(9_999)).await.unwrap(),
        "counted afresh"
    );
    assert_eq!(text(beta.as_ref()).await.as_deref(), Some("zephyr"));
    assert_eq!(text(&stack).await.as_deref(), Some("plinth"));
    assert_eq!(
        stack
            .purge_team(&TeamId::parse("T0NONE").unwrap())
            .await
            .unwrap(),
        0
    );
    // Installations are the stack's, from whichever store.
    assert!(acme.installations().await.unwrap().is_empty());
}

/// The text of the message at 10.0 in C1, if `store` has it.
async fn text(store: &dyn Messages) -> Option<String> {
    let channel = ChannelId::parse("C1").unwrap();
    store
        .get_message(&channel, Ts::parse("10.0").unwrap())
        .await
        .unwrap()
        .map(|m| m.text)
}
