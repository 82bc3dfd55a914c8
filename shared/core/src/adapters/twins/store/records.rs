//! The store twin, the rest of it: memories and the forgets pending, facts
//! and profiles, claims and counters.

use super::state::{Expiring, MemoryStore};
use crate::adapters::twins::lock::lock;
use std::sync::Arc;

use crate::ports::{
    sort_forgets, Claim, Claims, FactRecords, Installations, LabelRecords, MemoryRecords,
    PortError, ProfileRecords, Teams,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use myao_domain::facts::Fact;
use myao_domain::grounds::PostGrounds;
use myao_domain::install::{Home, Installation};
use myao_domain::labels::Label;
use myao_domain::people::{Profile, ProfileDelta};
use myao_domain::sketch::Sketch;
use myao_domain::TeamId;

use myao_domain::{ChannelId, Conversation, Forget, Memory, MemoryKind, MemoryScope, Ts, UserId};

#[async_trait]
impl MemoryRecords for MemoryStore {
    async fn put_memory(
        &self,
        memory: &Memory,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let key = (memory.scope.clone(), memory.kind);
        let memory = Expiring::new(memory.clone(), expires_at);
        self.write()?.memories.insert(key, memory);
        Ok(())
    }

    async fn get_memory(
        &self,
        scope: &MemoryScope,
        kind: MemoryKind,
    ) -> Result<Option<Memory>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .memories
            .get(&(scope.clone(), kind))
            .and_then(|e| e.live(now))
            .cloned())
    }

    async fn delete_memory(&self, scope: &MemoryScope, kind: MemoryKind) -> Result<(), PortError> {
        self.write()?.memories.remove(&(scope.clone(), kind));
        Ok(())
    }

    async fn thread_memories(
        &self,
        channel: &ChannelId,
        since: DateTime<Utc>,
    ) -> Result<Vec<Memory>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .memories
            .values()
            .filter_map(|e| e.live(now))
            .filter(|m| {
                matches!(&m.scope, MemoryScope::Thread { channel: c, .. } if c == channel)
                    && m.updated_at >= since
            })
            .cloned()
            .collect())
    }

    async fn record_forget(
        &self,
        forget: &Forget,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let key = (forget.channel.clone(), forget.ts);
        let forget = Expiring::new(forget.clone(), expires_at);
        self.write()?.forgets.insert(key, forget);
        Ok(())
    }

    async fn forgets(&self) -> Result<Vec<Forget>, PortError> {
        let now = self.clock.now();
        let mut all: Vec<Forget> = self
            .read()
            .forgets
            .values()
            .filter_map(|e| e.live(now).cloned())
            .collect();
        sort_forgets(&mut all);
        Ok(all)
    }

    async fn clear_forget(&self, forget: &Forget) -> Result<(), PortError> {
        let mut inner = self.write()?;
        let key = (forget.channel.clone(), forget.ts);
        // A newer deletion or edit of the same message stays pending.
        if inner
            .forgets
            .get(&key)
            .is_some_and(|e| e.value.at == forget.at)
        {
            inner.forgets.remove(&key);
        }
        Ok(())
    }
}

#[async_trait]
impl LabelRecords for MemoryStore {
    async fn put_label(&self, label: &Label) -> Result<bool, PortError> {
        let now = self.clock.now();
        let key = (label.channel.clone(), label.key());
        let mut state = self.write()?;
        if state
            .labels
            .get(&key)
            .is_some_and(|l| l.live(now).is_some())
        {
            return Ok(false);
        }
        let stored = Expiring::new(label.clone(), label.expires_at());
        state.labels.insert(key, stored);
        Ok(true)
    }

    async fn delete_label(&self, label: &Label) -> Result<(), PortError> {
        self.write()?
            .labels
            .remove(&(label.channel.clone(), label.key()));
        Ok(())
    }

    async fn labels(&self, channel: &ChannelId) -> Result<Vec<Label>, PortError> {
        let now = self.clock.now();
        let mut labels: Vec<Label> = self
            .read()
            .labels
            .iter()
            .filter(|((c, _), _)| c == channel)
            .filter_map(|(_, l)| l.live(now).cloned())
            .collect();
        labels.sort_by_key(|l| l.at);
        Ok(labels)
    }

    async fn put_grounds(&self, grounds: &PostGrounds) -> Result<(), PortError> {
        let key = (grounds.channel.clone(), grounds.post);
        let stored = Expiring::new(grounds.clone(), grounds.expires_at());
        self.write()?.grounds.insert(key, stored);
        Ok(())
    }

    async fn grounds(&self, channel: &ChannelId) -> Result<Vec<PostGrounds>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .grounds
            .iter()
            .filter(|((c, _), _)| c == channel)
            .filter_map(|(_, g)| g.live(now).cloned())
            .collect())
    }
}

#[async_trait]
impl FactRecords for MemoryStore {
    async fn facts(&self, channel: &ChannelId) -> Result<Vec<Fact>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .facts
            .iter()
            .filter(|((c, _), _)| c == channel)
            .filter_map(|(_, f)| f.live(now).cloned())
            .collect())
    }

    async fn put_fact(&self, fact: &Fact, expires_at: DateTime<Utc>) -> Result<(), PortError> {
        self.write()?.facts.insert(
            (fact.channel.clone(), fact.id.clone()),
            Expiring::new(fact.clone(), expires_at),
        );
        Ok(())
    }

    async fn replace_fact(
        &self,
        fact: &Fact,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let key = (fact.channel.clone(), fact.id.clone());
        match inner.facts.get_mut(&key) {
            Some(live) if live.expires_at > now => {
                *live = Expiring::new(fact.clone(), expires_at);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn delete_fact(&self, channel: &ChannelId, id: &str) -> Result<(), PortError> {
        self.write()?
            .facts
            .remove(&(channel.clone(), id.to_owned()));
        Ok(())
    }

    async fn sketches(&self, channel: &ChannelId) -> Result<Vec<Sketch>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .sketches
            .iter()
            .filter(|((c, _), _)| c == channel)
            .filter_map(|(_, s)| s.live(now).cloned())
            .collect())
    }

    async fn put_sketch(
        &self,
        sketch: &Sketch,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.write()?.sketches.insert(
            (sketch.channel.clone(), sketch.user.clone()),
            Expiring::new(sketch.clone(), expires_at),
        );
        Ok(())
    }

    async fn delete_sketch(&self, channel: &ChannelId, user: &UserId) -> Result<(), PortError> {
        self.write()?
            .sketches
            .remove(&(channel.clone(), user.clone()));
        Ok(())
    }

    async fn reflected(&self, conversation: &Conversation) -> Result<Option<Ts>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .reflected
            .get(conversation)
            .and_then(|m| m.live(now).copied()))
    }

    async fn set_reflected(
        &self,
        conversation: &Conversation,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.write()?
            .reflected
            .insert(conversation.clone(), Expiring::new(ts, expires_at));
        Ok(())
    }
}

#[async_trait]
impl ProfileRecords for MemoryStore {
    async fn profile(&self, user: &UserId) -> Result<Option<Profile>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .profiles
            .get(user)
            .and_then(|p| p.live(now).cloned()))
    }

    async fn add_to_profile(
        &self,
        user: &UserId,
        delta: &ProfileDelta,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let old = inner.profiles.get(user).and_then(|p| p.live(now).cloned());
        let first = delta.first.to_datetime();
        let mut profile = old.unwrap_or(Profile {
            user: user.clone(),
            messages: 0,
            interactions: 0,
            first_seen: first,
            last_seen: first,
            topics: Vec::new(),
        });
        profile.messages += delta.messages;
        profile.interactions += delta.interactions;
        profile.last_seen = delta.last.to_datetime();
        inner
            .profiles
            .insert(user.clone(), Expiring::new(profile, expires_at));
        Ok(())
    }

    async fn set_topics(&self, user: &UserId, topics: &[String]) -> Result<(), PortError> {
        if let Some(p) = self.write()?.profiles.get_mut(user) {
            p.value.topics = topics.to_vec();
        }
        Ok(())
    }

    async fn delete_profile(&self, user: &UserId) -> Result<(), PortError> {
        self.write()?.profiles.remove(user);
        Ok(())
    }
}

#[async_trait]
impl Claims for MemoryStore {
    async fn claim(&self, key: &str, expires_at: DateTime<Utc>) -> Result<bool, PortError> {
        Ok(self.claim_or_holder(key, expires_at).await? == Claim::Made)
    }

    async fn claim_or_holder(
        &self,
        key: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Claim, PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        match inner.claims.get(key) {
            Some(until) if *until > now => Ok(Claim::Held {
                until: Some(*until),
            }),
            _ => {
                inner.claims.insert(key.to_owned(), expires_at);
                Ok(Claim::Made)
            }
        }
    }

    async fn release(&self, key: &str) -> Result<(), PortError> {
        self.write()?.claims.remove(key);
        Ok(())
    }

    async fn held_until(&self, key: &str) -> Result<Option<DateTime<Utc>>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .claims
            .get(key)
            .copied()
            .filter(|until| *until > now))
    }

    async fn count(
        &self,
        key: &str,
        limit: u64,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let counter = inner
            .counters
            .entry(key.to_owned())
            .or_insert(Expiring::new(0, expires_at));
        if counter.live(now).is_none() {
            // The first count sets its expiry; after it, it starts again.
            *counter = Expiring::new(0, expires_at);
        }
        if counter.value >= limit {
            return Ok(false);
        }
        counter.value += 1;
        Ok(true)
    }

    async fn keep_draft(
        &self,
        key: &str,
        text: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.write()?
            .drafts
            .insert(key.to_owned(), Expiring::new(text.to_owned(), expires_at));
        Ok(())
    }

    async fn draft(&self, key: &str) -> Result<Option<String>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .drafts
            .get(key)
            .and_then(|d| d.live(now))
            .cloned())
    }
}

#[async_trait]
impl Installations for MemoryStore {
    async fn put_installation(&self, installation: &Installation) -> Result<(), PortError> {
        self.write_stack()?
            .installations
            .insert(installation.team.clone(), installation.clone());
        Ok(())
    }

    async fn installation(&self, team: &TeamId) -> Result<Option<Installation>, PortError> {
        Ok(self.read_stack().installations.get(team).cloned())
    }

    async fn installations(&self) -> Result<Vec<Installation>, PortError> {
        Ok(self.read_stack().installations.values().cloned().collect())
    }

    async fn renew_installation(
        &self,
        renewed: &Installation,
        was: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let mut state = self.write_stack()?;
        let current = state.installations.get(&renewed.team);
        let still = current
            .and_then(|i| i.rotation.as_ref())
            .is_some_and(|r| r.expires_at == was);
        if still {
            state
                .installations
                .insert(renewed.team.clone(), renewed.clone());
        }
        Ok(still)
    }

    async fn delete_installation(&self, team: &TeamId) -> Result<(), PortError> {
        self.write_stack()?.installations.remove(team);
        Ok(())
    }

    async fn put_oauth_state(
        &self,
        state: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        self.write_stack()?.oauth_states.put(state, expires_at, now);
        Ok(())
    }

    async fn take_oauth_state(&self, state: &str) -> Result<bool, PortError> {
        let now = self.clock.now();
        let taken = self.write_stack()?.oauth_states.take(state);
        Ok(taken.is_some_and(|expires_at| now < expires_at))
    }

    async fn home(&self) -> Result<Option<Home>, PortError> {
        Ok(self.read_stack().home.clone())
    }

    async fn put_home(&self, home: &Home) -> Result<(), PortError> {
        self.write_stack()?.home = Some(home.clone());
        Ok(())
    }
}

#[async_trait]
impl Teams for MemoryStore {
    fn for_team(&self, team: &TeamId) -> Arc<dyn crate::ports::Store> {
        Arc::new(MemoryStore::for_team(self, team))
    }

    async fn purge_team(&self, team: &TeamId) -> Result<u64, PortError> {
        self.writing()?;
        let part = lock(&self.teams).get(team).cloned();
        let Some(part) = part else { return Ok(0) };
        // Emptied in place: a store of the team handed out before the purge
        // finds nothing either.
        let purged = std::mem::take(&mut *lock(&part));
        Ok(purged.len())
    }
}
