//! A channel's digest: once enough new messages came (or the oldest waited
//! half the window), one LLM call rewrites from the channel's window its
//! short-term memory, the summaries of the threads that moved, the facts in
//! the new messages and, when due, its long-term memory. Threads beyond
//! [`THREADS_PER_CALL`] are summarised by further calls, that many at a
//! time. An answer out of shape writes nothing: it is asked for once more,
//! stricter, and when that fails too the channel's digest backs off before
//! the next run asks again ([`myao_domain::digest::Backoff`]).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use chrono::{DateTime, Utc};

use super::write::{forgotten_since, keep, long_term_due};
use crate::prompts::memory::{digest_request, DigestLine, DigestSketch, DigestTask, DigestThread};
use crate::prompts::MessageView;
use crate::reflection::{count_in_profiles, keep_facts, keep_sketches, mark_reflected};
use crate::{JobContext, MemoryReport};
use myao_core::ports::PortError;
use myao_domain::digest::{self, Asked, Seen, THREADS_PER_CALL};
use myao_domain::facts::parse_reflection;
use myao_domain::metrics::{self, Datum};
use myao_domain::sketch::{parse_sketches, DigestRead, Sketch};
use myao_domain::{
    Channel, ChannelId, Conversation, Memory, MemoryKind, MemoryScope, Message, Settings, Ts,
    UserId,
};

mod read;
use read::Read;

/// A thread whose summary does not cover its newest message in the window.
struct Moved {
    root: Ts,
    /// Its oldest message the summary lacks (the most overdue go first).
    oldest_new: Ts,
    previous: Option<String>,
}

/// What a digest came to, for its channel's backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Digested {
    /// Not due, or nothing asked (the LLM failed, a prompt did not render):
    /// no answer to judge.
    Nothing,
    /// Neither the first call's answer nor the stricter second one could
    /// be used (or the second call failed): nothing written.
    Unusable,
    /// The first call's answer, or the stricter second one, was used.
    Usable,
}

/// Digests `channel`'s `window` (its messages of the short-term window,
/// which starts at `window_start`, oldest first, read at `read_at`), when
/// due: where its marks stand, what waits, the first call (asked again,
/// stricter, when out of shape), its writes, then the further threads.
pub(super) async fn run(
    cx: &JobContext<'_>,
    channel: &Channel,
    window: &[Message],
    window_start: Ts,
    read_at: DateTime<Utc>,
    report: &mut MemoryReport,
) -> Result<Digested, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let scope = MemoryScope::Channel {
        channel: channel.id.clone(),
    };
    let progress = progress(cx, channel, &scope).await?;
    let moved = moved_threads(cx, channel, window).await?;
    let facts_on = settings.reflection_min_messages > 0;
    let pending = Pending::of(window, &moved, &progress, facts_on);
    // A channel without a short-term memory (new, or one a deletion
    // removed) gets one at once.
    if progress.covered.is_some() && !digest::due(pending.new, pending.oldest, settings, now) {
        return Ok(Digested::Nothing);
    }
    let messages = with_roots(cx, channel, window, &moved).await?;
    let long = cx.store().get_memory(&scope, MemoryKind::Long).await?;
    let ask_long = long_asked(cx, long.as_ref(), progress.covered, window, window_start);
    let ask_facts = pending.facts_asked(settings, now);
    let marks = progress.prompt_marks(facts_on);
    let mut batches = moved.chunks(THREADS_PER_CALL);
    let threads = batches.next().unwrap_or_default();
    let first = Call::first(threads, ask_long, ask_facts, long, progress.short);
    let read = Read::of(cx, channel, &messages, first.asked.facts).await?;
    let (answer, found) = match first_answer(cx, &read, &messages, marks, &first, report).await? {
        ControlFlow::Continue(used) => used,
        ControlFlow::Break(digested) => return Ok(digested),
    };
    // What the memories now cover: up to what the prompt showed (one cut to
    // its budget leaves the newest for the next digest), never back.
    let Some(newest) = answer.covered_to(progress.covered) else {
        return Ok(Digested::Usable);
    };
    if forgotten_since(cx, &scope, read_at).await? {
        tracing::info!(%scope, "digest not written: a message it read was deleted or edited meanwhile");
        return Ok(Digested::Usable);
    }
    keep_memories(cx, report, channel, &answer, found, newest, read_at).await?;
    // Each message counted once (the profiles first: a fact's topics go to
    // its speakers' profiles). Facts that fail to be kept are asked again:
    // their mark moves last.
    count_people(cx, channel, window, &answer, progress.counted).await?;
    if first.asked.facts {
        answer
            .facts(cx, channel, progress.facts_read, report)
            .await?;
        keep_sketches(cx, &answer.sketches(channel, progress.facts_read, cx.now())).await?;
        if let Some(read_to) = answer.covered_to(progress.facts_read) {
            mark_reflected(cx, &facts_mark(&channel.id), read_to).await?;
        }
    }
    further_threads(cx, report, &read, &messages, marks, batches, read_at).await?;
    Ok(Digested::Usable)
}

/// Where a channel's marks stood when its digest began.
struct Progress {
    /// Its short-term memory.
    short: Option<Memory>,
    /// What its short-term memory covers.
    covered: Option<Ts>,
    /// What its facts read.
    facts_read: Option<Ts>,
    /// What its profiles counted (never behind the short-term memory).
    counted: Option<Ts>,
}

impl Progress {
    /// What the prompt marks: new (【新】) is what the short-term memory
    /// lacks, or (with facts on) what facts have not read.
    fn prompt_marks(&self, facts_on: bool) -> Marks {
        let unread = if facts_on {
            self.covered.min(self.facts_read)
        } else {
            self.covered
        };
        Marks {
            unread,
            covered: self.covered,
        }
    }
}

/// Reads where `channel`'s marks stand (`scope` is the channel's).
async fn progress(
    cx: &JobContext<'_>,
    channel: &Channel,
    scope: &MemoryScope,
) -> Result<Progress, PortError> {
    let store = cx.store();
    let short = store.get_memory(scope, MemoryKind::Short).await?;
    let covered = short.as_ref().and_then(|m| m.newest_ts);
    // Facts keep a mark of their own, which forgetting leaves and only a
    // digest that asked for facts moves: messages too few for facts wait
    // for the next digest, and a memory written again after a deletion
    // extracts nothing twice (nor counts anyone twice in the profiles).
    let facts_read = store.reflected(&facts_mark(&channel.id)).await?;
    let counted = covered.max(store.reflected(&profiles_mark(&channel.id)).await?);
    Ok(Progress {
        short,
        covered,
        facts_read,
        counted,
    })
}

/// What of a channel's window waits for a digest.
struct Pending {
    /// Its messages the short-term memory lacks.
    new: usize,
    /// People's messages whose facts were not read yet (none with facts off).
    people_unread: Vec<Ts>,
    /// The oldest of what waits: a new message, a reply a moved thread's
    /// summary lacks, a message whose facts were not read.
    oldest: Option<Ts>,
}

impl Pending {
    fn of(window: &[Message], moved: &[Moved], progress: &Progress, facts_on: bool) -> Pending {
        let is_new = |m: &Message| progress.covered.is_none_or(|c| m.ts > c);
        let new = window.iter().filter(|m| is_new(m)).count();
        let people_unread: Vec<Ts> = window
            .iter()
            .filter(|m| facts_on && !m.is_bot && progress.facts_read.is_none_or(|f| m.ts > f))
            .map(|m| m.ts)
            .collect();
        // A thread an earlier digest left out waits no longer than a message,
        // and nor does a message whose facts wait for company.
        let oldest = window
            .iter()
            .filter(|m| is_new(m))
            .map(|m| m.ts)
            .chain(moved.iter().map(|t| t.oldest_new))
            .chain(people_unread.iter().copied())
            .min();
        Pending {
            new,
            people_unread,
            oldest,
        }
    }

    /// Whether this digest asks for facts: too few for facts wait for
    /// company, but not past half the window (they would leave it unread).
    fn facts_asked(&self, settings: &Settings, now: DateTime<Utc>) -> bool {
        let min_facts = settings.reflection_min_messages as usize;
        min_facts > 0
            && (self.people_unread.len() >= min_facts
                || self
                    .people_unread
                    .iter()
                    .min()
                    .is_some_and(|oldest| digest::waited(*oldest, settings, now)))
    }
}

/// The `window` with the roots of the `moved` threads older than it (a
/// root says what its thread is about), oldest first.
async fn with_roots(
    cx: &JobContext<'_>,
    channel: &Channel,
    window: &[Message],
    moved: &[Moved],
) -> Result<Vec<Message>, PortError> {
    let mut messages = window.to_vec();
    for thread in moved {
        if !messages.iter().any(|m| m.ts == thread.root) {
            if let Some(root) = cx.store().get_message(&channel.id, thread.root).await? {
                messages.push(root);
            }
        }
    }
    messages.sort_by_key(|m| m.ts);
    Ok(messages)
}

/// Whether the first call rewrites the long-term memory `long`: when it is
/// due, or at once when what the short-term memory holds (up to `covered`)
/// from before the window is about to leave it.
fn long_asked(
    cx: &JobContext<'_>,
    long: Option<&Memory>,
    covered: Option<Ts>,
    window: &[Message],
    window_start: Ts,
) -> bool {
    let long_covered = long.and_then(|m| m.newest_ts);
    // The long-term memory takes it in now, whatever its interval.
    let leaving = covered > long_covered && long_covered.is_none_or(|l| l < window_start);
    let newest_in_window = window.iter().map(|m| m.ts).max();
    leaving || long_term_due(long, newest_in_window, cx.settings(), cx.now())
}

/// Asks the first call, and once more when its answer is out of shape:
/// the answer used and its memories, or what the digest came to without.
async fn first_answer<'a>(
    cx: &JobContext<'_>,
    read: &Read<'_>,
    messages: &[Message],
    marks: Marks,
    call: &Call<'a>,
    report: &mut MemoryReport,
) -> Result<ControlFlow<Digested, (Answer<'a>, digest::Digest)>, PortError> {
    let Some(answer) = ask(cx, read, messages, marks, call, false, report).await? else {
        return Ok(ControlFlow::Break(Digested::Nothing));
    };
    if let Ok(found) = answer.digest(call) {
        return Ok(ControlFlow::Continue((answer, found)));
    }
    // Once more, told what went wrong (prose around the object, or cut at
    // the token limit); then the channel backs off.
    unusable(cx, report);
    let Some(again) = ask(cx, read, messages, marks, call, true, report).await? else {
        return Ok(ControlFlow::Break(Digested::Unusable));
    };
    let Ok(found) = again.digest(call) else {
        unusable(cx, report);
        return Ok(ControlFlow::Break(Digested::Unusable));
    };
    Ok(ControlFlow::Continue((again, found)))
}

/// Stores the memories `found` in the first call's `answer`, covering up to
/// `newest`: the long-term memory, the threads', then the short-term
/// memory, which marks what is covered: a failure before it leaves the
/// digest to be made again. The caller has checked that nothing of the
/// channel was forgotten since `read_at`.
async fn keep_memories(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    channel: &Channel,
    answer: &Answer<'_>,
    found: digest::Digest,
    newest: Ts,
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    let scope = MemoryScope::Channel {
        channel: channel.id.clone(),
    };
    if let Some(content) = found.long {
        let kind = MemoryKind::Long;
        keep(cx, report, &scope, kind, content, Some(newest), read_at).await?;
    }
    keep_threads(cx, report, channel, answer, &found.threads, read_at).await?;
    if let Some(content) = found.channel {
        let kind = MemoryKind::Short;
        keep(cx, report, &scope, kind, content, Some(newest), read_at).await?;
    }
    Ok(())
}

/// Counts in the profiles the messages of `window` the answer showed that
/// they had not counted (up to `counted`), and moves their mark.
async fn count_people(
    cx: &JobContext<'_>,
    channel: &Channel,
    window: &[Message],
    answer: &Answer<'_>,
    counted: Option<Ts>,
) -> Result<(), PortError> {
    let Some(counted_to) = answer.covered_to(counted) else {
        return Ok(());
    };
    let shown: Vec<Message> = window
        .iter()
        .filter(|m| m.ts <= counted_to && answer.shown.contains(&m.ts))
        .cloned()
        .collect();
    if count_in_profiles(cx, &shown, counted).await?.is_some() {
        mark_reflected(cx, &profiles_mark(&channel.id), counted_to).await?;
    }
    Ok(())
}

/// Summarises the moved threads the first call left out, a call per batch
/// over their own `messages`; stops at a deletion or an edit in the
/// channel since `read_at` (the next digest writes them from what remains).
async fn further_threads<'a>(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    read: &Read<'_>,
    messages: &[Message],
    marks: Marks,
    batches: impl Iterator<Item = &'a [Moved]>,
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    let channel = read.channel;
    let scope = MemoryScope::Channel {
        channel: channel.id.clone(),
    };
    for threads in batches {
        let call = Call::threads(threads);
        let roots: Vec<Ts> = threads.iter().map(|t| t.root).collect();
        let theirs: Vec<Message> = messages
            .iter()
            .filter(|m| roots.contains(&m.ts) || m.thread_ts.is_some_and(|t| roots.contains(&t)))
            .cloned()
            .collect();
        let Some(answer) = ask(cx, read, &theirs, marks, &call, false, report).await? else {
            continue;
        };
        if let Ok(found) = answer.digest(&call) {
            if forgotten_since(cx, &scope, read_at).await? {
                return Ok(());
            }
            keep_threads(cx, report, channel, &answer, &found.threads, read_at).await?;
        }
    }
    Ok(())
}

/// Counts an answer that could not be used: in the report, and as
/// `LlmUnusableAnswers` (Role `memory`).
fn unusable(cx: &JobContext<'_>, report: &mut MemoryReport) {
    report.unusable += 1;
    cx.metrics()
        .put(Datum::count(metrics::LLM_UNUSABLE).by("Role", "memory"));
}

/// Where the mark of what a channel's facts read is kept: its top level.
fn facts_mark(channel: &ChannelId) -> Conversation {
    Conversation::top_level(channel.clone())
}

/// Where the mark of what a channel's profiles counted is kept: beside the
/// facts' mark (its top level), under a thread no message has (ts 0), so
/// that forgetting, which removes a short-term memory, leaves it.
fn profiles_mark(channel: &ChannelId) -> Conversation {
    Conversation::thread(channel.clone(), Ts::from_parts(0, 0))
}

/// What a digest's prompt marks: new to the facts (【新】, `unread`), and
/// already in the short-term memory (`covered`: left out first for the
/// budget).
#[derive(Debug, Clone, Copy)]
struct Marks {
    unread: Option<Ts>,
    covered: Option<Ts>,
}

/// One call of a digest: what it asks for, and the threads it summarises.
struct Call<'a> {
    asked: Asked,
    previous_long: Option<String>,
    previous_short: Option<String>,
    threads: &'a [Moved],
}

impl<'a> Call<'a> {
    /// The first call: the channel's short-term memory and `threads`, and
    /// when asked the facts and the long-term memory (shown then the
    /// previous `long` and `short`).
    fn first(
        threads: &'a [Moved],
        long: bool,
        facts: bool,
        previous_long: Option<Memory>,
        previous_short: Option<Memory>,
    ) -> Call<'a> {
        Call {
            asked: Asked {
                channel: true,
                long,
                facts,
                threads: threads.len(),
            },
            previous_long: previous_long.filter(|_| long).map(|m| m.content),
            previous_short: previous_short.filter(|_| long).map(|m| m.content),
            threads,
        }
    }

    /// A further call: `threads` only.
    fn threads(threads: &'a [Moved]) -> Call<'a> {
        Call {
            asked: Asked {
                channel: false,
                long: false,
                facts: false,
                threads: threads.len(),
            },
            previous_long: None,
            previous_short: None,
            threads,
        }
    }
}

/// A digest's answer, with the messages of its prompt by their numbers,
/// and which of them it was shown (a prompt over its budget leaves some out).
struct Answer<'a> {
    text: String,
    numbered: Vec<(Ts, UserId)>,
    /// The people the prompt named: whom a fact may be about.
    people: Vec<(UserId, String)>,
    /// The messages of people (not bots): the writers a sketch may be of.
    by_people: Vec<(Ts, UserId)>,
    /// The ts of the messages shown.
    shown: Vec<Ts>,
    /// The threads asked about.
    threads: &'a [Moved],
    /// Every reply of the prompt's messages: its root, its ts, whether shown.
    replies: Vec<(Ts, Ts, bool)>,
}

impl Answer<'_> {
    /// The memories in the answer; out of shape (logged), none.
    fn digest(&self, call: &Call<'_>) -> Result<digest::Digest, ()> {
        let roots: Vec<Ts> = self.threads.iter().map(|t| t.root).collect();
        digest::parse(&self.text, call.asked, &roots).map_err(|error| {
            // The answer may quote the conversation: its length only.
            tracing::warn!(%error, answer_chars = self.text.chars().count(), "digest unusable; no memory written");
        })
    }

    /// How far a mark at `mark` may move: [`digest::covered_to`] over the
    /// prompt's messages.
    fn covered_to(&self, mark: Option<Ts>) -> Option<Ts> {
        let seen: Vec<Seen> = self
            .numbered
            .iter()
            .map(|(ts, _)| Seen {
                ts: *ts,
                shown: self.shown.contains(ts),
                new: mark.is_none_or(|m| *ts > m),
            })
            .collect();
        digest::covered_to(&seen, mark)
    }

    /// How far `thread`'s summary covers: its replies up to the first one
    /// it lacked that the prompt left out; `None` when none it lacked was
    /// shown.
    fn thread_newest(&self, thread: &Moved) -> Option<Ts> {
        let seen: Vec<Seen> = self
            .replies
            .iter()
            .filter(|(root, _, _)| *root == thread.root)
            .map(|(_, ts, shown)| Seen {
                ts: *ts,
                shown: *shown,
                new: *ts >= thread.oldest_new,
            })
            .collect();
        digest::covered_to(&seen, None).filter(|to| *to >= thread.oldest_new)
    }

    /// The sketches of the answer, of the people who wrote the messages
    /// newer than `read` that the prompt showed (what earlier digests read
    /// for facts).
    fn sketches(&self, channel: &Channel, read: Option<Ts>, now: DateTime<Utc>) -> Vec<Sketch> {
        let wrote: BTreeSet<UserId> = self
            .by_people
            .iter()
            .filter(|(ts, _)| read.is_none_or(|r| *ts > r) && self.shown.contains(ts))
            .map(|(_, user)| user.clone())
            .collect();
        let Some(read_to) = self.shown.iter().max().copied() else {
            return Vec::new();
        };
        let digested = DigestRead {
            channel: &channel.id,
            wrote: &wrote,
            read_to,
        };
        parse_sketches(&self.text, &digested, &self.people, now)
    }

    /// Keeps the facts of the answer that come from messages newer than
    /// `read` (what earlier digests read for facts).
    async fn facts(
        &self,
        cx: &JobContext<'_>,
        channel: &Channel,
        read: Option<Ts>,
        report: &mut MemoryReport,
    ) -> Result<(), PortError> {
        match parse_reflection(&self.text, &self.numbered, &self.people) {
            Ok(found) => {
                let new: Vec<_> = found
                    .into_iter()
                    .filter(|f| f.sources.iter().any(|s| read.is_none_or(|c| *s > c)))
                    .collect();
                keep_facts(cx, &channel.id, new, report).await
            }
            Err(error) => {
                tracing::warn!(%error, "digest's facts unusable; none written");
                Ok(())
            }
        }
    }
}

/// `messages` as a digest's prompt numbers them (from 1), each shown as
/// `views` has it, marked new, covered, and kept (an asked thread's root).
fn numbered_lines(
    messages: &[Message],
    views: Vec<MessageView>,
    call: &Call<'_>,
    marks: Marks,
) -> Vec<DigestLine> {
    let Marks { unread, covered } = marks;
    let is_root = |m: &Message| call.threads.iter().any(|t| t.root == m.ts);
    messages
        .iter()
        .zip(views)
        .enumerate()
        .map(|(i, (m, view))| DigestLine {
            n: i + 1,
            message: view,
            // A root is shown as its thread's too.
            thread: m
                .thread_ts
                .or(Some(m.ts).filter(|_| is_root(m)))
                .map(|t| t.to_string()),
            new: unread.is_none_or(|c| m.ts > c),
            keep: is_root(m),
            covered: covered.is_some_and(|c| m.ts <= c),
        })
        .collect()
}

/// The sketches of `sketched` a digest revises, as its prompt shows them:
/// those of the people who wrote `messages` newer than `unread`.
fn to_revise(
    sketched: &[Sketch],
    messages: &[Message],
    unread: Option<Ts>,
    names: &BTreeMap<UserId, String>,
) -> Vec<DigestSketch> {
    let writers: Vec<&UserId> = messages
        .iter()
        .filter(|m| !m.is_bot && unread.is_none_or(|c| m.ts > c))
        .map(|m| &m.user)
        .collect();
    sketched
        .iter()
        .filter(|s| writers.contains(&&s.user))
        .map(|s| DigestSketch {
            name: names
                .get(&s.user)
                .cloned()
                .unwrap_or_else(|| s.user.to_string()),
            tags: s.tags.clone(),
            note: s.note.clone(),
            last_talk: s.last_talk.clone(),
        })
        .collect()
}

/// Renders and asks one digest call over `messages`; `None` (logged) when
/// the prompt does not render, or the LLM fails or answers nothing.
async fn ask<'a>(
    cx: &JobContext<'_>,
    read: &Read<'_>,
    messages: &[Message],
    marks: Marks,
    call: &Call<'a>,
    strict: bool,
    report: &mut MemoryReport,
) -> Result<Option<Answer<'a>>, PortError> {
    let (unread, channel, names) = (marks.unread, read.channel, &read.names);
    let settings = cx.settings();
    let views = messages
        .iter()
        .map(|m| MessageView::new(m, names, settings.timezone))
        .collect();
    let lines = numbered_lines(messages, views, call, marks);
    let sketched: &[Sketch] = if call.asked.facts {
        &read.sketched
    } else {
        &[]
    };
    let sketches = to_revise(sketched, messages, unread, names);
    let task = DigestTask {
        channel_name: channel.name.clone(),
        window_hours: settings.short_term_window_hours,
        ask_channel: call.asked.channel,
        ask_long: call.asked.long,
        ask_facts: call.asked.facts,
        previous_long: call.previous_long.clone(),
        previous_short: call.previous_short.clone(),
        threads: call
            .threads
            .iter()
            .map(|t| DigestThread {
                ts: t.root.to_string(),
                previous: t.previous.clone(),
            })
            .collect(),
        sketches,
        messages: lines,
        strict,
    };
    let (request, shown) = match digest_request(settings, cx.now(), &task) {
        Ok(fitted) => fitted,
        Err(error) => {
            tracing::error!(%error, channel = %channel.id, "digest prompt failed to render");
            return Ok(None);
        }
    };
    report.llm_calls += 1;
    let text = match cx.llm().complete(&request).await {
        Ok(reply) => reply.text,
        Err(error) => {
            tracing::warn!(%error, channel = %channel.id, "digest not written: LLM failed");
            return Ok(None);
        }
    };
    let numbered = messages.iter().map(|m| (m.ts, m.user.clone())).collect();
    let shown: Vec<Ts> = shown
        .iter()
        .filter_map(|n| messages.get(n.wrapping_sub(1)))
        .map(|m| m.ts)
        .collect();
    Ok(Some(Answer {
        text,
        numbered,
        people: names
            .iter()
            .map(|(id, name)| (id.clone(), name.clone()))
            .collect(),
        by_people: messages
            .iter()
            .filter(|m| !m.is_bot)
            .map(|m| (m.ts, m.user.clone()))
            .collect(),
        replies: messages
            .iter()
            .filter_map(|m| m.thread_ts.map(|root| (root, m.ts, shown.contains(&m.ts))))
            .collect(),
        shown,
        threads: call.threads,
    }))
}

/// The threads of `window` whose summary lacks a message of it, the most
/// overdue first.
async fn moved_threads(
    cx: &JobContext<'_>,
    channel: &Channel,
    window: &[Message],
) -> Result<Vec<Moved>, PortError> {
    let mut spans: BTreeMap<Ts, Vec<Ts>> = BTreeMap::new();
    for m in window {
        if let Some(root) = m.thread_ts {
            spans.entry(root).or_default().push(m.ts);
        }
    }
    let mut moved = Vec::new();
    for (root, replies) in spans {
        let scope = MemoryScope::Thread {
            channel: channel.id.clone(),
            thread_ts: root,
        };
        let previous = cx.store().get_memory(&scope, MemoryKind::Short).await?;
        let covered = previous.as_ref().and_then(|m| m.newest_ts);
        let lacking: Vec<Ts> = replies
            .into_iter()
            .filter(|ts| covered.is_none_or(|c| *ts > c))
            .collect();
        if let Some(&oldest_new) = lacking.iter().min() {
            moved.push(Moved {
                root,
                oldest_new,
                previous: previous.map(|m| m.content),
            });
        }
    }
    moved.sort_by_key(|t| (t.oldest_new, t.root));
    Ok(moved)
}

/// Stores the summaries `found` of the threads `answer` asked about, each
/// covering the newest of its replies the prompt showed. The caller has
/// checked that nothing of the channel was forgotten since `read_at`.
async fn keep_threads(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    channel: &Channel,
    answer: &Answer<'_>,
    found: &[(Ts, String)],
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    for (root, summary) in found {
        let Some(thread) = answer.threads.iter().find(|t| t.root == *root) else {
            continue;
        };
        let Some(newest) = answer.thread_newest(thread) else {
            continue;
        };
        let scope = MemoryScope::Thread {
            channel: channel.id.clone(),
            thread_ts: *root,
        };
        keep(
            cx,
            report,
            &scope,
            MemoryKind::Short,
            summary.clone(),
            Some(newest),
            read_at,
        )
        .await?;
    }
    Ok(())
}
