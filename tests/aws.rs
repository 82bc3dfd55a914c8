//! The AWS adapters against the emulator (moto server at
//! `MYAO_TEST_AWS_ENDPOINT`; see `myao_tests::emulator_endpoint`). Every test
//! makes its own table, schedule group, queues or parameter path.
//!
//! - DynamoDB (`DynamoStore`): `store_*`
//! - EventBridge Scheduler (`EventBridgeScheduler`): `scheduler_*`
//! - SQS (`SqsQueue`): `queue_*`
//! - SSM (`SsmSettingsSource`, `SsmSecrets`): `ssm_*`

use myao::ports::{ChannelRecords, Claims, MemoryRecords, Messages, UserCache};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use anyhow::{bail, ensure, Context as _, Result};
// The interceptor types of every SDK are the same (aws-smithy-runtime-api's):
// the scheduler's imports below serve the DynamoDB interceptor too.
use aws_sdk_dynamodb::config::http::{HttpRequest, HttpResponse};
use aws_sdk_dynamodb::config::interceptors::AfterDeserializationInterceptorContextRef;
use aws_sdk_dynamodb::config::RuntimeComponents;
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::query::{QueryInput, QueryOutput};
use aws_sdk_dynamodb::types::{AttributeValue, Select};
use aws_sdk_scheduler::config::interceptors::BeforeSerializationInterceptorContextRef;
use aws_sdk_scheduler::config::{ConfigBag, Intercept};
use aws_sdk_scheduler::error::BoxError;
use aws_sdk_scheduler::operation::create_schedule::CreateScheduleInput;
use aws_sdk_scheduler::types::{
    ActionAfterCompletion, FlexibleTimeWindow, FlexibleTimeWindowMode, ScheduleState, Target,
};
use aws_sdk_ssm::types::ParameterType;
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::http::StatusCode;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use myao::adapters::aws::dynamodb::DynamoStore;
use myao::adapters::aws::scheduler::EventBridgeScheduler;
use myao::adapters::aws::ssm::{SsmSecrets, SsmSettingsSource};
use myao::adapters::system::{ManualClock, SystemClock};
use myao::domain::files::SharedFile;
use myao::domain::Reply;
use myao::domain::{
    Channel, ChannelId, ChannelKind, Conversation, Forget, Job, Memory, MemoryKind, MemoryScope,
    Message, Settings, Ts, User, Visibility, VisibilityChange,
};
use myao::ports::{
    ChannelRecord, Claim, Clock, Edit, Insert, Queue, Scheduler, Secrets, SettingsSource, Store,
};
use myao::schedule::ScheduleName;
use myao_tests::stubs::{channel, user};
use myao_tests::{
    aws_config, create_table, dynamodb_client, fresh_queues, fresh_scheduler, fresh_store,
    fresh_store_with_clock, function_arn, ssm_client, unique,
};

// ---- helpers ------------------------------------------------------------------

fn ts(text: &str) -> Ts {
    Ts::parse(text).unwrap_or_else(|e| panic!("bad ts {text:?} in a test: {e}"))
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
        reply: Reply::Full,
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

    assert_eq!(
        store
            .edit_message(&m.channel, m.ts, "after", later())
            .await?,
        Edit::Applied
    );
    let got = store
        .get_message(&m.channel, m.ts)
        .await?
        .context("the edited message")?;
    assert_eq!(got.text, "after");

    // Changed on purpose: an edit of a message not stored yet used to be
    // dropped (false); it is now kept as a pending edit for the late
    // original (see store_keeps_an_edit_that_comes_before_its_message).
    // It still never shows as a message.
    assert_eq!(
        store
            .edit_message(&m.channel, ts("2.0"), "x", later())
            .await?,
        Edit::Pending
    );
    assert_eq!(
        store.get_message(&m.channel, ts("2.0")).await?,
        None,
        "an edit never creates a message"
    );
    assert_eq!(
        texts(&store.recent_messages(&m.channel, 10).await?),
        ["after"]
    );
    Ok(())
}

#[tokio::test]
async fn store_delete_leaves_a_tombstone_that_hides_the_message_everywhere() -> Result<()> {
    let store = fresh_store().await;
    let c1 = channel("C1");
    let mut reply = msg("C1", "2.0", Some("1.0"), "secret reply");
    reply.files = vec![SharedFile::new(
        Some("secret.png"),
        Some("png"),
        Some("image/png"),
        Some(120),
        Some("https://files.slack.com/files-pri/T1-F1/secret.png"),
    )];
    insert_all(
        &store,
        &[
            msg("C1", "1.0", None, "root"),
            reply.clone(),
            msg("C1", "3.0", Some("1.0"), "reply b"),
        ],
    )
    .await?;
    // A message keeps its files, for a reply that opens them.
    assert_eq!(store.get_message(&c1, reply.ts).await?, Some(reply.clone()));
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
    assert_eq!(
        store
            .edit_message(&c1, reply.ts, "resurrected?", later())
            .await?,
        Edit::Deleted
    );
    assert_eq!(store.get_message(&c1, reply.ts).await?, None);
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
    for gone in ["text", "files", "gsi1pk", "gsi1sk"] {
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
    // An expired message counts as absent for an edit too: the edit is not
    // applied to it but waits for a (new) delivery, and is still no message.
    // (It used to return false; it is now a pending edit. 11.0, so that
    // 10.0's fresh insert below is not edited.)
    assert_eq!(
        store
            .edit_message(&c1, ts("11.0"), "x", clock.now() + Duration::days(1))
            .await?,
        Edit::Pending
    );
    assert_eq!(store.get_message(&c1, ts("11.0")).await?, None);
    assert_eq!(store.recent_messages(&c1, 10).await?.len(), 3);

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
    create_table(&client, store.table()).await?;
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
        visibility: Visibility::PUBLIC,
    };
    store.touch_channel(&general, t1, later()).await?;
    let got = store.get_channel(&general.id).await?.context("C1")?;
    assert_eq!(got.channel, general);
    assert_eq!(got.last_active, t1);
    assert_eq!(got.checked_at, None, "an event is no check with Slack");

    // An older activity keeps the time. Changed on purpose: touch_channel
    // no longer renames (it used to take the new name); only
    // put_channel_info sets the name of a recorded channel.
    let renamed = Channel {
        id: channel("C1"),
        name: "lobby".into(),
        visibility: Visibility::PUBLIC,
    };
    store
        .touch_channel(&renamed, t1 - Duration::hours(1), later())
        .await?;
    let got = store.get_channel(&general.id).await?.context("C1")?;
    assert_eq!(got.channel.name, "general", "touch_channel does not rename");
    assert_eq!(got.last_active, t1);

    let t2 = t1 + Duration::minutes(5);
    store.touch_channel(&renamed, t2, later()).await?;
    let got = store.get_channel(&general.id).await?.context("C1")?;
    assert_eq!(got.last_active, t2);
    assert_eq!(got.channel.name, "general");

    let random = Channel {
        id: channel("C2"),
        name: "random".into(),
        visibility: Visibility::PUBLIC,
    };
    store.touch_channel(&random, t1, later()).await?;
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
    store.put_user(&alice, fetched, later()).await?;
    assert_eq!(
        store.get_user(&alice.id).await?,
        Some((alice.clone(), fetched))
    );
    let renamed = User {
        name: "alice b".into(),
        ..alice.clone()
    };
    store.put_user(&renamed, fetched, later()).await?;
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
        store.put_memory(m, later()).await?;
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
    store.put_memory(&rewritten, later()).await?;
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
    assert_eq!(store.held_until(key).await?, None);
    assert!(store.claim(key, until).await?);
    assert!(!store.claim(key, until).await?);
    assert_eq!(
        store.held_until(key).await?.map(|t| t.timestamp()),
        Some(until.timestamp())
    );
    assert!(store.claim("another:key", until).await?);
    store.release(key).await?;
    assert_eq!(store.held_until(key).await?, None);
    assert!(store.claim(key, until).await?);
    assert!(!store.claim(key, until).await?);

    clock.advance(Duration::minutes(11));
    assert_eq!(
        store.held_until(key).await?,
        None,
        "an expired claim holds nothing"
    );
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

#[tokio::test]
async fn a_refused_claim_says_until_when_it_is_held_in_the_same_call() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let until = clock.now() + Duration::minutes(10);
    let key = "window:judgment-C1-top";
    assert_eq!(store.claim_or_holder(key, until).await?, Claim::Made);
    let later = until + Duration::minutes(5);
    assert_eq!(
        store.claim_or_holder(key, later).await?,
        Claim::Held {
            until: Some(DateTime::from_timestamp(until.timestamp(), 0).expect("time"))
        },
        "the first claim's end, not the refused one's"
    );
    clock.advance(Duration::minutes(11));
    assert_eq!(
        store.claim_or_holder(key, later).await?,
        Claim::Made,
        "an expired claim is free"
    );
    assert!(!store.claim(key, later).await?);
    Ok(())
}

/// An HTTP client for the SDK that lets one request at a time through to
/// the emulator. moto applies an UpdateItem in steps, on a thread per
/// request, so two requests at once can both pass its condition; DynamoDB
/// applies each atomically. In turn, each request is atomic again, while
/// the calls around them still run at once and interleave their requests
/// (a count made of a read and a write would still be caught granting twice).
#[derive(Debug, Clone)]
struct OneRequestAtATime {
    http: reqwest::Client,
    gate: Arc<tokio::sync::Semaphore>,
}

impl OneRequestAtATime {
    async fn send(
        &self,
        request: HttpRequest,
    ) -> std::result::Result<HttpResponse, ConnectorError> {
        let io = |e: reqwest::Error| ConnectorError::io(e.into());
        let _turn = self
            .gate
            .acquire()
            .await
            .map_err(|e| ConnectorError::other(e.into(), None))?;
        let method = reqwest::Method::from_bytes(request.method().as_bytes())
            .map_err(|e| ConnectorError::other(e.into(), None))?;
        let mut outgoing = self.http.request(method, request.uri());
        for (name, value) in request.headers() {
            outgoing = outgoing.header(name, value);
        }
        let body = request.body().bytes().unwrap_or_default().to_vec();
        let answer = outgoing.body(body).send().await.map_err(io)?;
        let status = StatusCode::try_from(answer.status().as_u16())
            .map_err(|e| ConnectorError::other(e.into(), None))?;
        let headers: Vec<(String, String)> = answer
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        let bytes = answer.bytes().await.map_err(io)?;
        let mut response = HttpResponse::new(status, bytes.to_vec().into());
        for (name, value) in headers {
            response.headers_mut().insert(name, value);
        }
        Ok(response)
    }
}

impl HttpConnector for OneRequestAtATime {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let this = self.clone();
        HttpConnectorFuture::new(async move { this.send(request).await })
    }
}

impl aws_sdk_dynamodb::config::HttpClient for OneRequestAtATime {
    fn http_connector(
        &self,
        _: &HttpConnectorSettings,
        _: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(self.clone())
    }
}

/// A store on a new table whose requests reach the emulator one at a time.
async fn fresh_store_in_turn(clock: Arc<dyn Clock>) -> Result<DynamoStore> {
    let config = aws_sdk_dynamodb::config::Builder::from(&aws_config().await)
        .http_client(OneRequestAtATime {
            http: myao::adapters::tls::http_client(),
            gate: Arc::new(tokio::sync::Semaphore::new(1)),
        })
        .build();
    let client = aws_sdk_dynamodb::Client::from_conf(config);
    let table = unique("myao");
    create_table(&client, &table).await?;
    Ok(DynamoStore::new(client, table, clock))
}

/// Runs `calls` counts of `key` against `limit` at once; how many were granted.
async fn count_concurrently(
    store: &DynamoStore,
    key: &str,
    limit: u64,
    until: DateTime<Utc>,
    calls: usize,
) -> Result<usize> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..calls {
        let (store, key) = (store.clone(), key.to_owned());
        set.spawn(async move { store.count(&key, limit, until).await });
    }
    let mut granted = 0;
    while let Some(joined) = set.join_next().await {
        if joined.context("a count task panicked")?? {
            granted += 1;
        }
    }
    Ok(granted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn store_counts_exactly_up_to_the_limit_under_concurrency() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_in_turn(clock.clone()).await?;
    let until = clock.now() + Duration::hours(1);
    let key = "replies#C1#2026-01-05T08";
    let granted = count_concurrently(&store, key, 12, until, 13).await?;
    assert_eq!(granted, 12, "N + 1 concurrent counts with limit N grant N");
    assert!(!store.count(key, 12, until).await?, "the limit holds");
    assert!(
        store.count(key, 13, until).await?,
        "a higher limit counts on"
    );
    let item = raw_item(&store, &format!("COUNT#{key}"), "-")
        .await?
        .context("the counter's item")?;
    assert_eq!(item.get("n"), Some(&AttributeValue::N("13".into())));
    assert_eq!(
        item.get("expires_at"),
        Some(&epoch_seconds(until)),
        "TTL on expires_at deletes it"
    );

    // Expired but not deleted yet (TTL is lazy): many callers at once start
    // it again, and still no more than the limit is granted.
    clock.set(until);
    let next = until + Duration::hours(1);
    let granted = count_concurrently(&store, key, 12, next, 13).await?;
    assert_eq!(granted, 12, "an expired counter starts again at zero");
    let item = raw_item(&store, &format!("COUNT#{key}"), "-")
        .await?
        .context("the counter's item")?;
    assert_eq!(item.get("n"), Some(&AttributeValue::N("12".into())));
    assert_eq!(item.get("expires_at"), Some(&epoch_seconds(next)));

    assert!(!store.count("never", 0, until).await?, "a zero limit");
    assert!(raw_item(&store, "COUNT#never", "-").await?.is_none());
    Ok(())
}

#[tokio::test]
async fn store_counter_expires_and_starts_again_at_zero() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let key = "mentions#U1#2026-01-05T08";
    let first_until = clock.now() + Duration::minutes(10);
    assert!(store.count(key, 2, first_until).await?);
    // A later count does not move the expiry its first count set.
    assert!(
        store
            .count(key, 2, first_until + Duration::hours(5))
            .await?
    );
    assert!(!store.count(key, 2, first_until).await?);
    assert!(store.count("another", 2, first_until).await?);

    clock.set(first_until - Duration::seconds(1));
    assert!(!store.count(key, 2, first_until).await?, "not expired yet");

    clock.set(first_until);
    let until = clock.now() + Duration::minutes(10);
    assert!(store.count(key, 2, until).await?, "expired: from zero");
    assert!(store.count(key, 2, until).await?);
    assert!(!store.count(key, 2, until).await?);
    let item = raw_item(&store, &format!("COUNT#{key}"), "-")
        .await?
        .context("the counter's item")?;
    assert_eq!(item.get("n"), Some(&AttributeValue::N("2".into())));
    assert_eq!(item.get("expires_at"), Some(&epoch_seconds(until)));
    Ok(())
}

// ---- DynamoDB: early edits, expiry, bounded reads, channels, forgets ----------

/// The adapter's text for a time in a sort key (fixed-width RFC 3339 with
/// nanoseconds, so that text order is time order).
fn time_text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// A time in whole milliseconds (channel times are stored as epoch millis).
fn at_millis(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_else(|| panic!("bad time {millis}"))
}

/// `expires_at` as the table holds it: epoch seconds.
fn epoch_seconds(t: DateTime<Utc>) -> AttributeValue {
    AttributeValue::N(t.timestamp().to_string())
}

fn s_attr(text: impl Into<String>) -> AttributeValue {
    AttributeValue::S(text.into())
}

type RawItem = HashMap<String, AttributeValue>;

/// An item as the table holds it, read around the adapter.
async fn raw_item(store: &DynamoStore, pk: &str, sk: &str) -> Result<Option<RawItem>> {
    Ok(store
        .client()
        .get_item()
        .table_name(store.table())
        .key("pk", s_attr(pk))
        .key("sk", s_attr(sk))
        .consistent_read(true)
        .send()
        .await?
        .item)
}

fn message_sk(t: Ts) -> String {
    format!("M#{}", t.sort_key())
}

fn thread_memory(ch: &str, root: &str, content: &str, updated_at: DateTime<Utc>) -> Memory {
    Memory {
        scope: MemoryScope::Thread {
            channel: channel(ch),
            thread_ts: ts(root),
        },
        kind: MemoryKind::Short,
        content: content.into(),
        updated_at,
        newest_ts: Some(ts(root)),
    }
}

fn channel_memory(ch: &str, kind: MemoryKind, content: &str, updated_at: DateTime<Utc>) -> Memory {
    Memory {
        scope: MemoryScope::Channel {
            channel: channel(ch),
        },
        kind,
        content: content.into(),
        updated_at,
        newest_ts: None,
    }
}

fn chan(id: &str, name: &str, visibility: Visibility) -> Channel {
    Channel {
        id: channel(id),
        name: name.into(),
        visibility,
    }
}

#[tokio::test]
async fn store_keeps_an_edit_that_comes_before_its_message() -> Result<()> {
    let store = fresh_store().await;
    let c1 = channel("C1");
    insert_all(&store, &[msg("C1", "1.0", None, "root")]).await?;
    let reply = msg("C1", "5.0", Some("1.0"), "original");
    let thread = Conversation::thread(c1.clone(), ts("1.0"));

    // The edit comes first: it waits, and is no message anywhere.
    assert_eq!(
        store.edit_message(&c1, reply.ts, "edited", later()).await?,
        Edit::Pending
    );
    // A second edit before the original: the newer text waits instead.
    assert_eq!(
        store
            .edit_message(&c1, reply.ts, "edited twice", later())
            .await?,
        Edit::Pending
    );
    assert_eq!(store.get_message(&c1, reply.ts).await?, None);
    assert_eq!(texts(&store.recent_messages(&c1, 10).await?), ["root"]);
    assert_eq!(
        texts(&store.recent_messages(&c1, 1).await?),
        ["root"],
        "the newest-first read goes past the waiting edit"
    );
    assert_eq!(texts(&store.messages_after(&c1, None, 10).await?), ["root"]);
    assert!(store
        .messages_after(&c1, Some(ts("1.0")), 10)
        .await?
        .is_empty());
    assert!(store.conversation_messages(&thread, 10).await?.is_empty());

    // The late original is new, and stored with the edited text.
    assert_eq!(
        store.insert_message(&reply, true, later()).await?,
        Insert::New
    );
    let mut edited = reply.clone();
    edited.text = "edited twice".into();
    assert_eq!(
        store.get_message(&c1, reply.ts).await?,
        Some(edited.clone())
    );
    assert_eq!(
        texts(&store.recent_messages(&c1, 10).await?),
        ["root", "edited twice"]
    );
    assert_eq!(
        store.conversation_messages(&thread, 10).await?,
        vec![edited.clone()],
        "it is in its conversation's index"
    );
    let raw = raw_item(&store, "CH#C1", &message_sk(reply.ts))
        .await?
        .context("the message")?;
    assert!(
        !raw.contains_key("pending_text"),
        "the stored message keeps no waiting edit: {raw:?}"
    );

    // A second delivery of the original is a duplicate and changes nothing.
    assert_eq!(
        store.insert_message(&reply, false, later()).await?,
        Insert::Duplicate { routed: true }
    );
    assert_eq!(
        store.get_message(&c1, reply.ts).await?,
        Some(edited.clone())
    );
    // Stored now: an edit applies.
    assert_eq!(
        store
            .edit_message(&c1, reply.ts, "edited thrice", later())
            .await?,
        Edit::Applied
    );
    assert_eq!(
        store.get_message(&c1, reply.ts).await?.map(|m| m.text),
        Some("edited thrice".to_owned())
    );

    // An edit after a delete: nothing to edit, nothing comes back.
    store.delete_message(&c1, reply.ts, later()).await?;
    assert_eq!(
        store.edit_message(&c1, reply.ts, "back?", later()).await?,
        Edit::Deleted
    );
    assert_eq!(store.get_message(&c1, reply.ts).await?, None);
    assert_eq!(texts(&store.recent_messages(&c1, 10).await?), ["root"]);

    // A delete after a waiting edit leaves a tombstone: the late original
    // stays deleted, and later edits find it deleted.
    let late = msg("C1", "7.0", None, "late");
    assert_eq!(
        store
            .edit_message(&c1, late.ts, "late, edited", later())
            .await?,
        Edit::Pending
    );
    store.delete_message(&c1, late.ts, later()).await?;
    assert_eq!(
        store.insert_message(&late, false, later()).await?,
        Insert::Deleted
    );
    assert_eq!(store.get_message(&c1, late.ts).await?, None);
    assert_eq!(
        store.edit_message(&c1, late.ts, "x", later()).await?,
        Edit::Deleted
    );
    assert_eq!(texts(&store.recent_messages(&c1, 10).await?), ["root"]);
    Ok(())
}

#[tokio::test]
async fn store_tombstone_of_an_early_edit_keeps_no_text() -> Result<()> {
    // A tombstone keeps no text (see the delete test above); that holds
    // for the text of an edit that came before its message too.
    let store = fresh_store().await;
    let c1 = channel("C1");
    let t = ts("7.0");
    assert_eq!(
        store
            .edit_message(&c1, t, "text the author deleted", later())
            .await?,
        Edit::Pending
    );
    store.delete_message(&c1, t, later()).await?;
    let raw = raw_item(&store, "CH#C1", &message_sk(t))
        .await?
        .context("the tombstone")?;
    assert_eq!(raw.get("deleted"), Some(&AttributeValue::Bool(true)));
    for gone in ["text", "pending_text", "gsi1pk", "gsi1sk"] {
        assert!(!raw.contains_key(gone), "the tombstone has {gone}: {raw:?}");
    }
    Ok(())
}

#[tokio::test]
async fn store_forgets_an_early_edit_once_it_expires() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let c1 = channel("C1");
    let m = msg("C1", "3.0", None, "original");
    assert_eq!(
        store
            .edit_message(&c1, m.ts, "edited", clock.now() + Duration::hours(1))
            .await?,
        Edit::Pending
    );
    clock.advance(Duration::hours(2));
    assert_eq!(
        store
            .insert_message(&m, false, clock.now() + Duration::days(1))
            .await?,
        Insert::New
    );
    assert_eq!(
        store.get_message(&c1, m.ts).await?,
        Some(m),
        "an expired waiting edit is not applied"
    );
    Ok(())
}

#[tokio::test]
async fn store_memories_carry_expires_at_and_are_not_read_after_it() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let c1 = channel("C1");
    let now = clock.now();
    let soon = now + Duration::hours(1);
    let lasting = now + Duration::days(1);
    let chan = channel_memory("C1", MemoryKind::Long, "channel", now);
    let thread = thread_memory("C1", "10.0", "thread", now);
    let workspace = Memory {
        scope: MemoryScope::Workspace,
        kind: MemoryKind::Short,
        content: "lasting".into(),
        updated_at: now,
        newest_ts: Some(ts("9.0")),
    };
    store.put_memory(&chan, soon).await?;
    store.put_memory(&thread, soon).await?;
    store.put_memory(&workspace, lasting).await?;

    // The TTL attribute, as the table holds it.
    let thread_sk = format!("T#{}#short", ts("10.0").sort_key());
    for (pk, sk, expires_at) in [
        ("MEM", "channel#C1#long", soon),
        ("TMEM#C1", thread_sk.as_str(), soon),
        ("MEM", "workspace#short", lasting),
    ] {
        let item = raw_item(&store, pk, sk)
            .await?
            .with_context(|| format!("the item {pk}/{sk}"))?;
        assert_eq!(
            item.get("expires_at"),
            Some(&epoch_seconds(expires_at)),
            "{pk}/{sk}"
        );
    }

    // Live until the second of expires_at...
    clock.set(soon - Duration::seconds(1));
    assert_eq!(
        store.get_memory(&chan.scope, MemoryKind::Long).await?,
        Some(chan.clone())
    );
    assert_eq!(
        store.get_memory(&thread.scope, MemoryKind::Short).await?,
        Some(thread.clone())
    );
    assert_eq!(
        store.thread_memories(&c1, now - Duration::days(1)).await?,
        vec![thread.clone()]
    );

    // ...and gone from every read at it.
    clock.set(soon);
    assert_eq!(
        store.get_memory(&chan.scope, MemoryKind::Long).await?,
        None,
        "expired at its expires_at"
    );
    assert_eq!(
        store.get_memory(&thread.scope, MemoryKind::Short).await?,
        None
    );
    assert!(store
        .thread_memories(&c1, now - Duration::days(1))
        .await?
        .is_empty());
    assert_eq!(
        store
            .get_memory(&MemoryScope::Workspace, MemoryKind::Short)
            .await?,
        Some(workspace),
        "a memory that lives longer is still there"
    );

    // A put after the expiry makes it live again.
    store
        .put_memory(&chan, clock.now() + Duration::days(1))
        .await?;
    assert_eq!(
        store.get_memory(&chan.scope, MemoryKind::Long).await?,
        Some(chan)
    );
    Ok(())
}

#[tokio::test]
async fn store_users_and_channels_carry_expires_at_and_are_not_read_after_it() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let now = clock.now();
    let soon = now + Duration::hours(1);
    let lasting = now + Duration::days(1);

    let alice = User {
        id: user("U1"),
        name: "alice".into(),
        is_bot: false,
    };
    let bob = User {
        id: user("U2"),
        name: "bob".into(),
        is_bot: true,
    };
    store.put_user(&alice, now, soon).await?;
    store.put_user(&bob, now, lasting).await?;

    let checked = chan("C1", "secret", Visibility::PRIVATE);
    let touched = chan("C2", "general", Visibility::PUBLIC);
    let kept = chan("C3", "kept", Visibility::PUBLIC);
    store.put_channel_info(&checked, now, soon).await?;
    store.touch_channel(&touched, now, soon).await?;
    store.touch_channel(&kept, now, lasting).await?;

    for (pk, sk, expires_at) in [
        ("USERS", "U#U1", soon),
        ("USERS", "U#U2", lasting),
        ("CHANNELS", "C#C1", soon),
        ("CHANNELS", "C#C2", soon),
        ("CHANNELS", "C#C3", lasting),
    ] {
        let item = raw_item(&store, pk, sk)
            .await?
            .with_context(|| format!("the item {pk}/{sk}"))?;
        assert_eq!(
            item.get("expires_at"),
            Some(&epoch_seconds(expires_at)),
            "{pk}/{sk}"
        );
    }

    clock.set(soon - Duration::seconds(1));
    assert_eq!(store.get_user(&alice.id).await?, Some((alice.clone(), now)));
    assert!(store.get_channel(&checked.id).await?.is_some());
    assert!(store.get_channel(&touched.id).await?.is_some());
    assert_eq!(store.channels().await?.len(), 3);

    clock.set(soon);
    assert_eq!(
        store.get_user(&alice.id).await?,
        None,
        "expired at its expires_at"
    );
    assert_eq!(store.get_user(&bob.id).await?, Some((bob, now)));
    assert_eq!(store.get_channel(&checked.id).await?, None);
    assert_eq!(store.get_channel(&touched.id).await?, None);
    let ids: Vec<String> = store
        .channels()
        .await?
        .into_iter()
        .map(|r| r.channel.id.as_str().to_owned())
        .collect();
    assert_eq!(ids, ["C3"]);
    Ok(())
}

#[tokio::test]
async fn store_touch_records_an_expired_channel_afresh() -> Result<()> {
    // An expired channel record counts as absent for reads (and an expired
    // message does for inserts): an activity then records the channel as a
    // new one, with the event's name and visibility and no check, as the
    // in-process twin does.
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let now = clock.now();
    let old = chan("C1", "old-name", Visibility::PUBLIC);
    store
        .put_channel_info(&old, now, now + Duration::hours(1))
        .await?;
    clock.advance(Duration::hours(2));
    let seen = chan("C1", "new-name", Visibility::PRIVATE);
    let active = at_millis(clock.now().timestamp_millis());
    store
        .touch_channel(&seen, active, clock.now() + Duration::days(1))
        .await?;
    let got = store.get_channel(&seen.id).await?.context("C1")?;
    assert_eq!(got.channel, seen, "nothing of the expired record is kept");
    assert_eq!(got.checked_at, None);
    assert_eq!(got.last_active, active);
    Ok(())
}

/// What another writer does in [`RaceTheSecondPut`].
#[derive(Debug, Clone)]
enum Competitor {
    Delete,
    Edit(String),
}

/// Runs a competing delete or edit of one message (through a client of its
/// own) just before the second PutItem of this client goes out: in an
/// insert that finds an early edit waiting, the write that stores the
/// message with the edited text, after the read that found the edit.
#[derive(Debug)]
struct RaceTheSecondPut {
    table: String,
    channel: ChannelId,
    ts: Ts,
    competitor: Competitor,
    puts: AtomicUsize,
    /// Set once the competitor ran, with the competing edit's result.
    ran: Arc<Mutex<Option<Option<Edit>>>>,
}

impl Intercept for RaceTheSecondPut {
    fn name(&self) -> &'static str {
        "RaceTheSecondPut"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if context.input().downcast_ref::<PutItemInput>().is_none()
            || self.puts.fetch_add(1, Ordering::SeqCst) != 1
        {
            return Ok(());
        }
        let (table, channel, ts, competitor) = (
            self.table.clone(),
            self.channel.clone(),
            self.ts,
            self.competitor.clone(),
        );
        let edit = std::thread::spawn(move || -> Result<Option<Edit>> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let other = DynamoStore::new(dynamodb_client().await, table, Arc::new(SystemClock));
                Ok(match competitor {
                    Competitor::Delete => {
                        other.delete_message(&channel, ts, later()).await?;
                        None
                    }
                    Competitor::Edit(text) => {
                        Some(other.edit_message(&channel, ts, &text, later()).await?)
                    }
                })
            })
        })
        .join()
        .map_err(|_| "the competitor panicked")??;
        *self.ran.lock().unwrap_or_else(|p| p.into_inner()) = Some(edit);
        Ok(())
    }
}

/// A store on `base`'s table whose client runs `competitor` on `m` just
/// before its second PutItem; and what the competitor did, once it ran.
async fn racing_store(
    base: &DynamoStore,
    m: &Message,
    competitor: Competitor,
) -> (DynamoStore, Arc<Mutex<Option<Option<Edit>>>>) {
    let ran = Arc::new(Mutex::new(None));
    let racer = RaceTheSecondPut {
        table: base.table().to_owned(),
        channel: m.channel.clone(),
        ts: m.ts,
        competitor,
        puts: AtomicUsize::new(0),
        ran: ran.clone(),
    };
    let conf = aws_sdk_dynamodb::config::Builder::from(&aws_config().await)
        .interceptor(racer)
        .build();
    let store = DynamoStore::new(
        aws_sdk_dynamodb::Client::from_conf(conf),
        base.table(),
        Arc::new(SystemClock),
    );
    (store, ran)
}

#[tokio::test]
async fn store_insert_racing_a_delete_leaves_an_early_edit_deleted() -> Result<()> {
    let base = fresh_store().await;
    let m = msg("C1", "5.0", None, "original");
    assert_eq!(
        base.edit_message(&m.channel, m.ts, "edited", later())
            .await?,
        Edit::Pending
    );
    let (store, ran) = racing_store(&base, &m, Competitor::Delete).await;
    // The insert finds the waiting edit; the author deletes the message;
    // then the insert writes.
    let inserted = store.insert_message(&m, false, later()).await;
    assert!(
        ran.lock().unwrap_or_else(|p| p.into_inner()).is_some(),
        "the delete did not run between the insert's read and its write \
         (the insert no longer makes two PutItems?): {inserted:?}"
    );
    assert!(
        matches!(inserted, Ok(Insert::Deleted)) || matches!(&inserted, Err(e) if e.is_retryable()),
        "the insert stored a message deleted meanwhile: {inserted:?}"
    );
    assert_eq!(
        base.get_message(&m.channel, m.ts).await?,
        None,
        "the deleted message came back"
    );
    assert_eq!(
        base.insert_message(&m, false, later()).await?,
        Insert::Deleted,
        "a redelivery finds it deleted"
    );
    Ok(())
}

#[tokio::test]
async fn store_insert_racing_an_edit_keeps_the_newest_text() -> Result<()> {
    let base = fresh_store().await;
    let m = msg("C1", "5.0", None, "original");
    assert_eq!(
        base.edit_message(&m.channel, m.ts, "first edit", later())
            .await?,
        Edit::Pending
    );
    let (store, ran) = racing_store(&base, &m, Competitor::Edit("second edit".into())).await;
    // The insert finds the first edit waiting; a second edit replaces it
    // (and is told it waits); then the insert writes.
    let inserted = store.insert_message(&m, false, later()).await;
    let competing = *ran.lock().unwrap_or_else(|p| p.into_inner());
    assert_eq!(
        competing,
        Some(Some(Edit::Pending)),
        "the edit did not run (as a waiting edit) between the insert's read and its write: \
         {inserted:?}"
    );
    match inserted {
        Ok(Insert::New) => {}
        // A retryable failure: the redelivery stores it.
        Err(e) if e.is_retryable() => {
            assert_eq!(base.insert_message(&m, false, later()).await?, Insert::New);
        }
        other => bail!("unexpected insert result {other:?}"),
    }
    assert_eq!(
        base.get_message(&m.channel, m.ts).await?.map(|m| m.text),
        Some("second edit".to_owned()),
        "the edit that was told it waits was lost"
    );
    Ok(())
}

/// Records every Query a DynamoDB client sends (its index and key
/// condition) and what DynamoDB answered (items read, items returned).
#[derive(Debug, Default)]
struct QueryLog {
    sent: Mutex<Vec<(Option<String>, Option<String>)>>,
    answered: Mutex<Vec<(i32, i32)>>,
}

#[derive(Debug)]
struct RecordQueries(Arc<QueryLog>);

impl Intercept for RecordQueries {
    fn name(&self) -> &'static str {
        "RecordQueries"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(q) = context.input().downcast_ref::<QueryInput>() {
            self.0.sent.lock().unwrap_or_else(|p| p.into_inner()).push((
                q.index_name().map(str::to_owned),
                q.key_condition_expression().map(str::to_owned),
            ));
        }
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(q) = context
            .output_or_error()
            .ok()
            .and_then(|o| o.downcast_ref::<QueryOutput>())
        {
            self.0
                .answered
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((q.scanned_count(), q.count()));
        }
        Ok(())
    }
}

#[tokio::test]
async fn store_reads_recent_thread_memories_without_reading_old_ones() -> Result<()> {
    let store = fresh_store().await;
    let c1 = channel("C1");
    let now = Utc::now();
    // 150 thread memories of C1 last updated a month ago, 3 recent ones,
    // and recent memories elsewhere (another channel's thread, C1 itself).
    for i in 0..150 {
        let old = thread_memory(
            "C1",
            &format!("{}.0", 1000 + i),
            &format!("old {i}"),
            now - Duration::days(30) - Duration::minutes(i),
        );
        store.put_memory(&old, later()).await?;
    }
    let recent: Vec<Memory> = (0..3)
        .map(|i| {
            thread_memory(
                "C1",
                &format!("{}.0", 2000 + i),
                &format!("recent {i}"),
                now - Duration::hours(i + 1),
            )
        })
        .collect();
    for m in &recent {
        store.put_memory(m, later()).await?;
    }
    store
        .put_memory(&thread_memory("C2", "2000.0", "elsewhere", now), later())
        .await?;
    store
        .put_memory(
            &channel_memory("C1", MemoryKind::Short, "channel", now),
            later(),
        )
        .await?;

    // The adapter's own read, watched: the three recent ones come back...
    let since = now - Duration::days(7);
    let log = Arc::new(QueryLog::default());
    let conf = aws_sdk_dynamodb::config::Builder::from(&aws_config().await)
        .interceptor(RecordQueries(log.clone()))
        .build();
    let watched = DynamoStore::new(
        aws_sdk_dynamodb::Client::from_conf(conf),
        store.table(),
        Arc::new(SystemClock),
    );
    let mut got = watched.thread_memories(&c1, since).await?;
    got.sort_by(|a, b| a.content.cmp(&b.content));
    assert_eq!(got, recent);
    // ...and DynamoDB read those three only: its queries (on the index,
    // bounded by the key condition) scanned three items in all.
    let sent = log.sent.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let answered = log
        .answered
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    assert!(!sent.is_empty(), "no query was sent");
    for (index, condition) in &sent {
        assert_eq!(index.as_deref(), Some("gsi1"), "{sent:?}");
        assert!(
            condition.as_deref().is_some_and(|c| c.contains("gsi1sk")),
            "the update time is in the key condition: {sent:?}"
        );
    }
    let scanned: i32 = answered.iter().map(|(scanned, _)| scanned).sum();
    assert_eq!(scanned, 3, "old thread memories were read: {answered:?}");

    // The layout the read relies on: a thread memory is in gsi1 under its
    // channel, by its update time.
    let item = raw_item(
        &store,
        "TMEM#C1",
        &format!("T#{}#short", ts("2000.0").sort_key()),
    )
    .await?
    .context("a thread memory")?;
    assert_eq!(item.get("gsi1pk"), Some(&s_attr("TMEM#C1")));
    assert_eq!(
        item.get("gsi1sk"),
        Some(&s_attr(time_text(recent[0].updated_at)))
    );

    // The same query through the raw client reads three items...
    let bounded = store
        .client()
        .query()
        .table_name(store.table())
        .index_name("gsi1")
        .key_condition_expression("gsi1pk = :pk AND gsi1sk >= :since")
        .expression_attribute_values(":pk", s_attr("TMEM#C1"))
        .expression_attribute_values(":since", s_attr(time_text(since)))
        .select(Select::Count)
        .send()
        .await?;
    assert_eq!((bounded.scanned_count(), bounded.count()), (3, 3));
    // ...while filtering by the time instead reads every thread memory of
    // the channel: the emulator counts what it reads, so the bound above
    // means something.
    let filtered = store
        .client()
        .query()
        .table_name(store.table())
        .index_name("gsi1")
        .key_condition_expression("gsi1pk = :pk")
        .filter_expression("updated_at >= :since")
        .expression_attribute_values(":pk", s_attr("TMEM#C1"))
        .expression_attribute_values(":since", s_attr(time_text(since)))
        .select(Select::Count)
        .send()
        .await?;
    assert_eq!((filtered.scanned_count(), filtered.count()), (153, 3));
    Ok(())
}

#[tokio::test]
async fn store_records_channel_info_activity_and_visibility_changes() -> Result<()> {
    let store = fresh_store().await;
    // Whole milliseconds: channel times are stored in epoch millis.
    let checked = at_millis(1_700_000_000_123);

    // What Slack said round-trips, with no activity yet.
    let secret = chan("C1", "secret", Visibility::PRIVATE);
    let connect = chan("C2", "connect", Visibility::PUBLIC.shared_externally());
    for c in [&secret, &connect] {
        store.put_channel_info(c, checked, later()).await?;
        assert_eq!(
            store.get_channel(&c.id).await?,
            Some(ChannelRecord {
                channel: c.clone(),
                last_active: DateTime::UNIX_EPOCH,
                checked_at: Some(checked),
            }),
            "{}",
            c.id
        );
    }

    // An activity keeps what Slack said, and only moves the time forward.
    let t1 = at_millis(1_700_000_100_250);
    let as_the_event_says = chan("C1", "renamed?", Visibility::PUBLIC);
    store.touch_channel(&as_the_event_says, t1, later()).await?;
    let expected = ChannelRecord {
        channel: secret.clone(),
        last_active: t1,
        checked_at: Some(checked),
    };
    assert_eq!(store.get_channel(&secret.id).await?, Some(expected.clone()));
    store
        .touch_channel(&as_the_event_says, t1 - Duration::hours(1), later())
        .await?;
    assert_eq!(
        store.get_channel(&secret.id).await?,
        Some(expected.clone()),
        "an older activity changes nothing"
    );
    let t2 = t1 + Duration::minutes(5);
    store.touch_channel(&as_the_event_says, t2, later()).await?;
    assert_eq!(
        store.get_channel(&secret.id).await?,
        Some(ChannelRecord {
            last_active: t2,
            ..expected
        })
    );

    // Slack's next answer takes the name and keeps the activity.
    let checked2 = checked + Duration::days(1);
    let renamed = chan("C1", "secret-2", Visibility::PRIVATE);
    store.put_channel_info(&renamed, checked2, later()).await?;
    assert_eq!(
        store.get_channel(&secret.id).await?,
        Some(ChannelRecord {
            channel: renamed.clone(),
            last_active: t2,
            checked_at: Some(checked2),
        })
    );

    // A channel not recorded yet is recorded as the event says, unchecked.
    let newcomer = chan("C3", "newcomer", Visibility::PUBLIC);
    store.touch_channel(&newcomer, t1, later()).await?;
    assert_eq!(
        store.get_channel(&newcomer.id).await?,
        Some(ChannelRecord {
            channel: newcomer.clone(),
            last_active: t1,
            checked_at: None,
        })
    );

    // Visibility changes follow `Visibility::after` and ask for a check;
    // the name and the activity stay.
    let square = chan("C4", "town-square", Visibility::PUBLIC);
    store.put_channel_info(&square, checked, later()).await?;
    store.touch_channel(&square, t1, later()).await?;
    store
        .change_visibility(&square.id, VisibilityChange::ConvertedToPrivate)
        .await?;
    let got = store.get_channel(&square.id).await?.context("C4")?;
    assert_eq!(got.channel.visibility, Visibility::PRIVATE);
    assert_eq!(got.checked_at, None, "to be checked again");
    assert_eq!(
        (got.channel.name.as_str(), got.last_active),
        ("town-square", t1)
    );
    // Public again only once Slack confirms: unknown meanwhile.
    store
        .change_visibility(&square.id, VisibilityChange::ConvertedToPublic)
        .await?;
    let got = store.get_channel(&square.id).await?.context("C4")?;
    assert_eq!(
        got.channel.visibility,
        Visibility {
            kind: ChannelKind::Unknown,
            external: false
        }
    );
    assert_eq!(got.checked_at, None);
    // Sharing outside, and unsharing, on a checked private channel.
    store.put_channel_info(&renamed, checked2, later()).await?;
    let mut expected = Visibility::PRIVATE;
    for change in [
        VisibilityChange::SharedExternally,
        VisibilityChange::Unshared,
    ] {
        store.change_visibility(&renamed.id, change).await?;
        expected = expected.after(change);
        let got = store.get_channel(&renamed.id).await?.context("C1")?;
        assert_eq!(got.channel.visibility, expected, "after {change:?}");
        assert_eq!(got.checked_at, None, "after {change:?}");
        assert_eq!(got.channel.name, "secret-2");
    }

    // An unknown channel stays unknown (private in effect).
    for change in [
        VisibilityChange::ConvertedToPrivate,
        VisibilityChange::ConvertedToPublic,
        VisibilityChange::SharedExternally,
        VisibilityChange::Unshared,
    ] {
        store.change_visibility(&channel("C9"), change).await?;
    }
    assert_eq!(store.get_channel(&channel("C9")).await?, None);
    let mut ids: Vec<String> = store
        .channels()
        .await?
        .into_iter()
        .map(|r| r.channel.id.as_str().to_owned())
        .collect();
    ids.sort();
    assert_eq!(ids, ["C1", "C2", "C3", "C4"]);
    Ok(())
}

#[tokio::test]
async fn store_keeps_forgets_oldest_first_until_cleared_or_expired() -> Result<()> {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = fresh_store_with_clock(clock.clone()).await;
    let t0 = clock.now();
    let lasting = t0 + Duration::days(1);
    // C1's key sorts first but it came later: the order is by time.
    let edited_reply = Forget {
        channel: channel("C1"),
        ts: ts("5.000001"),
        thread_ts: Some(ts("4.0")),
        at: t0 + Duration::seconds(10) + Duration::nanoseconds(123_456_789),
    };
    let deleted_root = Forget {
        channel: channel("C2"),
        ts: ts("3.0"),
        thread_ts: None,
        at: t0,
    };
    let short_lived = Forget {
        channel: channel("C3"),
        ts: ts("7.0"),
        thread_ts: Some(ts("6.0")),
        at: t0 + Duration::seconds(20),
    };
    store.record_forget(&edited_reply, lasting).await?;
    store.record_forget(&deleted_root, lasting).await?;
    store
        .record_forget(&short_lived, t0 + Duration::hours(1))
        .await?;
    assert_eq!(
        store.forgets().await?,
        vec![
            deleted_root.clone(),
            edited_reply.clone(),
            short_lived.clone()
        ]
    );
    let raw = raw_item(
        &store,
        "FORGET",
        &format!("C1#{}", ts("5.000001").sort_key()),
    )
    .await?
    .context("the forget item")?;
    assert_eq!(raw.get("expires_at"), Some(&epoch_seconds(lasting)));

    store.clear_forget(&deleted_root).await?;
    assert_eq!(
        store.forgets().await?,
        vec![edited_reply.clone(), short_lived.clone()]
    );
    store.clear_forget(&deleted_root).await?;

    clock.set(t0 + Duration::hours(1));
    assert_eq!(
        store.forgets().await?,
        vec![edited_reply],
        "an expired one is not returned"
    );
    Ok(())
}

#[tokio::test]
async fn store_deletes_a_memory_and_tolerates_a_missing_one() -> Result<()> {
    let store = fresh_store().await;
    let c1 = channel("C1");
    let now = Utc::now();
    let long = channel_memory("C1", MemoryKind::Long, "long", now);
    let short = channel_memory("C1", MemoryKind::Short, "short", now);
    let thread = thread_memory("C1", "10.0", "thread", now);
    for m in [&long, &short, &thread] {
        store.put_memory(m, later()).await?;
    }

    store.delete_memory(&long.scope, MemoryKind::Long).await?;
    assert_eq!(store.get_memory(&long.scope, MemoryKind::Long).await?, None);
    assert_eq!(
        store.get_memory(&short.scope, MemoryKind::Short).await?,
        Some(short.clone()),
        "only that scope and kind"
    );

    store
        .delete_memory(&thread.scope, MemoryKind::Short)
        .await?;
    assert_eq!(
        store.get_memory(&thread.scope, MemoryKind::Short).await?,
        None
    );
    assert!(
        store
            .thread_memories(&c1, now - Duration::days(1))
            .await?
            .is_empty(),
        "gone from the index too"
    );

    // None there: no error.
    store.delete_memory(&long.scope, MemoryKind::Long).await?;
    store
        .delete_memory(&MemoryScope::Workspace, MemoryKind::Short)
        .await?;
    assert_eq!(
        store.get_memory(&short.scope, MemoryKind::Short).await?,
        Some(short)
    );
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
async fn scheduler_sends_memory_jobs_to_the_memory_function() -> Result<()> {
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
        Some(function_arn("myao-memory").as_str())
    );

    let without = EventBridgeScheduler {
        memory_target_arn: None,
        ..s.clone()
    };
    let err = without
        .upsert(&name("memory-2"), at(1_900_000_000), &Job::MemorySweep)
        .await
        .expect_err("no memory target");
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
        assert_eq!(settings.judgment(), defaults.judgment());
    }

    let empty = SsmSettingsSource {
        client: client.clone(),
        path: format!("/{}", unique("myao-empty")),
    };
    // No settings at all is a wrong path, not "all defaults": refused, so
    // that a cold start fails closed.
    let err = empty.load().await.expect_err("an empty path is refused");
    assert!(err.to_string().contains("MYAO_SETTINGS_PATH"), "{err}");
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
