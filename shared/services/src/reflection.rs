//! What the new messages of a channel add to the people's profiles
//! (counted, no LLM call) and to its facts (found by the channel's digest,
//! `memory/digest.rs`, in the same call as its memories), each message
//! once; and how facts fade, are forgotten with their messages, and leave
//! the profiles' topics. Ingest does none of it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::Duration;

use super::{JobContext, MemoryReport};
use myao_core::ports::{Embedded, Embedder, FactRecords, PortError, ProfileRecords, Store};
use myao_domain::facts::{self, superseded, Fact, NewFact};
use myao_domain::meaning::Meaning;
use myao_domain::people::{still_backed, tally, MAX_TOPICS};
use myao_domain::sketch::Sketch;
use myao_domain::text::mentions;
use myao_domain::{ChannelId, Conversation, Forget, Message, Ts, UserId};

/// How long a profile lives after its last update.
const PROFILE_DAYS: i64 = 365;
/// A fact lives for this many half-lives: its strength is then below the
/// cleanup floor, whatever its importance.
const FACT_HALF_LIVES: i32 = 5;
/// The strength under which a fact is forgotten (the design's 0.05).
pub const FACT_FLOOR: f64 = 0.05;

/// Counts the messages of `conversation` newer than `after` in their
/// authors' profiles; the bot's own id, `None` when it is not known (then
/// nothing is counted: the bot cannot tell people from itself).
pub async fn count_in_profiles(
    cx: &JobContext<'_>,
    conversation: &[Message],
    after: Option<Ts>,
) -> Result<Option<UserId>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let Ok(bot) = cx.bot_user_id().await else {
        return Ok(None);
    };
    for (user, delta) in tally(conversation, after, &bot, &settings.names()) {
        cx.store()
            .add_to_profile(&user, &delta, now + Duration::days(PROFILE_DAYS))
            .await?;
    }
    Ok(Some(bot))
}

/// Marks the messages of `place` up to `newest` as read for profiles and
/// facts.
pub async fn mark_reflected(
    cx: &JobContext<'_>,
    place: &Conversation,
    newest: Ts,
) -> Result<(), PortError> {
    let expires = cx.now() + Duration::days(PROFILE_DAYS);
    cx.store().set_reflected(place, newest, expires).await
}

/// Stores the facts a memory call `found` in `channel`'s messages, each
/// outdating the one it supersedes.
pub async fn keep_facts(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    found: Vec<NewFact>,
    report: &mut MemoryReport,
) -> Result<(), PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    // A profile is shown in every channel's prompts: its topics come only
    // from shareable facts of channels whose talk may be repeated anywhere.
    let open = cx
        .store()
        .get_channel(channel)
        .await?
        .is_some_and(|r| r.channel.visibility.is_open());
    let mut existing = cx.store().facts(channel).await?;
    let expires = now + settings.fact_half_life() * FACT_HALF_LIVES;
    let meanings = meanings(cx, &found).await;
    for (i, new_fact) in found.into_iter().enumerate() {
        if let Some(old) = superseded(&existing, &new_fact) {
            let outdated = Fact {
                outdated: true,
                ..old.clone()
            };
            cx.store().put_fact(&outdated, expires).await?;
            if let Some(slot) = existing.iter_mut().find(|f| f.id == outdated.id) {
                *slot = outdated;
            }
        }
        let newest = new_fact
            .sources
            .iter()
            .max()
            .copied()
            .unwrap_or_else(|| Ts::from_datetime(now));
        let id = format!("{}-{i}", newest.sort_key());
        let mut fact = new_fact.stored(id, channel.clone(), now);
        fact.meaning = meanings.get(i).cloned().flatten();
        cx.store().put_fact(&fact, expires).await?;
        if open && fact.shareable {
            note_topics(cx.store(), &fact).await?;
        }
        report.facts.push(fact.text.clone());
        existing.push(fact);
    }
    Ok(())
}

/// What each new fact means (its cues, or its sentence), when the embedder is
/// there. One that fails leaves them without: the memory sweep embeds them
/// later ([`embed_older`]), and until then they are recalled by words.
async fn meanings(cx: &JobContext<'_>, found: &[NewFact]) -> Vec<Option<Meaning>> {
    let Some(embedder) = cx.embedder().filter(|_| !found.is_empty()) else {
        return Vec::new();
    };
    let texts: Vec<String> = found.iter().map(NewFact::passage).collect();
    match embedder.embed(&texts, Embedded::Passage).await {
        Ok(v) if v.vectors.len() == texts.len() => v
            .vectors
            .iter()
            .map(|vector| Some(Meaning::of(&v.model, vector)))
            .collect(),
        Ok(_) => {
            tracing::warn!(facts = texts.len(), "the embedder answered out of shape");
            Vec::new()
        }
        Err(error) => {
            tracing::warn!(%error, "the embedder failed; the facts are kept without their meaning");
            Vec::new()
        }
    }
}

/// The most facts one memory run embeds that have no meaning of the
/// embedder's model (stored before recall went by meaning, while the
/// embedder failed, or by another model).
pub const EMBED_PER_RUN: usize = 50;

/// Embeds up to [`EMBED_PER_RUN`] of `channel`'s live facts that have no
/// meaning of the embedder's model, and stores each again with it, unless
/// it was forgotten in between. When the batch is refused (a text the
/// provider will not take), each is tried alone, so that one cannot hold
/// the rest back. The number embedded.
pub async fn embed_older(cx: &JobContext<'_>, channel: &ChannelId) -> Result<usize, PortError> {
    let Some(embedder) = cx.embedder() else {
        return Ok(0);
    };
    let model = match embedder.model().await {
        Ok(model) => model,
        Err(error) => {
            tracing::warn!(%error, "no embedder model; older facts wait for the next run");
            return Ok(0);
        }
    };
    let waiting: Vec<Fact> = cx
        .store()
        .facts(channel)
        .await?
        .into_iter()
        .filter(|f| !f.outdated && f.meaning.as_ref().is_none_or(|m| m.model() != model))
        .take(EMBED_PER_RUN)
        .collect();
    let batch: Vec<&Fact> = waiting.iter().collect();
    let mut embedded = match embed_facts(embedder, &batch).await {
        Ok(done) => done,
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, facts = batch.len(), "the embedder is unavailable; older facts wait for the next run");
            Vec::new()
        }
        Err(error) => {
            tracing::warn!(%error, facts = batch.len(), "the embedder refused the facts together; trying each alone");
            let mut done = Vec::new();
            for fact in &batch {
                match embed_facts(embedder, &[fact]).await {
                    Ok(one) => done.extend(one),
                    Err(error) => {
                        tracing::warn!(%error, fact = %fact.id, "the embedder refused a fact")
                    }
                }
            }
            done
        }
    };
    let lives = cx.settings().fact_half_life() * FACT_HALF_LIVES;
    let mut stored = 0;
    for fact in embedded.drain(..) {
        // Its life as it was: from when it was written.
        if cx
            .store()
            .replace_fact(&fact, fact.written_at + lives)
            .await?
        {
            stored += 1;
        }
    }
    Ok(stored)
}

/// `facts` with their meaning, in one call.
async fn embed_facts(embedder: &dyn Embedder, facts: &[&Fact]) -> Result<Vec<Fact>, PortError> {
    if facts.is_empty() {
        return Ok(Vec::new());
    }
    let texts: Vec<String> = facts.iter().map(|f| facts::passage(f)).collect();
    let made = embedder.embed(&texts, Embedded::Passage).await?;
    if made.vectors.len() != facts.len() {
        return Err(PortError::refused("embedder", "an answer out of shape"));
    }
    Ok(facts
        .iter()
        .zip(&made.vectors)
        .map(|(fact, v)| Fact {
            meaning: Some(Meaning::of(&made.model, v)),
            ..(*fact).clone()
        })
        .collect())
}

/// Puts a fact's first keywords at the front of its speakers' topics (only
/// for a shareable fact of an open channel: profiles travel).
async fn note_topics(profiles: &dyn ProfileRecords, fact: &Fact) -> Result<(), PortError> {
    for user in &fact.speakers {
        let Some(profile) = profiles.profile(user).await? else {
            continue;
        };
        let mut topics: Vec<String> = fact.keywords.iter().take(2).cloned().collect();
        topics.extend(
            profile
                .topics
                .into_iter()
                .filter(|t| !fact.keywords.contains(t)),
        );
        topics.truncate(MAX_TOPICS);
        profiles.set_topics(user, &topics).await?;
    }
    Ok(())
}

/// Forgets the facts of `channel` that came from the message `ts`
/// (deleted, or edited since); returns the speakers of those forgotten.
pub async fn forget_facts_from(
    facts: &dyn FactRecords,
    channel: &ChannelId,
    ts: Ts,
) -> Result<BTreeSet<UserId>, PortError> {
    let mut speakers = BTreeSet::new();
    for fact in facts.facts(channel).await? {
        if fact.sources.contains(&ts) {
            facts.delete_fact(channel, &fact.id).await?;
            speakers.extend(fact.speakers);
        }
    }
    Ok(speakers)
}

/// Forgets the sketches of its channel that `forget` (a deleted or edited
/// message) may be in; how many.
pub async fn forget_sketches(facts: &dyn FactRecords, forget: &Forget) -> Result<usize, PortError> {
    let mut gone = 0;
    for sketch in facts.sketches(&forget.channel).await? {
        if sketch.may_hold(forget) {
            facts.delete_sketch(&forget.channel, &sketch.user).await?;
            gone += 1;
        }
    }
    Ok(gone)
}

/// Stores the sketches a digest wrote of `channel`'s people, each for as
/// long as its memories live (`memory_retention_days` after it was written).
pub async fn keep_sketches(cx: &JobContext<'_>, sketches: &[Sketch]) -> Result<(), PortError> {
    let days = i64::from(cx.settings().memory_retention_days);
    let expires = cx.now() + Duration::days(days);
    for sketch in sketches {
        cx.store().put_sketch(sketch, expires).await?;
    }
    Ok(())
}

/// Keeps in `users`' profiles only the topics a fact still backs: a
/// current, shareable fact of an open channel that they said, with that
/// keyword. A topic whose facts were forgotten (their message deleted,
/// their channel made private) leaves the profile, which every channel's
/// prompts show.
pub async fn prune_topics(store: &dyn Store, users: &BTreeSet<UserId>) -> Result<(), PortError> {
    if users.is_empty() {
        return Ok(());
    }
    let mut backing: BTreeMap<&UserId, BTreeSet<String>> = BTreeMap::new();
    for record in store.channels().await? {
        if !record.channel.visibility.is_open() {
            continue;
        }
        for fact in store.facts(&record.channel.id).await? {
            if !fact.shareable || fact.outdated {
                continue;
            }
            for user in users.iter().filter(|u| fact.speakers.contains(u)) {
                backing
                    .entry(user)
                    .or_default()
                    .extend(fact.keywords.iter().cloned());
            }
        }
    }
    for user in users {
        let Some(profile) = store.profile(user).await? else {
            continue;
        };
        let kept = still_backed(&profile.topics, backing.get(user));
        if kept != profile.topics {
            store.set_topics(user, &kept).await?;
            tracing::info!(
                dropped = profile.topics.len() - kept.len(),
                "topics of forgotten facts left a profile"
            );
        }
    }
    Ok(())
}

/// Removes the facts of `channel` that faded below [`FACT_FLOOR`], and the
/// weakest over `max_facts_per_channel`.
pub async fn clean_facts(cx: &JobContext<'_>, channel: &ChannelId) -> Result<(), PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let all = cx.store().facts(channel).await?;
    let gone = facts::cleanup(
        &all,
        now,
        settings.fact_half_life(),
        FACT_FLOOR,
        settings.max_facts_per_channel as usize,
    );
    for id in &gone {
        cx.store().delete_fact(channel, id).await?;
    }
    if !gone.is_empty() {
        tracing::info!(%channel, facts = gone.len(), "faded facts forgotten");
    }
    Ok(())
}

/// Forgets `user`: their profile, their sketch in every channel, and every
/// fact they said or that is about them (its subject is one of their
/// `names`), in every channel.
pub async fn forget_person(
    store: &dyn Store,
    user: &UserId,
    names: &[String],
) -> Result<usize, PortError> {
    store.delete_profile(user).await?;
    let mut gone = 0;
    for record in store.channels().await? {
        let channel = record.channel.id;
        for sketch in store.sketches(&channel).await? {
            if sketch.concerns(user, names) {
                store.delete_sketch(&channel, &sketch.user).await?;
            }
        }
        for fact in store.facts(&channel).await? {
            let about = fact.about.as_ref() == Some(user)
                || names
                    .iter()
                    .any(|n| !n.is_empty() && fact.subject.trim().eq_ignore_ascii_case(n.trim()))
                || mentions(&fact.text).any(|u| u == *user);
            if about || fact.speakers.contains(user) {
                store.delete_fact(&channel, &fact.id).await?;
                gone += 1;
            }
        }
    }
    Ok(gone)
}
