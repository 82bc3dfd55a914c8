//! Building a judgment prompt for a large channel: the context build on the
//! in-process store (50 messages of 4,000 characters, 100 other active
//! channels with long memories, 30 thread summaries), the view, and the
//! render fitted to the prompt budget. Slack is an in-process answer here:
//! what is measured is the bot's own work, not the network.

use myao_core::ports::{ChannelRecords, MemoryRecords, Messages};
use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::Duration;
use criterion::{criterion_group, criterion_main, Criterion};
use myao_core::adapters::system::FixedRandom;
use myao_core::ports::{Clock, Llm, LlmReply, LlmRequest, PortError, Reacted, SlackApi};
use myao_core::wire::Twins;
use myao_domain::{
    Channel, ChannelId, Conversation, EmojiName, Memory, MemoryKind, MemoryScope, Message,
    Settings, Ts, User, UserId, Visibility,
};
use myao_services::prompts::{fitted, judgment_prompt, ContextView};
use myao_services::{context, JobContext, Services};
use myao_testkit::ids::{ts, user};
use myao_testkit::time::clock_at;

struct Slack;

#[async_trait]
impl SlackApi for Slack {
    fn for_team(
        self: Arc<Self>,
        _team: &myao_domain::TeamId,
        _tokens: Arc<dyn myao_core::ports::Secrets>,
    ) -> Arc<dyn SlackApi> {
        self
    }

    async fn set_status(
        &self,
        _channel: &ChannelId,
        _thread_ts: Ts,
        _status: &str,
        _loading: &[String],
    ) -> Result<(), PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }

    async fn download(&self, _url: &str, _max_bytes: u64) -> Result<Vec<u8>, PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }

    async fn post_message(
        &self,
        _channel: &ChannelId,
        _thread_ts: Option<Ts>,
        _text: &str,
    ) -> Result<Ts, PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }
    async fn post_marked(
        &self,
        _channel: &ChannelId,
        _thread_ts: Option<Ts>,
        _text: &str,
        _marker: &str,
    ) -> Result<Ts, PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }
    async fn find_marked(
        &self,
        _channel: &ChannelId,
        _thread_ts: Option<Ts>,
        _since: Ts,
        _marker: &str,
    ) -> Result<Option<Ts>, PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }
    async fn user_info(&self, user: &UserId) -> Result<User, PortError> {
        Ok(User {
            id: user.clone(),
            name: format!("name-{user}"),
            is_bot: false,
        })
    }
    async fn channel_info(&self, channel: &ChannelId) -> Result<Channel, PortError> {
        Ok(Channel {
            id: channel.clone(),
            name: format!("name-{channel}"),
            visibility: Visibility::PUBLIC,
        })
    }
    async fn auth_test(&self) -> Result<UserId, PortError> {
        UserId::parse("UBOT").map_err(|e| PortError::refused("slack", e))
    }
    async fn own_workspace(&self) -> Result<myao_domain::install::Home, PortError> {
        Err(PortError::refused("slack", "no workspace"))
    }
    async fn add_reaction(
        &self,
        _channel: &ChannelId,
        _ts: Ts,
        _emoji: &EmojiName,
    ) -> Result<Reacted, PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }
    async fn emoji_names(&self) -> Result<Arc<BTreeSet<String>>, PortError> {
        Err(PortError::refused("slack", "not in a benchmark"))
    }
}

struct NoLlm;

#[async_trait]
impl Llm for NoLlm {
    async fn complete(&self, _request: &LlmRequest) -> Result<LlmReply, PortError> {
        Err(PortError::refused("llm", "not in a benchmark"))
    }
}

fn text(tag: &str, chars: usize) -> String {
    let mut t = format!("{tag} ");
    while t.len() < chars {
        t.push_str("the build is failing again on the arm runner ");
    }
    t.truncate(chars);
    t
}

fn id(prefix: &str, i: usize) -> ChannelId {
    ChannelId::parse(&format!("{prefix}{i:04}")).expect("channel id")
}

async fn large_workspace() -> (Services, Settings, Conversation, Ts) {
    let now = ts("1767600000.0").to_datetime();
    let twins = Twins::new(clock_at(now));
    let store = &twins.store;
    let settings = Settings::default();
    let later = now + Duration::days(90);
    for i in 0..100 {
        let c = Channel {
            id: id("C", i),
            name: format!("team-{i}"),
            visibility: Visibility::PUBLIC,
        };
        store.put_channel_info(&c, now, later).await.expect("put");
        store
            .touch_channel(&c, now - Duration::minutes(i as i64), later)
            .await
            .expect("touch");
        for kind in [MemoryKind::Long, MemoryKind::Short] {
            let m = Memory {
                scope: MemoryScope::Channel {
                    channel: c.id.clone(),
                },
                kind,
                content: text(&format!("memory {i}"), 2_000),
                updated_at: now,
                newest_ts: None,
            };
            store.put_memory(&m, later).await.expect("memory");
        }
    }
    let general = id("G", 0);
    let root = Ts::from_datetime(now - Duration::hours(2));
    for i in 0..50usize {
        let ts = Ts::from_datetime(now - Duration::minutes(100 - i as i64));
        let thread = (i % 5 == 4).then_some(root);
        let author = user(&format!("U{:03}", i % 8));
        let m = Message::new(
            general.clone(),
            author,
            text("msg", 4_000),
            ts,
            thread,
            false,
        );
        store.insert_message(&m, true, later).await.expect("insert");
    }
    let root_msg = Message::new(
        general.clone(),
        user("U001"),
        text("root", 4_000),
        root,
        None,
        false,
    );
    store
        .insert_message(&root_msg, true, later)
        .await
        .expect("root");
    for i in 0..30 {
        let m = Memory {
            scope: MemoryScope::Thread {
                channel: general.clone(),
                thread_ts: Ts::from_datetime(now - Duration::hours(3 + i)),
            },
            kind: MemoryKind::Short,
            content: text("thread summary", 600),
            updated_at: now,
            newest_ts: None,
        };
        store.put_memory(&m, later).await.expect("thread memory");
    }
    let svc = Services::new(
        twins.ports(FixedRandom(0.5), settings.clone()),
        Arc::new(NoLlm),
        Arc::new(Slack),
    );
    let newest = Ts::from_datetime(twins.clock.now() - Duration::minutes(51));
    (svc, settings, Conversation::thread(general, root), newest)
}

fn prompt(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (svc, settings, conversation, newest) = rt.block_on(large_workspace());
    let now = svc.ports.clock.now();
    let cx = JobContext::at(&svc, std::sync::Arc::new(settings.clone()), now);
    let built = rt
        .block_on(context::build(&cx, &conversation, Some(newest)))
        .expect("context");
    let mut group = c.benchmark_group("prompt");
    group.sample_size(20);
    group.bench_function("context build (store reads, names)", |b| {
        b.iter(|| {
            rt.block_on(context::build(&cx, &conversation, Some(newest)))
                .expect("context")
        })
    });
    group.bench_function("view, cap and fit to the budget", |b| {
        b.iter(|| {
            let view = ContextView::new(&built, now, settings.timezone, 20);
            fitted(
                view,
                settings.max_message_chars,
                settings.judgment_prompt_max_tokens,
                judgment_prompt,
            )
            .expect("prompt")
        })
    });
    group.finish();
    // The figures docs/performance.md quotes next to the timings.
    let view = ContextView::new(&built, now, settings.timezone, 20);
    let unfitted = judgment_prompt(&view).expect("prompt");
    let fitted_prompt = fitted(
        view,
        settings.max_message_chars,
        settings.judgment_prompt_max_tokens,
        judgment_prompt,
    )
    .expect("prompt");
    let mentioned: BTreeSet<_> = built
        .conversation_history()
        .get_all_messages()
        .iter()
        .map(|m| m.user.clone())
        .collect();
    eprintln!(
        "prompt: {} chars (~{} tokens) before the budget, {} chars (~{} tokens) after; {} authors",
        unfitted.chars().count(),
        myao_domain::budget::estimate_tokens(&unfitted),
        fitted_prompt.chars().count(),
        myao_domain::budget::estimate_tokens(&fitted_prompt),
        mentioned.len(),
    );
}

criterion_group!(benches, prompt);
criterion_main!(benches);
