//! The AWS adapters against the emulator (moto server at
//! `MYAO_TEST_AWS_ENDPOINT`; see `myao_tests::emulator_endpoint`). Every test
//! makes its own table, schedule group, queues or parameter path.
//!
//! - DynamoDB (`DynamoStore`): `store_*`
//! - EventBridge Scheduler (`EventBridgeScheduler`): `scheduler_*`
//! - SQS (`SqsQueue`): `queue_*`
//! - SSM (`SsmSettingsSource`, `SsmSecrets`): `ssm_*`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use anyhow::{bail, ensure, Context as _, Result};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_scheduler::config::interceptors::BeforeSerializationInterceptorContextRef;
use aws_sdk_scheduler::config::{ConfigBag, Intercept};
use aws_sdk_scheduler::error::BoxError;
use aws_sdk_scheduler::operation::create_schedule::CreateScheduleInput;
use aws_sdk_scheduler::types::{
    ActionAfterCompletion, FlexibleTimeWindow, FlexibleTimeWindowMode, ScheduleState, Target,
};
use aws_sdk_ssm::types::ParameterType;
use chrono::{DateTime, Duration, Utc};
use myao::adapters::aws::scheduler::EventBridgeScheduler;
use myao::adapters::aws::ssm::{SsmSecrets, SsmSettingsSource};
use myao::adapters::system::ManualClock;
use myao::domain::{
    Channel, ChannelId, Conversation, Job, Memory, MemoryKind, MemoryScope, Message, ScheduleName,
    Settings, Ts, User, UserId,
};
use myao::ports::{Clock, Insert, Queue, Scheduler, Secrets, SettingsSource, Store};
use myao_tests::{
    aws_config, dynamodb_client, fresh_queues, fresh_scheduler, fresh_store,
    fresh_store_with_clock, function_arn, ssm_client, unique,
};

// ---- helpers ------------------------------------------------------------------

fn ts(text: &str) -> Ts {
    Ts::parse(text).unwrap_or_else(|e| panic!("bad ts {text:?} in a test: {e}"))
}

fn channel(id: &str) -> ChannelId {
    ChannelId::parse(id).unwrap_or_else(|e| panic!("bad channel {id:?} in a test: {e}"))
}

fn user(id: &str) -> UserId {
    UserId::parse(id).unwrap_or_else(|e| panic!("bad user {id:?} in a test: {e}"))
}

fn at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_else(|| panic!("bad time {secs}"))
}

fn msg(ch: &str, ts_: &str, thread: Option<&str>, text: &str) -> Message {
    Message::new(
        channel(ch),
        user("U1"),
        text,
        ts(ts_),
        thread.map(ts),
        false,
    )
}

/// Far enough ahead that nothing expires during a test.
fn later() -> DateTime<Utc> {
    Utc::now() + Duration::days(30)
}

fn texts(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.text.as_str()).collect()
}

async fn insert_all(store: &dyn Store, messages: &[Message]) -> Result<()> {
    for m in messages {
        let inserted = store.insert_message(m, true, later()).await?;
        ensure!(inserted == Insert::New, "{} was {inserted:?}", m.ts);
    }
    Ok(())
}

fn name(text: &str) -> ScheduleName {
    ScheduleName::parse(text).unwrap_or_else(|e| panic!("bad schedule name {text:?}: {e}"))
}

fn judgment(newest: &str) -> Job {
    Job::Judgment {
        channel: channel("C1"),
        thread_ts: Some(ts("100.0")),
        newest_ts: ts(newest),
    }
}

fn response(newest: &str) -> Job {
    Job::Response {
        channel: channel("C1"),
        thread_ts: None,
        newest_ts: ts(newest),
        mention: true,
    }
}

// ---- DynamoDB -------------------------------------------------------------------

#[tokio::test]
async fn store_reads_messages_newest_n_oldest_first_by_channel_and_conversation() -> Result<()> {
    let store = fresh_store().await;
    insert_all(
        &store,
        &[
            msg("C1", "1.0", None, "root"),
            msg("C1", "2.0", Some("1.0"), "reply a"),
            msg("C1", "3.0", None, "top b"),
            msg("C1", "4.0", Some("1.0"), "reply c"),
            msg("C1", "5.0", None, "top d"),
            // Another thread, and another channel, stay apart.
            msg("C1", "6.0", Some("3.0"), "other thread"),
            msg("C2", "7.0", None, "elsewhere"),
            // Numeric order, not text order: 10 > 9.
            msg("C1", "10.0", None, "top ten"),
        ],
    )
    .await?;
    let c1 = channel("C1");

    let recent = store.recent_messages(&c1, 3).await?;
    assert_eq!(texts(&recent), ["top d", "other thread", "top ten"]);
    let all = store.recent_messages(&c1, 100).await?;
    assert_eq!(all.len(), 7);
    assert!(store.recent_messages(&c1, 0).await?.is_empty());

    let thread = Conversation::thread(c1.clone(), ts("1.0"));
    let replies = store.conversation_messages(&thread, 10).await?;
    assert_eq!(
        texts(&replies),
        ["reply a", "reply c"],
        "replies only, no root"
    );
    assert_eq!(
        texts(&store.conversation_messages(&thread, 1).await?),
        ["reply c"]
    );

    let top = Conversation::top_level(c1.clone());
    assert_eq!(
        texts(&store.conversation_messages(&top, 10).await?),
        ["root", "top b", "top d", "top ten"]
    );
    assert_eq!(
        texts(&store.conversation_messages(&top, 2).await?),
        ["top d", "top ten"]
    );

    assert_eq!(
        texts(&store.messages_after(&c1, Some(ts("4.0")), 10).await?),
        ["top d", "other thread", "top ten"]
    );
    assert_eq!(
        texts(&store.messages_after(&c1, Some(ts("4.0")), 2).await?),
        ["other thread", "top ten"],
        "the newest ones when there are more"
    );
    assert_eq!(store.messages_after(&c1, None, 100).await?.len(), 7);
    assert!(store
        .messages_after(&c1, Some(ts("10.0")), 10)
        .await?
        .is_empty());

    let got = store.get_message(&c1, ts("2.0")).await?;
    assert_eq!(got, Some(msg("C1", "2.0", Some("1.0"), "reply a")));
    assert_eq!(store.get_message(&c1, ts("99.0")).await?, None);
    Ok(())
}

#[tokio::test]
async fn store_rejects_a_duplicate_insert_and_reports_whether_it_was_routed() -> Result<()> {
    let store = fresh_store().await;
    let m = msg("C1", "1712345678.000001", None, "hi");
    assert_eq!(store.insert_message(&m, false, later()).await?, Insert::New);

    let mut again = m.clone();
    again.text = "a redelivery must not overwrite".into();
    assert_eq!(
        store.insert_message(&again, true, later()).await?,
        Insert::Duplicate { routed: false }
    );
    store.mark_routed(&m.channel, m.ts).await?;
    assert_eq!(
        store.insert_message(&again, false, later()).await?,
        Insert::Duplicate { routed: true }
    );
    assert_eq!(store.get_message(&m.channel, m.ts).await?, Some(m.clone()));

    // Marking an unknown message is a no-op, and does not create it.
    store.mark_routed(&m.channel, ts("5.0")).await?;
    assert_eq!(store.get_message(&m.channel, ts("5.0")).await?, None);
    Ok(())
}

#[tokio::test]
async fn store_edits_known_messages_only() -> Result<()> {
    let store = fresh_store().await;
    let m = msg("C1", "1.0", None, "before");
    insert_all(&store, std::slice::from_ref(&m)).await?;

    assert!(store.edit_message(&m.channel, m.ts, "after").await?);
    let got = store
        .get_message(&m.channel, m.ts)
        .await?
        .context("the edited message")?;
    assert_eq!(got.text, "after");

    assert!(!store.edit_message(&m.channel, ts("2.0"), "x").await?);
    assert_eq!(
        store.get_message(&m.channel, ts("2.0")).await?,
        None,
        "an edit never creates a message"
    );
    Ok(())
}

#[tokio::test]
async fn store_delete_leaves_a_tombstone_that_hides_the_message_everywhere() -> Result<()> {
    let store = fresh_store().await;
    let c1 = channel("C1");
    let reply = msg("C1", "2.0", Some("1.0"), "secret reply");
    insert_all(
        &store,
        &[
            msg("C1", "1.0", None, "root"),
            reply.clone(),
            msg("C1", "3.0", Some("1.0"), "reply b"),
        ],
    )
    .await?;
    store.delete_message(&c1, reply.ts, later()).await?;

    assert_eq!(store.get_message(&c1, reply.ts).await?, None);
    assert_eq!(
        texts(&store.recent_messages(&c1, 10).await?),
        ["root", "reply b"]
    );
    let thread = Conversation::thread(c1.clone(), ts("1.0"));
    assert_eq!(
        texts(&store.conversation_messages(&thread, 10).await?),
        ["reply b"]
    );
    assert_eq!(
        texts(&store.messages_after(&c1, Some(ts("1.0")), 10).await?),
        ["reply b"]
    );
    assert!(!store.edit_message(&c1, reply.ts, "resurrected?").await?);
    assert_eq!(
        store.insert_message(&reply, false, later()).await?,
        Insert::Deleted,
        "a late redelivery stays deleted"
    );

    // The tombstone keeps no text and is out of the conversation index.
    let raw = dynamodb_client()
        .await
        .get_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S("CH#C1".into()))
        .key(
            "sk",
            AttributeValue::S(format!("M#{}", reply.ts.sort_key())),
        )
        .send()
        .await?
        .item
        .context("the tombstone")?;
    assert_eq!(raw.get("deleted"), Some(&AttributeValue::Bool(true)));
    for gone in ["text", "gsi1pk", "gsi1sk"] {
        assert!(!raw.contains_key(gone), "the tombstone has {gone}");
    }

    // A delete seen before its message also leaves a tombstone.
    let early = msg("C1", "9.0", None, "deleted before it arrived");
    store.delete_message(&c1, early.ts, later()).await?;
    assert_eq!(
        store.insert_message(&early, false, later()).await?,
        Insert::Deleted
    );
    assert_eq!(store.recent_messages(&c1, 10).await?.len(), 2);
    Ok(())
}

#[tokio::test]
async fn store_filters_expired_items_and_pages_past_them() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let c1 = channel("C1");
    let now = clock.now();
    // Three live old messages, then twelve newer ones that expire sooner
    // and four tombstones: the newest pages hold nothing live.
    for i in 1..=3 {
        let m = msg("C1", &format!("{i}.0"), None, &format!("live {i}"));
        store
            .insert_message(&m, true, now + Duration::days(1))
            .await?;
    }
    for i in 10..22 {
        let m = msg("C1", &format!("{i}.0"), None, &format!("short-lived {i}"));
        store
            .insert_message(&m, true, now + Duration::hours(1))
            .await?;
    }
    for i in 30..34 {
        store
            .delete_message(&c1, ts(&format!("{i}.0")), now + Duration::days(1))
            .await?;
    }
    assert_eq!(store.recent_messages(&c1, 3).await?.len(), 3);

    clock.advance(Duration::hours(2));
    assert_eq!(
        texts(&store.recent_messages(&c1, 3).await?),
        ["live 1", "live 2", "live 3"],
        "expired items are skipped, and the read goes on to older pages"
    );
    assert_eq!(
        texts(&store.recent_messages(&c1, 2).await?),
        ["live 2", "live 3"]
    );
    let top = Conversation::top_level(c1.clone());
    assert_eq!(store.conversation_messages(&top, 10).await?.len(), 3);
    assert_eq!(
        store.messages_after(&c1, Some(ts("2.0")), 10).await?.len(),
        1
    );
    assert_eq!(store.get_message(&c1, ts("10.0")).await?, None);
    assert!(!store.edit_message(&c1, ts("10.0"), "x").await?);

    // An expired message counts as absent: a new one may take its place.
    let again = msg("C1", "10.0", None, "fresh");
    assert_eq!(
        store
            .insert_message(&again, false, clock.now() + Duration::days(1))
            .await?,
        Insert::New
    );
    assert_eq!(store.get_message(&c1, ts("10.0")).await?, Some(again));
    Ok(())
}

#[tokio::test]
async fn store_table_has_its_index_and_ttl_and_survives_being_created_again() -> Result<()> {
    let store = fresh_store().await;
    let m = msg("C1", "1.0", None, "kept");
    insert_all(&store, std::slice::from_ref(&m)).await?;
    let client = dynamodb_client().await;
    myao::adapters::aws::dynamodb::create_table(&client, store.table()).await?;
    assert_eq!(store.get_message(&m.channel, m.ts).await?, Some(m));

    let table = client
        .describe_table()
        .table_name(store.table())
        .send()
        .await?
        .table
        .context("the table")?;
    let gsi = table
        .global_secondary_indexes()
        .iter()
        .find(|g| g.index_name() == Some("gsi1"))
        .context("gsi1")?;
    assert_eq!(
        gsi.projection().and_then(|p| p.projection_type()),
        Some(&aws_sdk_dynamodb::types::ProjectionType::All)
    );
    let ttl = client
        .describe_time_to_live()
        .table_name(store.table())
        .send()
        .await?
        .time_to_live_description
        .context("TTL")?;
    assert_eq!(
        ttl.time_to_live_status(),
        Some(&aws_sdk_dynamodb::types::TimeToLiveStatus::Enabled)
    );
    assert_eq!(ttl.attribute_name(), Some("expires_at"));
    Ok(())
}

#[tokio::test]
async fn store_refuses_a_corrupt_item_naming_its_key() -> Result<()> {
    let store = fresh_store().await;
    dynamodb_client()
        .await
        .put_item()
        .table_name(store.table())
        .item("pk", AttributeValue::S("CH#C1".into()))
        .item("sk", AttributeValue::S("M#0000000000000001.000000".into()))
        .item("channel", AttributeValue::S("C1".into()))
        .item("ts", AttributeValue::S("not a ts".into()))
        .send()
        .await?;
    let err = store
        .get_message(&channel("C1"), ts("1.0"))
        .await
        .expect_err("a corrupt item is an error");
    assert!(!err.is_retryable());
    let text = err.to_string();
    assert!(text.contains("CH#C1/M#0000000000000001.000000"), "{text}");
    assert!(store.recent_messages(&channel("C1"), 5).await.is_err());
    Ok(())
}

#[tokio::test]
async fn store_keeps_channels_with_their_latest_activity() -> Result<()> {
    let store = fresh_store().await;
    // Whole milliseconds: the activity time is stored in epoch millis.
    let t1 = at(1_700_000_000) + Duration::milliseconds(250);
    let general = Channel {
        id: channel("C1"),
        name: "general".into(),
    };
    store.touch_channel(&general, t1).await?;
    let got = store.get_channel(&general.id).await?.context("C1")?;
    assert_eq!(got.channel, general);
    assert_eq!(got.last_active, t1);

    // An older activity keeps the time but takes the (new) name.
    let renamed = Channel {
        id: channel("C1"),
        name: "lobby".into(),
    };
    store
        .touch_channel(&renamed, t1 - Duration::hours(1))
        .await?;
    let got = store.get_channel(&general.id).await?.context("C1")?;
    assert_eq!(got.channel.name, "lobby");
    assert_eq!(got.last_active, t1);

    let t2 = t1 + Duration::minutes(5);
    store.touch_channel(&renamed, t2).await?;
    assert_eq!(
        store
            .get_channel(&general.id)
            .await?
            .context("C1")?
            .last_active,
        t2
    );

    let random = Channel {
        id: channel("C2"),
        name: "random".into(),
    };
    store.touch_channel(&random, t1).await?;
    let mut all = store.channels().await?;
    all.sort_by(|a, b| a.channel.id.cmp(&b.channel.id));
    let ids: Vec<&str> = all.iter().map(|r| r.channel.id.as_str()).collect();
    assert_eq!(ids, ["C1", "C2"]);
    assert_eq!(store.get_channel(&channel("C9")).await?, None);
    Ok(())
}

#[tokio::test]
async fn store_round_trips_users() -> Result<()> {
    let store = fresh_store().await;
    let alice = User {
        id: user("U1"),
        name: "alice".into(),
        is_bot: false,
    };
    let fetched = Utc::now();
    store.put_user(&alice, fetched).await?;
    assert_eq!(
        store.get_user(&alice.id).await?,
        Some((alice.clone(), fetched))
    );
    let renamed = User {
        name: "alice b".into(),
        ..alice.clone()
    };
    store.put_user(&renamed, fetched).await?;
    assert_eq!(
        store.get_user(&alice.id).await?.map(|(u, _)| u.name),
        Some("alice b".into())
    );
    assert_eq!(store.get_user(&user("U404")).await?, None);
    Ok(())
}

#[tokio::test]
async fn store_round_trips_memories_and_reads_recent_thread_memories() -> Result<()> {
    let store = fresh_store().await;
    let now = Utc::now();
    let memory = |scope: MemoryScope, kind, content: &str, updated_at| Memory {
        scope,
        kind,
        content: content.into(),
        updated_at,
        newest_ts: Some(ts("42.5")),
    };
    let workspace = memory(MemoryScope::Workspace, MemoryKind::Long, "ws", now);
    let chan = memory(
        MemoryScope::Channel {
            channel: channel("C1"),
        },
        MemoryKind::Short,
        "ch",
        now,
    );
    let thread = |ch: &str, root: &str, updated_at| {
        memory(
            MemoryScope::Thread {
                channel: channel(ch),
                thread_ts: ts(root),
            },
            MemoryKind::Short,
            &format!("thread {ch}/{root}"),
            updated_at,
        )
    };
    let fresh = thread("C1", "10.0", now);
    let stale = thread("C1", "11.0", now - Duration::days(10));
    let other = thread("C2", "10.0", now);
    for m in [&workspace, &chan, &fresh, &stale, &other] {
        store.put_memory(m).await?;
    }

    assert_eq!(
        store
            .get_memory(&MemoryScope::Workspace, MemoryKind::Long)
            .await?,
        Some(workspace.clone())
    );
    assert_eq!(
        store
            .get_memory(&MemoryScope::Workspace, MemoryKind::Short)
            .await?,
        None
    );
    assert_eq!(
        store.get_memory(&chan.scope, MemoryKind::Short).await?,
        Some(chan.clone())
    );
    assert_eq!(
        store.get_memory(&fresh.scope, MemoryKind::Short).await?,
        Some(fresh.clone())
    );

    let recent = store
        .thread_memories(&channel("C1"), now - Duration::days(7))
        .await?;
    assert_eq!(recent, vec![fresh.clone()]);
    let mut both = store
        .thread_memories(&channel("C1"), now - Duration::days(30))
        .await?;
    both.sort_by(|a, b| a.content.cmp(&b.content));
    assert_eq!(both, vec![fresh.clone(), stale.clone()]);
    assert_eq!(
        store.thread_memories(&channel("C1"), now).await?,
        vec![fresh.clone()],
        "since is inclusive"
    );

    // A put replaces the memory of its scope and kind.
    let rewritten = Memory {
        content: "ws v2".into(),
        newest_ts: None,
        ..workspace.clone()
    };
    store.put_memory(&rewritten).await?;
    assert_eq!(
        store
            .get_memory(&MemoryScope::Workspace, MemoryKind::Long)
            .await?,
        Some(rewritten)
    );
    Ok(())
}

#[tokio::test]
async fn store_grants_a_claim_once_until_released_or_expired() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let until = clock.now() + Duration::minutes(10);
    let key = "response:C1:top:5.000000";
    assert!(store.claim(key, until).await?);
    assert!(!store.claim(key, until).await?);
    assert!(store.claim("another:key", until).await?);
    store.release(key).await?;
    assert!(store.claim(key, until).await?);
    assert!(!store.claim(key, until).await?);

    clock.advance(Duration::minutes(11));
    assert!(
        store
            .claim(key, clock.now() + Duration::minutes(10))
            .await?,
        "an expired claim is free"
    );
    assert!(!store.claim(key, until).await?);
    store.release("never:claimed").await?;
    Ok(())
}

// ---- EventBridge Scheduler ------------------------------------------------------

#[tokio::test]
async fn scheduler_creates_a_schedule_and_reads_it_back() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-100.000000");
    let due = Utc::now() + Duration::minutes(5);
    s.upsert(&n, due, &judgment("105.0")).await?;

    let got = s.get(&n).await?.context("the schedule")?;
    assert_eq!(got.name, n);
    assert_eq!(got.job, judgment("105.0"));
    assert!(got.at >= due && got.at - due < Duration::seconds(1));
    assert_eq!(got.at.timestamp_subsec_nanos(), 0, "whole seconds");

    // What was sent, as the service holds it.
    let raw = s
        .client
        .get_schedule()
        .name(n.as_str())
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(
        raw.schedule_expression(),
        Some(format!("at({})", got.at.format("%Y-%m-%dT%H:%M:%S")).as_str())
    );
    assert_eq!(raw.schedule_expression_timezone(), Some("UTC"));
    assert_eq!(raw.state(), Some(&ScheduleState::Enabled));
    assert_eq!(
        raw.flexible_time_window().map(|w| w.mode()),
        Some(&FlexibleTimeWindowMode::Off)
    );
    assert_eq!(
        raw.action_after_completion(),
        Some(&ActionAfterCompletion::Delete)
    );
    let target = raw.target().context("target")?;
    assert_eq!(target.arn(), function_arn("myao-judgment"));
    assert_eq!(target.role_arn(), s.role_arn);
    let retry = target.retry_policy().context("retry policy")?;
    assert_eq!(retry.maximum_event_age_in_seconds(), Some(3600));
    assert_eq!(retry.maximum_retry_attempts(), Some(3));
    assert_eq!(
        target.dead_letter_config().and_then(|d| d.arn()),
        s.dlq_arn.as_deref()
    );
    Ok(())
}

#[tokio::test]
async fn scheduler_upsert_moves_the_time_and_replaces_the_job() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-top");
    let first = at(1_900_000_000);
    s.upsert(&n, first, &judgment("105.0")).await?;
    let second = first + Duration::minutes(3);
    s.upsert(&n, second, &response("106.0")).await?;

    let got = s.get(&n).await?.context("the schedule")?;
    assert_eq!(got.at, second);
    assert_eq!(got.job, response("106.0"));
    let raw = s
        .client
        .get_schedule()
        .name(n.as_str())
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(
        raw.target().map(|t| t.arn()),
        Some(function_arn("myao-response").as_str()),
        "the new job's kind picks the target"
    );
    assert_eq!(raw.state(), Some(&ScheduleState::Enabled));

    let listed = s
        .client
        .list_schedules()
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(listed.schedules().len(), 1, "one schedule per name");
    Ok(())
}

#[tokio::test]
async fn scheduler_sends_memory_jobs_to_the_summary_function() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("memory-sweep");
    s.upsert(&n, at(1_900_000_000), &Job::MemorySweep).await?;
    let raw = s
        .client
        .get_schedule()
        .name(n.as_str())
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(
        raw.target().map(|t| t.arn()),
        Some(function_arn("myao-summary").as_str())
    );

    let without = EventBridgeScheduler {
        summary_target_arn: None,
        ..s.clone()
    };
    let err = without
        .upsert(&name("memory-2"), at(1_900_000_000), &Job::MemorySweep)
        .await
        .expect_err("no summary target");
    assert!(!err.is_retryable());
    assert_eq!(without.get(&name("memory-2")).await?, None);
    Ok(())
}

/// Creates a schedule of the same name through a second client just before
/// the adapter's CreateSchedule goes out: the race of two upserts, where the
/// adapter's update found nothing and its create then conflicts.
#[derive(Debug)]
struct CreateItFirst {
    schedule: String,
    group: String,
    done: Arc<AtomicBool>,
}

impl Intercept for CreateItFirst {
    fn name(&self) -> &'static str {
        "CreateItFirst"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(input) = context.input().downcast_ref::<CreateScheduleInput>() else {
            return Ok(());
        };
        if input.name() != Some(self.schedule.as_str()) || self.done.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let (schedule, group) = (self.schedule.clone(), self.group.clone());
        // Hooks are synchronous: the competitor runs on a runtime of its
        // own, with a client (and connection pool) of its own.
        std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let client = aws_sdk_scheduler::Client::new(&aws_config().await);
                raw_create(&client, &schedule, &group, "at(2031-01-01T00:00:00)", "{}").await
            })
        })
        .join()
        .map_err(|_| "the competing create panicked")??;
        Ok(())
    }
}

async fn raw_create(
    client: &aws_sdk_scheduler::Client,
    schedule: &str,
    group: &str,
    expression: &str,
    input: &str,
) -> Result<()> {
    client
        .create_schedule()
        .name(schedule)
        .group_name(group)
        .schedule_expression(expression)
        .flexible_time_window(
            FlexibleTimeWindow::builder()
                .mode(FlexibleTimeWindowMode::Off)
                .build()?,
        )
        .target(
            Target::builder()
                .arn(function_arn("someone-else"))
                .role_arn("arn:aws:iam::123456789012:role/other")
                .input(input)
                .build()?,
        )
        .send()
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_upsert_wins_a_create_race() -> Result<()> {
    let base = fresh_scheduler().await;
    let n = name("response-C1-top");
    let raced = Arc::new(AtomicBool::new(false));
    let interceptor = CreateItFirst {
        schedule: n.as_str().to_owned(),
        group: base.group.clone(),
        done: raced.clone(),
    };
    let conf = aws_sdk_scheduler::config::Builder::from(&aws_config().await)
        .interceptor(interceptor)
        .build();
    let s = EventBridgeScheduler {
        client: aws_sdk_scheduler::Client::from_conf(conf),
        ..base.clone()
    };
    let due = at(1_900_000_000);
    s.upsert(&n, due, &response("7.0")).await?;
    assert!(
        raced.load(Ordering::SeqCst),
        "the competitor created the schedule"
    );

    let got = base.get(&n).await?.context("the schedule")?;
    assert_eq!(got.at, due, "the later upsert's time wins");
    assert_eq!(got.job, response("7.0"));
    Ok(())
}

#[tokio::test]
async fn scheduler_upsert_replaces_a_schedule_made_elsewhere_and_creates_a_missing_one(
) -> Result<()> {
    let s = fresh_scheduler().await;
    let existing = name("made-elsewhere");
    raw_create(
        &s.client,
        existing.as_str(),
        &s.group,
        "at(2031-01-01T00:00:00)",
        "{\"not\":\"a job\"}",
    )
    .await?;
    let err = s.get(&existing).await.expect_err("its input is not a job");
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("made-elsewhere"), "{err}");

    s.upsert(&existing, at(1_900_000_000), &judgment("9.0"))
        .await?;
    let got = s.get(&existing).await?.context("the schedule")?;
    assert_eq!((got.at, got.job), (at(1_900_000_000), judgment("9.0")));

    let fresh = name("never-seen-before");
    assert_eq!(s.get(&fresh).await?, None);
    s.upsert(&fresh, at(1_900_000_060), &judgment("10.0"))
        .await?;
    assert_eq!(s.get(&fresh).await?.map(|j| j.at), Some(at(1_900_000_060)));
    Ok(())
}

#[tokio::test]
async fn scheduler_cancel_deletes_and_tolerates_a_missing_schedule() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-1.000000");
    s.upsert(&n, at(1_900_000_000), &judgment("2.0")).await?;
    s.cancel(&n).await?;
    assert_eq!(s.get(&n).await?, None);
    s.cancel(&n).await?;
    s.cancel(&name("never-existed")).await?;
    assert_eq!(s.get(&name("never-existed")).await?, None);
    Ok(())
}

#[tokio::test]
async fn scheduler_keeps_its_group_when_ensured_again() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("survivor");
    s.upsert(&n, at(1_900_000_000), &judgment("2.0")).await?;
    myao::adapters::aws::scheduler::ensure_group(&s.client, &s.group).await?;
    assert!(
        s.get(&n).await?.is_some(),
        "ensure_group must not re-create (and so wipe) a group"
    );
    Ok(())
}

// ---- SQS --------------------------------------------------------------------------

async fn receive(
    client: &aws_sdk_sqs::Client,
    url: &str,
    wait_seconds: i32,
) -> Result<Vec<aws_sdk_sqs::types::Message>> {
    Ok(client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .wait_time_seconds(wait_seconds)
        .send()
        .await?
        .messages
        .unwrap_or_default())
}

#[tokio::test]
async fn queue_sends_a_delayed_job_that_arrives_after_its_delay() -> Result<()> {
    let q = fresh_queues().await;
    let job = response("12.5");
    q.send(&job, 2).await?;

    let early = receive(&q.client, &q.response_queue_url, 0).await?;
    assert!(early.is_empty(), "delivered before its delay: {early:?}");

    let mut got = Vec::new();
    for _ in 0..10 {
        got = receive(&q.client, &q.response_queue_url, 1).await?;
        if !got.is_empty() {
            break;
        }
    }
    let [message] = got.as_slice() else {
        bail!("expected one message, got {got:?}");
    };
    let body: Job = serde_json::from_str(message.body().context("a body")?)?;
    assert_eq!(body, job);
    Ok(())
}

#[tokio::test]
async fn queue_routes_jobs_by_kind_and_refuses_what_it_cannot_carry() -> Result<()> {
    let q = fresh_queues().await;
    let thread = Job::ThreadMemory {
        channel: channel("C1"),
        thread_ts: ts("1.0"),
    };
    q.send(&thread, 0).await?;
    q.send(&Job::MemorySweep, 0).await?;
    let memory_url = q.memory_queue_url.clone().context("memory queue")?;
    let mut bodies = Vec::new();
    for _ in 0..5 {
        for m in receive(&q.client, &memory_url, 1).await? {
            bodies.push(serde_json::from_str::<Job>(m.body().unwrap_or_default())?);
        }
        if bodies.len() == 2 {
            break;
        }
    }
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(bodies.contains(&thread) && bodies.contains(&Job::MemorySweep));
    assert!(receive(&q.client, &q.response_queue_url, 0)
        .await?
        .is_empty());

    let over = q.send(&response("1.0"), 901).await.expect_err("over 900 s");
    assert!(!over.is_retryable());
    q.send(&response("1.0"), 900).await?;
    let judgment = q.send(&judgment("1.0"), 0).await.expect_err("no queue");
    assert!(!judgment.is_retryable());
    Ok(())
}

// ---- SSM ----------------------------------------------------------------------------

async fn put_parameter(
    client: &aws_sdk_ssm::Client,
    name: &str,
    value: &str,
    kind: ParameterType,
) -> Result<()> {
    client
        .put_parameter()
        .name(name)
        .value(value)
        .r#type(kind)
        .overwrite(true)
        .send()
        .await
        .with_context(|| format!("PutParameter {name}"))?;
    Ok(())
}

#[tokio::test]
async fn ssm_settings_are_the_plain_parameters_under_the_path() -> Result<()> {
    let client = ssm_client().await;
    let path = format!("/{}", unique("myao"));
    put_parameter(
        &client,
        &format!("{path}/min_wait_seconds"),
        "120",
        ParameterType::String,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}/persona_name"),
        "tama",
        ParameterType::String,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}/jitter_ratio"),
        "0.1",
        ParameterType::String,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}/secrets/slack_bot_token"),
        "bot-token-not-a-setting",
        ParameterType::SecureString,
    )
    .await?;
    put_parameter(
        &client,
        &format!("{path}-other/message_limit"),
        "3",
        ParameterType::String,
    )
    .await?;

    for p in [path.clone(), format!("{path}/")] {
        let source = SsmSettingsSource {
            client: client.clone(),
            path: p,
        };
        let mut pairs = source.load().await?;
        pairs.sort();
        assert_eq!(
            pairs,
            [
                ("jitter_ratio".to_owned(), "0.1".to_owned()),
                ("min_wait_seconds".to_owned(), "120".to_owned()),
                ("persona_name".to_owned(), "tama".to_owned()),
            ]
        );
        let (settings, issues) =
            Settings::from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(settings.min_wait_seconds, 120);
        assert_eq!(settings.persona_name, "tama");
        assert_eq!(settings.jitter_ratio, 0.1);
        let defaults = Settings::default();
        assert_eq!(settings.message_limit, defaults.message_limit, "a default");
        assert_eq!(settings.judgment, defaults.judgment);
    }

    let empty = SsmSettingsSource {
        client: client.clone(),
        path: format!("/{}", unique("myao-empty")),
    };
    assert!(empty.load().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn ssm_settings_read_every_page() -> Result<()> {
    let client = ssm_client().await;
    let path = format!("/{}", unique("myao"));
    // GetParametersByPath answers 10 at most per page.
    for i in 0..23 {
        put_parameter(
            &client,
            &format!("{path}/p{i:02}"),
            &i.to_string(),
            ParameterType::String,
        )
        .await?;
    }
    let pairs = SsmSettingsSource {
        client,
        path: path.clone(),
    }
    .load()
    .await?;
    assert_eq!(pairs.len(), 23);
    Ok(())
}

#[tokio::test]
async fn ssm_secrets_are_decrypted_and_cached() -> Result<()> {
    let client = ssm_client().await;
    let name = format!("/{}/secrets/slack_bot_token", unique("myao"));
    put_parameter(&client, &name, "xoxb-first", ParameterType::SecureString).await?;

    let secrets = SsmSecrets::new(client.clone());
    assert_eq!(secrets.get(&name).await?, "xoxb-first");
    put_parameter(&client, &name, "xoxb-second", ParameterType::SecureString).await?;
    assert_eq!(
        secrets.get(&name).await?,
        "xoxb-first",
        "read from the cache within its TTL"
    );
    assert!(
        !format!("{secrets:?}").contains("xoxb"),
        "Debug shows no value"
    );

    let uncached = SsmSecrets::with_ttl(client.clone(), StdDuration::ZERO);
    assert_eq!(uncached.get(&name).await?, "xoxb-second");

    let missing = secrets
        .get(&format!("{name}-missing"))
        .await
        .expect_err("no such parameter");
    assert!(!missing.is_retryable());
    assert!(missing.to_string().contains("-missing"), "{missing}");
    Ok(())
}
