//! DynamoDB (`DynamoStore`): early edits, expiry, bounded reads, channels
//! and forgets.

use super::*;

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
    let clock = clock_at(Utc::now());
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
    let clock = clock_at(Utc::now());
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
    let clock = clock_at(Utc::now());
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
    let clock = clock_at(Utc::now());
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
                answer_times: None,
                digest_backoff: None,
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
        answer_times: None,
        digest_backoff: None,
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
            answer_times: None,
            digest_backoff: None,
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
            answer_times: None,
            digest_backoff: None,
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
    let clock = clock_at(Utc::now());
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

/// Issue 43 (and 45): a channel's learned answer times (and its digest's
/// backoff) live on its record, on the
/// emulator's table as in the in-process twin: kept by the record's other
/// writes, never creating a record, and read back as written.
#[tokio::test]
async fn a_channels_answer_times_round_trip_on_its_record() -> Result<()> {
    use myao_core::adapters::twins::MemoryStore;
    use myao_domain::answer_times::{AnswerTimes, Fate};
    use myao_domain::digest::Backoff;

    let mut times = AnswerTimes::default();
    let asked = Ts::parse("1700000000.000100")?;
    times.observe(asked, Fate::Answered(Duration::seconds(400)));
    times.observe(asked, Fate::Left);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let stores: [(&str, Box<dyn Store>); 2] = [
        ("dynamodb", Box::new(fresh_store().await)),
        ("twin", Box::new(MemoryStore::new(clock))),
    ];
    for (kind, store) in stores {
        let dev = chan("C9", "dev", Visibility::PUBLIC);
        // No record: nothing is created.
        store.put_answer_times(&dev.id, &times).await?;
        ensure!(
            store.get_channel(&dev.id).await?.is_none(),
            "{kind}: made a record"
        );

        store
            .touch_channel(&dev, at_millis(1_700_000_000_000), later())
            .await?;
        store.put_answer_times(&dev.id, &times).await?;
        // Slack's answer and a later activity keep them.
        store
            .put_channel_info(&dev, at_millis(1_700_000_001_000), later())
            .await?;
        store
            .touch_channel(&dev, at_millis(1_700_000_002_000), later())
            .await?;
        let got = store.get_channel(&dev.id).await?.context("the record")?;
        let learned = got.answer_times.context("the answer times")?;
        ensure!(learned.through == times.through, "{kind}: {learned:?}");
        ensure!(
            (learned.answered_weight() - 1.0).abs() < 1e-3 && (learned.left - 1.0).abs() < 1e-3,
            "{kind}: {learned:?}"
        );

        // Issue 45: the digest's backoff, set beside them and ended.
        let backoff = Backoff::after_failure(None, at_millis(1_700_000_003_000));
        store.put_digest_backoff(&dev.id, Some(&backoff)).await?;
        let got = store.get_channel(&dev.id).await?.context("the record")?;
        ensure!(got.digest_backoff == Some(backoff), "{kind}: {got:?}");
        ensure!(got.answer_times.is_some(), "{kind}: the answer times kept");
        store.put_digest_backoff(&dev.id, None).await?;
        let got = store.get_channel(&dev.id).await?.context("the record")?;
        ensure!(got.digest_backoff.is_none(), "{kind}: {got:?}");
    }
    Ok(())
}

/// Issue 45: a job's written reply is kept apart from its claim, on the
/// emulator's table as in the twin: giving the claim back leaves it, and
/// it is gone once expired.
#[tokio::test]
async fn a_draft_outlives_its_claim_and_not_its_expiry() -> Result<()> {
    use myao_core::adapters::twins::MemoryStore;

    let clock = clock_at(Utc::now());
    let stores: [(&str, Box<dyn Store>); 2] = [
        (
            "dynamodb",
            Box::new(fresh_store_with_clock(clock.clone()).await),
        ),
        ("twin", Box::new(MemoryStore::new(clock.clone()))),
    ];
    for (kind, store) in stores {
        let key = format!("response:C1:top:{}", unique("1"));
        ensure!(store.draft(&key).await?.is_none(), "{kind}: none yet");
        ensure!(store.claim(&key, clock.now() + Duration::days(1)).await?);
        store
            .keep_draft(&key, "the reply & more", clock.now() + Duration::hours(1))
            .await?;
        store.release(&key).await?;
        ensure!(
            store.draft(&key).await?.as_deref() == Some("the reply & more"),
            "{kind}: kept past the claim"
        );
        clock.advance(Duration::hours(2));
        ensure!(store.draft(&key).await?.is_none(), "{kind}: expired");
        clock.set(Utc::now());
    }
    Ok(())
}
