//! Prompts: the minijinja templates of `templates/`, embedded in the binary,
//! rendered from a [`Context`] through plain view structs.

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::domain::text::render_slack_text;
use crate::domain::{Context, Message, Ts};

/// Every template, by name.
const TEMPLATES: &[(&str, &str)] = &[
    ("_context.j2", include_str!("../../templates/_context.j2")),
    ("_messages.j2", include_str!("../../templates/_messages.j2")),
    (
        "judgment_system.j2",
        include_str!("../../templates/judgment_system.j2"),
    ),
    (
        "response_system.j2",
        include_str!("../../templates/response_system.j2"),
    ),
    (
        "memory_system.j2",
        include_str!("../../templates/memory_system.j2"),
    ),
    (
        "memory_thread_short.j2",
        include_str!("../../templates/memory_thread_short.j2"),
    ),
    (
        "memory_channel_short.j2",
        include_str!("../../templates/memory_channel_short.j2"),
    ),
    (
        "memory_channel_long.j2",
        include_str!("../../templates/memory_channel_long.j2"),
    ),
    (
        "memory_workspace_short.j2",
        include_str!("../../templates/memory_workspace_short.j2"),
    ),
    (
        "memory_workspace_long.j2",
        include_str!("../../templates/memory_workspace_long.j2"),
    ),
];

/// A template failed to render (a bug in a template, never bad input).
#[derive(Debug, thiserror::Error)]
#[error("prompt template {template}: {detail}")]
pub struct PromptError {
    pub template: &'static str,
    pub detail: String,
}

fn environment() -> Result<&'static Environment<'static>, PromptError> {
    static ENV: OnceLock<Result<Environment<'static>, PromptError>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        for (name, source) in TEMPLATES {
            env.add_template(name, source).map_err(|e| PromptError {
                template: name,
                detail: format!("{e:#}"),
            })?;
        }
        Ok(env)
    })
    .as_ref()
    .map_err(|e| PromptError {
        template: e.template,
        detail: e.detail.clone(),
    })
}

/// Renders `template` with `view`, then collapses runs of blank lines to
/// one so that optional sections never leave gaps.
pub fn render(template: &'static str, view: &impl Serialize) -> Result<String, PromptError> {
    let env = environment()?;
    let text = env
        .get_template(template)
        .and_then(|t| t.render(view))
        .map_err(|e| PromptError {
            template,
            detail: format!("{e:#}"),
        })?;
    Ok(collapse_blank_lines(&text))
}

fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
            out.push('\n');
        } else {
            blank_run = 0;
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// A message as prompts show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MessageView {
    pub time: String,
    pub user: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PersonaView {
    pub name: String,
    pub system_prompt: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChannelMemoryView {
    pub name: String,
    pub long_term: Option<String>,
    pub short_term: Option<String>,
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
}

/// How times are shown: `2024-03-01 10:00:00` in the configured zone.
pub fn format_time(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// The current time with its zone's abbreviation: `2024-03-01 12:00:00 UTC`.
pub fn format_now(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz)
        .format("%Y-%m-%d %H:%M:%S %Z")
        .to_string()
}

impl ContextView {
    /// Builds the view. `message_limit` bounds the target conversation.
    pub fn new(context: &Context, now: DateTime<Utc>, tz: Tz, message_limit: usize) -> ContextView {
        let name_of = |id: &str| {
            context
                .user_names()
                .iter()
                .find(|(k, _)| k.as_str() == id)
                .map(|(_, v)| v.clone())
        };
        let view = |m: &Message| MessageView {
            time: format_time(m.ts.to_datetime(), tz),
            user: context.user_name(&m.user).to_owned(),
            text: render_slack_text(&m.text, name_of),
        };
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
        }
    }
}

/// The judgment prompt (design extra05b): everything in one system message.
pub fn judgment_prompt(view: &ContextView) -> Result<String, PromptError> {
    render("judgment_system.j2", view)
}

/// The response prompt (design 08).
pub fn response_prompt(view: &ContextView) -> Result<String, PromptError> {
    render("response_system.j2", view)
}

#[cfg(test)]
mod tests;
