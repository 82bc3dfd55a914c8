//! Prompts: the minijinja templates of `templates/`, embedded in the binary,
//! rendered from a [`Context`] (judgment, response) or a memory task
//! ([`memory`]) through plain view structs.

pub mod memory;
mod render;
mod view;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use myao_core::ports::{LlmRequest, LlmRole};
use myao_domain::budget::{cap_chars, estimate_tokens};
use myao_domain::{Context, Message, Person, Settings, Ts};

pub use render::{render, status_lines, PromptError};
pub use view::{format_now, format_time, MessageView, PersonaView};

#[derive(Debug, Clone, Serialize)]
pub struct ChannelMemoryView {
    pub name: String,
    pub long_term: Option<String>,
    pub short_term: Option<String>,
    /// Not shown: which channels' memories a prompt over budget drops first.
    #[serde(skip)]
    pub last_active: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadMemoryView {
    pub thread_ts: String,
    pub memory: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadView {
    pub thread_ts: String,
    pub messages: Vec<MessageView>,
}

/// The view of a [`Context`] that the judgment and response templates read.
#[derive(Debug, Clone, Serialize)]
pub struct ContextView {
    pub persona: PersonaView,
    pub workspace_long_term_memory: Option<String>,
    pub workspace_short_term_memory: Option<String>,
    pub channel_memories: Vec<ChannelMemoryView>,
    pub channels_with_memory: Vec<ChannelMemoryView>,
    pub thread_memories: Vec<ThreadMemoryView>,
    pub current_channel_name: String,
    pub top_level_messages: Vec<MessageView>,
    pub threads: Vec<ThreadView>,
    pub target_thread_ts: Option<String>,
    /// The judged or answered conversation: the thread (its root first,
    /// when known) or the top level, at most `message_limit` newest.
    pub target_messages: Vec<MessageView>,
    pub current_time: String,
    /// The reply is to be one short sentence.
    pub short: bool,
    /// The people of the conversation: name, familiarity, recent topics.
    pub people: Vec<PersonView>,
    /// Facts recalled for the conversation.
    pub facts: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PersonView {
    pub name: String,
    pub familiarity: String,
    pub topics: Vec<String>,
    pub tags: Vec<String>,
    pub note: Option<String>,
    pub last_talk: Option<String>,
}

impl From<Person> for PersonView {
    fn from(p: Person) -> PersonView {
        PersonView {
            name: p.name,
            familiarity: p.familiarity,
            topics: p.topics,
            tags: p.tags,
            note: p.note,
            last_talk: p.last_talk,
        }
    }
}

impl ContextView {
    /// Builds the view. `message_limit` bounds the target conversation.
    pub fn new(context: &Context, now: DateTime<Utc>, tz: Tz, message_limit: usize) -> ContextView {
        let view = |m: &Message| MessageView::new(m, context.user_names(), tz);
        let history = context.conversation_history();
        let target_thread_ts: Option<Ts> = context.target_thread_ts().copied();
        // The newest `message_limit` messages; a thread keeps its root first,
        // since it says what the thread is about.
        let newest = |messages: &[Message], limit: usize| -> Vec<MessageView> {
            messages[messages.len().saturating_sub(limit)..]
                .iter()
                .map(view)
                .collect()
        };
        let target: Vec<MessageView> = match target_thread_ts {
            Some(root) => match history.thread_root(&root) {
                Some(r) => std::iter::once(view(r))
                    .chain(newest(
                        history.get_thread(&root),
                        message_limit.saturating_sub(1),
                    ))
                    .collect(),
                None => newest(history.get_thread(&root), message_limit),
            },
            None => newest(history.top_level_messages(), message_limit),
        };
        let channel_memories: Vec<ChannelMemoryView> = context
            .channel_memories()
            .iter()
            .map(|c| ChannelMemoryView {
                name: c.channel_name().to_owned(),
                long_term: c.long_term_memory().map(str::to_owned),
                short_term: c.short_term_memory().map(str::to_owned),
                last_active: c.last_active(),
            })
            .collect();
        ContextView {
            persona: PersonaView {
                name: context.persona().name.clone(),
                system_prompt: context.persona().system_prompt.clone(),
            },
            workspace_long_term_memory: context.workspace_long_term_memory().map(str::to_owned),
            workspace_short_term_memory: context.workspace_short_term_memory().map(str::to_owned),
            channels_with_memory: channel_memories
                .iter()
                .filter(|c| c.long_term.is_some() || c.short_term.is_some())
                .cloned()
                .collect(),
            channel_memories,
            thread_memories: context
                .thread_memories()
                .iter()
                .map(|(ts, memory)| ThreadMemoryView {
                    thread_ts: ts.to_string(),
                    memory: memory.clone(),
                })
                .collect(),
            current_channel_name: history.channel_name().to_owned(),
            top_level_messages: history.top_level_messages().iter().map(view).collect(),
            threads: history
                .thread_messages()
                .iter()
                .map(|(ts, msgs)| ThreadView {
                    thread_ts: ts.to_string(),
                    messages: msgs.iter().map(view).collect(),
                })
                .collect(),
            target_thread_ts: target_thread_ts.map(|t| t.to_string()),
            target_messages: target,
            current_time: format_now(now, tz),
            short: false,
            people: context
                .people()
                .iter()
                .map(|p| PersonView::from(p.clone()))
                .collect(),
            facts: context.facts().to_vec(),
        }
    }
}

/// How many thread summaries a prompt over its budget leaves out at once
/// (see [`ContextView::fit`]).
pub const THREAD_CUT_BLOCK: usize = 8;

/// What fitting a prompt to its budget left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cuts {
    pub channel_memories: usize,
    pub thread_memories: usize,
    pub messages: usize,
    /// The prompt's estimated tokens once fitted.
    pub tokens: usize,
    /// Still over the budget with nothing left to cut (the persona, the
    /// instructions and the judged conversation are never cut).
    pub over: bool,
}

impl Cuts {
    pub fn any(&self) -> bool {
        self.channel_memories + self.thread_memories + self.messages > 0
    }
}

impl ContextView {
    /// The view the reply prompt renders: the answered conversation without
    /// the rest of the channel's messages (its template shows only that), so
    /// that fitting it to a budget cuts only what the prompt shows.
    pub fn for_reply(mut self) -> ContextView {
        self.top_level_messages.clear();
        self.threads.clear();
        self
    }

    /// Cuts every shown message's text to `max_chars` characters.
    pub fn cap_messages(&mut self, max_chars: usize) {
        let cap = |m: &mut MessageView| m.text = cap_chars(&m.text, max_chars);
        self.top_level_messages.iter_mut().for_each(cap);
        self.target_messages.iter_mut().for_each(cap);
        for t in &mut self.threads {
            t.messages.iter_mut().for_each(cap);
        }
    }

    /// Renders with `render` and, while the prompt's estimated tokens exceed
    /// `max_tokens`, leaves out what is least needed: other channels'
    /// memories (the least recently active first), then thread summaries
    /// (the oldest first, [`THREAD_CUT_BLOCK`] at a time, the judged
    /// thread's last), then the channel's
    /// oldest messages outside the judged conversation. The persona, the
    /// instructions, the workspace memories and the judged conversation
    /// (with its root) are kept.
    pub fn fit(
        &mut self,
        max_tokens: usize,
        render: impl Fn(&ContextView) -> Result<String, PromptError>,
    ) -> Result<(String, Cuts), PromptError> {
        let mut cuts = Cuts::default();
        loop {
            let prompt = render(self)?;
            let tokens = estimate_tokens(&prompt);
            cuts.tokens = tokens;
            if tokens <= max_tokens {
                return Ok((prompt, cuts));
            }
            // Cut by the estimate of what goes, then render again to check.
            let mut excess = tokens - max_tokens;
            while excess > 0 {
                match self.cut_one(&mut cuts) {
                    Some(freed) => excess = excess.saturating_sub(freed),
                    None => {
                        cuts.over = true;
                        let prompt = render(self)?;
                        cuts.tokens = estimate_tokens(&prompt);
                        return Ok((prompt, cuts));
                    }
                }
            }
        }
    }

    /// Leaves out the least needed piece; returns its estimated tokens.
    fn cut_one(&mut self, cuts: &mut Cuts) -> Option<usize> {
        let current = self.current_channel_name.clone();
        let other = self
            .channels_with_memory
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name != current)
            .min_by_key(|(_, c)| c.last_active)
            .map(|(i, _)| i);
        if let Some(i) = other {
            let c = self.channels_with_memory.remove(i);
            cuts.channel_memories += 1;
            return Some(
                [c.long_term, c.short_term]
                    .iter()
                    .flatten()
                    .map(|t| estimate_tokens(t) + 4)
                    .sum::<usize>()
                    + 4,
            );
        }
        if !self.thread_memories.is_empty() {
            // Oldest first, a block at a time; the judged thread's summary
            // last. In blocks, so that the list's first summary stays the
            // same while new threads join its end (a block's worth of them):
            // what comes before it stays a prefix a provider's cache reuses.
            let target = self.target_thread_ts.clone();
            let mut freed = 0;
            for _ in 0..THREAD_CUT_BLOCK {
                let Some(i) = self
                    .thread_memories
                    .iter()
                    .position(|t| Some(&t.thread_ts) != target.as_ref())
                else {
                    break;
                };
                let t = self.thread_memories.remove(i);
                cuts.thread_memories += 1;
                freed += estimate_tokens(&t.memory) + 8;
            }
            if freed == 0 {
                let t = self.thread_memories.remove(0);
                cuts.thread_memories += 1;
                freed = estimate_tokens(&t.memory) + 8;
            }
            return Some(freed);
        }
        // The oldest message shown outside the judged conversation: the top
        // level is only shown apart from it when a thread is judged.
        let target = self.target_thread_ts.clone();
        let mut oldest: Option<(String, Option<usize>)> = None;
        if target.is_some() {
            if let Some(m) = self.top_level_messages.first() {
                oldest = Some((m.time.clone(), None));
            }
        }
        for (i, t) in self.threads.iter().enumerate() {
            if Some(&t.thread_ts) == target.as_ref() {
                continue;
            }
            if let Some(m) = t.messages.first() {
                if oldest.as_ref().is_none_or(|(time, _)| m.time < *time) {
                    oldest = Some((m.time.clone(), Some(i)));
                }
            }
        }
        let (_, place) = oldest?;
        let m = match place {
            None => self.top_level_messages.remove(0),
            Some(i) => {
                let m = self.threads[i].messages.remove(0);
                if self.threads[i].messages.is_empty() {
                    self.threads.remove(i);
                }
                m
            }
        };
        cuts.messages += 1;
        Some(estimate_tokens(&m.text) + estimate_tokens(&m.user) + 8)
    }
}

/// Renders `view` with `render`, each message capped at `max_chars` and the
/// whole fitted to `max_tokens` (see [`ContextView::fit`]); what was left
/// out is logged (counts only).
pub fn fitted(
    view: ContextView,
    max_chars: u32,
    max_tokens: u32,
    render: fn(&ContextView) -> Result<String, PromptError>,
) -> Result<String, PromptError> {
    Ok(fitted_view(view, max_chars, max_tokens, render)?.0)
}

/// [`fitted`], and the bytes the prompt begins with that are the same for
/// every channel and conversation until a memory is written
/// (`templates/_stable.j2`, rendered with what the fitting kept): 0 when
/// the prompt does not begin with them.
pub fn fitted_with_stable_prefix(
    view: ContextView,
    max_chars: u32,
    max_tokens: u32,
    render: fn(&ContextView) -> Result<String, PromptError>,
) -> Result<(String, usize), PromptError> {
    let (prompt, view) = fitted_view(view, max_chars, max_tokens, render)?;
    let stable = self::render("_stable.j2", &view)?;
    let prefix = if prompt.starts_with(&stable) {
        stable.len()
    } else {
        0
    };
    Ok((prompt, prefix))
}

fn fitted_view(
    mut view: ContextView,
    max_chars: u32,
    max_tokens: u32,
    render: fn(&ContextView) -> Result<String, PromptError>,
) -> Result<(String, ContextView), PromptError> {
    view.cap_messages(max_chars as usize);
    let (prompt, cuts) = view.fit(max_tokens as usize, render)?;
    if cuts.any() || cuts.over {
        tracing::info!(
            tokens = cuts.tokens,
            budget = max_tokens,
            channel_memories = cuts.channel_memories,
            thread_memories = cuts.thread_memories,
            messages = cuts.messages,
            over = cuts.over,
            "prompt cut to its budget"
        );
    }
    Ok((prompt, view))
}

/// The judgment prompt (design extra05b): everything in one system message.
pub fn judgment_prompt(view: &ContextView) -> Result<String, PromptError> {
    render("judgment_system.j2", view)
}

/// The response prompt (design 08).
pub fn response_prompt(view: &ContextView) -> Result<String, PromptError> {
    render("response_system.j2", view)
}

/// The two prompts over a [`Context`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextPrompt {
    /// Whether and when to speak (design extra05b): the answer is a JSON
    /// verdict.
    Judgment,
    /// The reply (design 08), over the answered conversation
    /// ([`ContextView::for_reply`]).
    Response,
    /// A reply of one short sentence, held to `short_max_tokens`.
    ShortResponse,
}

impl ContextPrompt {
    /// The LLM request of this prompt over `context`, fitted to its budget
    /// (`judgment_prompt_max_tokens`, `response_prompt_max_tokens`).
    pub fn request(
        self,
        context: &Context,
        settings: &Settings,
        now: DateTime<Utc>,
    ) -> Result<LlmRequest, PromptError> {
        type Render = fn(&ContextView) -> Result<String, PromptError>;
        let view = ContextView::new(
            context,
            now,
            settings.timezone,
            settings.message_limit as usize,
        );
        let (role, view, max_tokens, render): (_, _, _, Render) = match self {
            ContextPrompt::Judgment => (
                LlmRole::Judgment,
                view,
                settings.judgment_prompt_max_tokens,
                judgment_prompt,
            ),
            ContextPrompt::Response | ContextPrompt::ShortResponse => (
                LlmRole::Response,
                ContextView {
                    short: self == ContextPrompt::ShortResponse,
                    ..view.for_reply()
                },
                settings.response_prompt_max_tokens,
                response_prompt,
            ),
        };
        let (system, stable_prefix) =
            fitted_with_stable_prefix(view, settings.max_message_chars, max_tokens, render)?;
        Ok(LlmRequest {
            role,
            system,
            json: self == ContextPrompt::Judgment,
            max_tokens: (self == ContextPrompt::ShortResponse).then_some(settings.short_max_tokens),
            images: Vec::new(),
            stable_prefix,
        })
    }
}

/// What the two proactive prompts show (`templates/_proactive.j2`): the
/// persona and, of the one channel, its own memories, its people, the facts
/// that may be told outside their conversation and its last messages.
/// Nothing of any other channel and no workspace memory: a topic the bot
/// opens unasked draws on that channel alone.
#[derive(Debug, Clone, Serialize)]
pub struct ProactiveView {
    pub persona: PersonaView,
    pub channel_name: String,
    pub long_term: Option<String>,
    pub short_term: Option<String>,
    pub people: Vec<PersonView>,
    /// Shareable facts of the channel, strongest first.
    pub facts: Vec<String>,
    /// The channel's last messages, oldest first.
    pub recent_messages: Vec<MessageView>,
    /// How long the channel has been silent, in whole hours.
    pub silent_hours: i64,
    pub current_time: String,
    /// The topic to open with: the post's prompt only.
    pub topic: Option<String>,
}

impl ProactiveView {
    /// The proactive judgment's request (the judgment model, a JSON answer
    /// `{"open": bool, "topic": "..."}`), fitted to `judgment_prompt_max_tokens`.
    pub fn judgment_request(mut self, settings: &Settings) -> Result<LlmRequest, PromptError> {
        self.topic = None;
        Ok(LlmRequest {
            role: LlmRole::Judgment,
            system: self.fit(
                "proactive_system.j2",
                settings.max_message_chars,
                settings.judgment_prompt_max_tokens,
            )?,
            json: true,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        })
    }

    /// The opening post's request (the reply model), about `topic`, fitted
    /// to `response_prompt_max_tokens`.
    pub fn post_request(
        mut self,
        topic: &str,
        settings: &Settings,
    ) -> Result<LlmRequest, PromptError> {
        self.topic = Some(topic.to_owned());
        Ok(LlmRequest {
            role: LlmRole::Response,
            system: self.fit(
                "opener_system.j2",
                settings.max_message_chars,
                settings.response_prompt_max_tokens,
            )?,
            json: false,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        })
    }

    /// Renders `template` with each message capped at `max_chars`, leaving
    /// out the oldest messages while over `max_tokens` (the memories, the
    /// people and the facts are short and kept).
    fn fit(
        &mut self,
        template: &'static str,
        max_chars: u32,
        max_tokens: u32,
    ) -> Result<String, PromptError> {
        for m in &mut self.recent_messages {
            m.text = cap_chars(&m.text, max_chars as usize);
        }
        loop {
            let prompt = render(template, self)?;
            if estimate_tokens(&prompt) <= max_tokens as usize || self.recent_messages.is_empty() {
                return Ok(prompt);
            }
            self.recent_messages.remove(0);
        }
    }
}

#[cfg(test)]
mod tests;
