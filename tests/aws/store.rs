//! DynamoDB (`DynamoStore`): messages, edits and deletions, expiry, the
//! table, channels, users, memories, claims and counters.

use super::*;

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
    let clock = clock_at(Utc::now());
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
    let clock = clock_at(Utc::now());
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
    let clock = clock_at(Utc::now());
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
            http: myao_http::http_client(),
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
    let clock = clock_at(Utc::now());
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
    let clock = clock_at(Utc::now());
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

#[tokio::test]
async fn store_keeps_one_label_per_person_post_and_source_by_channel() -> Result<()> {
    use myao_core::ports::LabelRecords;
    use myao_domain::hints::Hint;
    use myao_domain::labels::{Label, Source};
    use myao_domain::EmojiName;

    let store = fresh_store().await;
    let label = |ch: &str, user_: &str, emoji: &str, secs: i64| Label {
        channel: channel(ch),
        post: ts("1767600000.000100"),
        user: user(user_),
        hint: Hint::Negative,
        source: Source::Reaction(EmojiName::parse(emoji).expect("emoji")),
        at: Utc::now() - Duration::seconds(secs),
    };
    let down = label("C1", "U1", "-1", 60);
    ensure!(store.put_label(&down).await?, "a new label is stored");
    ensure!(
        !store.put_label(&label("C1", "U1", "-1", 30)).await?,
        "the same person's same reaction on the same post is one label"
    );
    ensure!(store.put_label(&label("C1", "U2", "-1", 90)).await?);
    ensure!(store.put_label(&label("C1", "U1", "no_good", 10)).await?);
    ensure!(store.put_label(&label("C2", "U1", "-1", 10)).await?);

    let c1 = store.labels(&channel("C1")).await?;
    let who: Vec<(&str, &str)> = c1
        .iter()
        .map(|l| match &l.source {
            Source::Reaction(e) => (l.user.as_str(), e.as_str()),
            Source::Words => (l.user.as_str(), "words"),
            Source::Button => (l.user.as_str(), "button"),
        })
        .collect();
    ensure!(
        who == [("U2", "-1"), ("U1", "-1"), ("U1", "no_good")],
        "the channel's labels, in the order given: {who:?}"
    );
    ensure!(c1[1] == down, "read back whole: {:?}", c1[1]);

    store.delete_label(&down).await?;
    store.delete_label(&down).await?;
    ensure!(
        store.labels(&channel("C1")).await?.len() == 2,
        "withdrawn once, and again harmlessly"
    );
    ensure!(store.labels(&channel("C2")).await?.len() == 1);
    Ok(())
}

#[tokio::test]
async fn store_keeps_a_posts_grounds_beside_its_labels_and_apart_from_them() -> Result<()> {
    use myao_core::ports::LabelRecords;
    use myao_domain::grounds::Spoke;
    use myao_domain::grounds::{Grounds, PostGrounds};
    use myao_domain::hints::Hint;
    use myao_domain::labels::{Label, Source};
    use myao_domain::rules::Chattiness;

    let store = fresh_store().await;
    let kept = |post: &str, outcome: Spoke| PostGrounds {
        channel: channel("C1"),
        post: ts(post),
        thread_ts: Some(ts("1767600000.000050")),
        grounds: Grounds::unjudged(outcome, Chattiness::Normal),
        at: Utc::now(),
    };
    store
        .put_grounds(&kept("1767600000.000200", Spoke::RuleYes))
        .await?;
    store
        .put_grounds(&kept("1767600000.000100", Spoke::Mention))
        .await?;
    // Kept again for the same post (a redelivered job): one, the newer.
    store
        .put_grounds(&kept("1767600000.000100", Spoke::LlmYes))
        .await?;
    let label = Label {
        channel: channel("C1"),
        post: ts("1767600000.000100"),
        user: user("U1"),
        hint: Hint::Positive,
        source: Source::Words,
        at: Utc::now(),
    };
    ensure!(store.put_label(&label).await?);

    let grounds = store.grounds(&channel("C1")).await?;
    let outcomes: Vec<Spoke> = grounds.iter().map(|g| g.grounds.outcome).collect();
    ensure!(
        outcomes == [Spoke::LlmYes, Spoke::RuleYes],
        "one per post, oldest post first: {outcomes:?}"
    );
    ensure!(
        grounds[1].post == ts("1767600000.000200")
            && grounds[1].thread_ts == Some(ts("1767600000.000050")),
        "read back whole: {:?}",
        grounds[1]
    );
    ensure!(
        store.labels(&channel("C1")).await? == vec![label],
        "the grounds in the labels' partition are not read as labels"
    );
    ensure!(store.grounds(&channel("C2")).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn store_keeps_installations_by_team_and_a_renewal_writes_once() -> Result<()> {
    use myao_core::ports::Installations;
    use myao_domain::install::{Installation, Rotation, Token};
    use myao_domain::TeamId;

    let store = fresh_store().await;
    let expires = Utc::now() + Duration::hours(1);
    let install = |team: &str, token: &str, expires_at| Installation {
        team: TeamId::parse(team).expect("team"),
        enterprise: None,
        team_name: format!("{team} inc"),
        bot_user_id: user("U0BOT"),
        scopes: vec!["chat:write".into()],
        bot_token: Token::new(token),
        rotation: Some(Rotation {
            refresh_token: Token::new(format!("refresh-{token}")),
            expires_at,
        }),
        installed_at: Utc::now(),
    };
    let acme = install("T0ACME", "xoxe.xoxb-fake1", expires);
    store.put_installation(&acme).await?;
    store
        .put_installation(&install("T0BETA", "xoxe.xoxb-fake2", expires))
        .await?;
    let team = TeamId::parse("T0ACME")?;
    ensure!(store.installation(&team).await? == Some(acme.clone()));
    let teams: Vec<String> = store
        .installations()
        .await?
        .iter()
        .map(|i| i.team.to_string())
        .collect();
    ensure!(teams == ["T0ACME", "T0BETA"], "{teams:?}");

    // Two renewals of the same token: one writes, the other comes second.
    let renewed = install("T0ACME", "xoxe.xoxb-fake3", expires + Duration::hours(12));
    let other = install("T0ACME", "xoxe.xoxb-fake4", expires + Duration::hours(12));
    ensure!(store.renew_installation(&renewed, expires).await?);
    ensure!(!store.renew_installation(&other, expires).await?);
    let kept = store.installation(&team).await?.context("kept")?;
    ensure!(
        kept.bot_token.expose() == "xoxe.xoxb-fake3",
        "the first renewal's"
    );

    store.delete_installation(&team).await?;
    store.delete_installation(&team).await?;
    ensure!(store.installation(&team).await?.is_none());
    ensure!(store.installations().await?.len() == 1);
    Ok(())
}

#[tokio::test]
async fn store_takes_an_install_state_back_once_and_never_a_stale_or_forged_one() -> Result<()> {
    use myao_core::ports::Installations;

    let store = fresh_store().await;
    let live = "0123456789abcdef0123456789abcdef";
    let stale = "fedcba9876543210fedcba9876543210";
    store
        .put_oauth_state(live, Utc::now() + Duration::minutes(10))
        .await?;
    store
        .put_oauth_state(stale, Utc::now() - Duration::seconds(1))
        .await?;
    ensure!(store.take_oauth_state(live).await?, "taken");
    ensure!(!store.take_oauth_state(live).await?, "once");
    ensure!(!store.take_oauth_state(stale).await?, "expired");
    ensure!(
        !store
            .take_oauth_state("00000000000000000000000000000000")
            .await?,
        "never given"
    );
    Ok(())
}
