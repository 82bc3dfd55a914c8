//! The memory prompts: the views the `memory_*.j2` templates read, one per
//! task, rendered inside the shared rules of `memory_system.j2` and fitted
//! to `memory_prompt_max_tokens`.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::render::{render, PromptError};
use super::view::{format_now, MessageView, PersonaView};
use myao_core::ports::{LlmRequest, LlmRole};
use myao_domain::budget::{cap_chars, estimate_tokens};
use myao_domain::digest::Asked;
use myao_domain::{MemoryKind, Settings};

#[derive(Serialize)]
struct TaskView<'a, T: Serialize> {
    persona: PersonaView,
    max_tokens: u32,
    current_time: String,
    task_template: &'static str,
    #[serde(flatten)]
    task: &'a T,
}

/// A memory task's input, cut to fit the memory prompt's budget.
pub trait Fit: Serialize + Clone {
    /// Cuts every message's text to `max_chars` characters.
    fn cap(&mut self, max_chars: usize);
    /// Leaves out the least needed piece (the oldest message, the least
    /// recent channel); its estimated tokens, or `None` when nothing is left
    /// to cut.
    fn drop_one(&mut self) -> Option<usize>;
}

fn cap_views(messages: &mut [MessageView], max_chars: usize) {
    for m in messages {
        m.text = cap_chars(&m.text, max_chars);
    }
}

/// Leaves out `messages[i]`; its estimated tokens.
fn drop_message(messages: &mut Vec<MessageView>, i: usize) -> usize {
    let m = messages.remove(i);
    estimate_tokens(&m.text) + estimate_tokens(&m.user) + 8
}

impl Fit for ThreadTask {
    fn cap(&mut self, max_chars: usize) {
        cap_views(&mut self.messages, max_chars);
    }
    fn drop_one(&mut self) -> Option<usize> {
        // The root (first) says what the thread is about: the oldest reply goes.
        (self.messages.len() > 2).then(|| drop_message(&mut self.messages, 1))
    }
}

impl Fit for WindowTask {
    fn cap(&mut self, max_chars: usize) {
        cap_views(&mut self.messages, max_chars);
    }
    fn drop_one(&mut self) -> Option<usize> {
        (!self.messages.is_empty()).then(|| drop_message(&mut self.messages, 0))
    }
}

impl Fit for MergeTask {
    // Two memories, each bounded by the memory model's answer length.
    fn cap(&mut self, _max_chars: usize) {}
    fn drop_one(&mut self) -> Option<usize> {
        None
    }
}

impl Fit for WorkspaceTask {
    fn cap(&mut self, _max_chars: usize) {}
    fn drop_one(&mut self) -> Option<usize> {
        // The least recently active channel goes first.
        let i = self
            .channels
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| c.last_active)
            .map(|(i, _)| i)?;
        let c = self.channels.remove(i);
        Some(estimate_tokens(&c.memory) + estimate_tokens(&c.name) + 8)
    }
}

/// A thread's short-term memory (`memory_thread_short.j2`).
#[derive(Debug, Serialize, Clone)]
pub struct ThreadTask {
    pub channel_name: String,
    pub thread_ts: String,
    pub previous: Option<String>,
    pub messages: Vec<MessageView>,
}

/// A channel's messages over a window (`memory_channel_short.j2`).
#[derive(Debug, Serialize, Clone)]
pub struct WindowTask {
    pub channel_name: String,
    pub window_hours: u32,
    pub messages: Vec<MessageView>,
}

/// A short-term memory merged into a long-term one
/// (`memory_channel_long.j2`, `memory_workspace_long.j2`).
#[derive(Debug, Serialize, Clone)]
pub struct MergeTask {
    pub channel_name: String,
    pub previous: Option<String>,
    pub short_term: String,
}

/// One channel's memory, as the workspace prompts list it.
#[derive(Debug, Serialize, Clone)]
pub struct ChannelLine {
    pub name: String,
    pub memory: String,
    /// Not shown: a prompt over its budget drops the least recent first.
    #[serde(skip)]
    pub last_active: Option<DateTime<Utc>>,
}

/// The open channels' memories (`memory_workspace_short.j2`).
#[derive(Debug, Serialize, Clone)]
pub struct WorkspaceTask {
    pub channels: Vec<ChannelLine>,
}

/// One memory prompt: a task's own template (`memory_*.j2`) inside the
/// shared rules of `memory_system.j2`, for a memory of `kind`.
#[derive(Debug, Clone, Copy)]
pub struct MemoryPrompt<'a> {
    pub settings: &'a Settings,
    pub now: DateTime<Utc>,
    pub kind: MemoryKind,
    pub template: &'static str,
}

impl MemoryPrompt<'_> {
    /// The prompt over `task`, as it is.
    pub fn render<T: Serialize>(&self, task: &T) -> Result<String, PromptError> {
        let settings = self.settings;
        let max_tokens = match self.kind {
            MemoryKind::Long => settings.long_term_max_tokens,
            MemoryKind::Short => settings.short_term_max_tokens,
        };
        let view = TaskView {
            persona: PersonaView {
                name: settings.persona_name.clone(),
                system_prompt: settings.persona_system_prompt.clone(),
            },
            max_tokens,
            current_time: format_now(self.now, settings.timezone),
            task_template: self.template,
            task,
        };
        render("memory_system.j2", &view)
    }

    /// The memory LLM's request over `task`: its messages capped at
    /// `max_message_chars` and the oldest left out while the prompt is over
    /// `memory_prompt_max_tokens`.
    pub fn request<T: Fit>(&self, task: &T) -> Result<LlmRequest, PromptError> {
        Ok(LlmRequest {
            role: LlmRole::Memory,
            system: self.fitted(task)?,
            json: false,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        })
    }

    fn fitted<T: Fit>(&self, task: &T) -> Result<String, PromptError> {
        fitted(self.settings, task, |task| self.render(task))
    }
}

/// One message of a digest, numbered for the facts' sources.
#[derive(Debug, Serialize, Clone)]
pub struct DigestLine {
    /// Its number, from 1, kept when older messages are left out.
    pub n: usize,
    #[serde(flatten)]
    pub message: MessageView,
    /// The thread it belongs to (its root's ts), if any.
    pub thread: Option<String>,
    /// Newer than what the channel's memory covers: facts come from these.
    pub new: bool,
    /// Never left out for the budget (the root of a thread asked about).
    #[serde(skip)]
    pub keep: bool,
    /// Already in the short-term memory: the first left out for the budget.
    #[serde(skip)]
    pub covered: bool,
}

/// A thread a digest summarises, and its summary so far.
#[derive(Debug, Serialize, Clone)]
pub struct DigestThread {
    pub ts: String,
    pub previous: Option<String>,
}

/// A person's sketch so far, as a digest is shown it to revise.
#[derive(Debug, Serialize, Clone)]
pub struct DigestSketch {
    pub name: String,
    pub tags: Vec<String>,
    pub note: String,
    pub last_talk: String,
}

/// A channel's digest (`memory_digest.j2`): what it asks for
/// ([`myao_domain::digest::Asked`]) over the channel's window.
#[derive(Debug, Serialize, Clone)]
pub struct DigestTask {
    pub channel_name: String,
    pub window_hours: u32,
    pub ask_channel: bool,
    pub ask_long: bool,
    pub ask_facts: bool,
    pub previous_long: Option<String>,
    /// The short-term memory being replaced, for the long-term one to take
    /// in what leaves the window.
    pub previous_short: Option<String>,
    pub threads: Vec<DigestThread>,
    /// With facts asked: the sketches so far of the people who wrote the
    /// new messages, for the digest to revise (none yet, not listed).
    pub sketches: Vec<DigestSketch>,
    pub messages: Vec<DigestLine>,
    /// Asked again after an answer that could not be read as the JSON asked
    /// for (prose around it, or cut at the token limit): the prompt says so
    /// and asks for the object alone, its memories short.
    pub strict: bool,
}

impl Fit for DigestTask {
    fn cap(&mut self, max_chars: usize) {
        for line in &mut self.messages {
            line.message.text = cap_chars(&line.message.text, max_chars);
        }
    }
    /// What a memory already covers goes first, the oldest first; then the
    /// newest new messages (the memory then covers only up to what it was
    /// shown, and the next digest reads the rest). An asked thread's root
    /// stays.
    fn drop_one(&mut self) -> Option<usize> {
        let lines = &self.messages;
        let i = lines
            .iter()
            .position(|l| l.covered && !l.keep)
            .or_else(|| lines.iter().rposition(|l| !l.covered && !l.keep))
            .filter(|_| lines.len() > 1)?;
        let m = self.messages.remove(i).message;
        Some(estimate_tokens(&m.text) + estimate_tokens(&m.user) + 12)
    }
}

#[derive(Serialize)]
struct DigestView<'a> {
    persona: PersonaView,
    current_time: String,
    short_max_tokens: u32,
    long_max_tokens: u32,
    thread_max_tokens: u32,
    #[serde(flatten)]
    task: &'a DigestTask,
}

/// The memory LLM's request for a digest (JSON, with room for what it
/// asks), and the numbers of the messages it shows (fitted to the budget).
pub fn digest_request(
    settings: &Settings,
    now: DateTime<Utc>,
    task: &DigestTask,
) -> Result<(LlmRequest, Vec<usize>), PromptError> {
    let asked = Asked {
        channel: task.ask_channel,
        long: task.ask_long,
        facts: task.ask_facts,
        threads: task.threads.len(),
    };
    let render_task = |task: &DigestTask| {
        render(
            "memory_digest.j2",
            &DigestView {
                persona: PersonaView {
                    name: settings.persona_name.clone(),
                    system_prompt: settings.persona_system_prompt.clone(),
                },
                current_time: format_now(now, settings.timezone),
                short_max_tokens: settings.short_term_max_tokens,
                long_max_tokens: settings.long_term_max_tokens,
                thread_max_tokens: settings.short_term_max_tokens / 2,
                task,
            },
        )
    };
    let (system, shown) = fit(settings, task, render_task)?;
    let request = LlmRequest {
        role: LlmRole::Memory,
        system,
        json: true,
        max_tokens: Some(asked.max_tokens(settings)),
        images: Vec::new(),
        stable_prefix: 0,
    };
    Ok((request, shown.messages.iter().map(|l| l.n).collect()))
}

/// `task` rendered by `render`: its messages capped at `max_message_chars`,
/// and the least needed left out while the prompt is over
/// `memory_prompt_max_tokens`.
fn fitted<T: Fit>(
    settings: &Settings,
    task: &T,
    render: impl Fn(&T) -> Result<String, PromptError>,
) -> Result<String, PromptError> {
    fit(settings, task, render).map(|(prompt, _)| prompt)
}

/// [`fitted`], and the task as it was rendered.
fn fit<T: Fit>(
    settings: &Settings,
    task: &T,
    render: impl Fn(&T) -> Result<String, PromptError>,
) -> Result<(String, T), PromptError> {
    let mut task = task.clone();
    task.cap(settings.max_message_chars as usize);
    let budget = settings.memory_prompt_max_tokens as usize;
    let mut dropped = 0usize;
    loop {
        let prompt = render(&task)?;
        let tokens = estimate_tokens(&prompt);
        if tokens <= budget {
            if dropped > 0 {
                tracing::info!(tokens, budget, dropped, "memory prompt cut to its budget");
            }
            return Ok((prompt, task));
        }
        let mut excess = tokens - budget;
        while excess > 0 {
            match task.drop_one() {
                Some(freed) => {
                    dropped += 1;
                    excess = excess.saturating_sub(freed);
                }
                None => {
                    tracing::warn!(
                        tokens,
                        budget,
                        "memory prompt over its budget, nothing left to cut"
                    );
                    return Ok((render(&task)?, task));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_prompt_over_budget_drops_the_least_recent_channel_first() {
        let line = |name: &str, hour: i64| ChannelLine {
            name: name.into(),
            memory: format!("memory of {name}"),
            last_active: DateTime::<Utc>::from_timestamp(hour * 3600, 0),
        };
        let mut task = WorkspaceTask {
            channels: vec![line("alpha", 5), line("beta", 1), line("gamma", 3)],
        };
        let names = |t: &WorkspaceTask| -> Vec<String> {
            t.channels.iter().map(|c| c.name.clone()).collect()
        };
        assert!(task.drop_one().is_some());
        assert_eq!(
            names(&task),
            ["alpha", "gamma"],
            "beta was the least recent"
        );
        assert!(task.drop_one().is_some());
        assert_eq!(names(&task), ["alpha"]);
        assert!(task.drop_one().is_some());
        assert_eq!(task.drop_one(), None);
    }
}
