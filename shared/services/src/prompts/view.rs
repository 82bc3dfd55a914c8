//! A message and the persona as every prompt shows them, and how times are
//! written: shared by the context prompts and the memory ones.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use myao_domain::text::render_slack_text;
use myao_domain::{Message, UserId};

/// A message as prompts show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MessageView {
    pub time: String,
    pub user: String,
    pub text: String,
    /// The emoji the bot reacted to it with, if it did.
    pub reaction: Option<String>,
}

impl MessageView {
    /// `message` at its time in `tz`, its author and the people it
    /// mentions shown by their `names` (else by their id).
    pub fn new(message: &Message, names: &BTreeMap<UserId, String>, tz: Tz) -> MessageView {
        let name_of = |id: &str| {
            names
                .iter()
                .find(|(k, _)| k.as_str() == id)
                .map(|(_, v)| v.clone())
        };
        MessageView {
            time: format_time(message.ts.to_datetime(), tz),
            user: names
                .get(&message.user)
                .cloned()
                .unwrap_or_else(|| message.user.to_string()),
            text: render_slack_text(&message.text, name_of),
            reaction: message.bot_reaction.as_ref().map(ToString::to_string),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PersonaView {
    pub name: String,
    pub system_prompt: String,
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
