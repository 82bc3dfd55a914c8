//! What ingest did with an event, and why it left one alone.

use std::fmt;

use myao_domain::routing::Route;
use myao_slack::event::{EventParseError, Unhandled};

/// What ingest did with an event (for logs, tests and the replay).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Challenge,
    Stored {
        routed: Route,
    },
    Duplicate,
    Edited,
    Deleted,
    VisibilityChanged,
    /// A reaction on the bot's post that is a hint: its label stored
    /// (`added`, and `new` when not stored already) or removed.
    Hinted {
        added: bool,
        new: bool,
    },
    /// The app was uninstalled from the event's team: its installation
    /// removed.
    Uninstalled,
    Ignored(IgnoreReason),
    /// Signed, but not what Slack sends (a time far ahead or long before
    /// now): answered 400, nothing stored.
    Refused(EventParseError),
    /// Slack's `app_rate_limited`: it holds this app's events back.
    RateLimited,
}

impl Outcome {
    /// The event's kind, as the `EventsIngested` metric names it (a
    /// stranger's event, of a team with no installation: `not_installed`).
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Challenge => "challenge",
            Outcome::Stored { .. } => "message",
            Outcome::Duplicate => "duplicate",
            Outcome::Edited => "edited",
            Outcome::Deleted => "deleted",
            Outcome::VisibilityChanged => "visibility",
            Outcome::Hinted { .. } => "hint",
            Outcome::Uninstalled => "uninstall",
            // A stranger's: counted apart, for the operator to see.
            Outcome::Ignored(IgnoreReason::NotInstalled | IgnoreReason::AnotherTeam) => {
                "not_installed"
            }
            Outcome::Ignored(_) => "ignored",
            Outcome::Refused(_) => "malformed",
            Outcome::RateLimited => "app_rate_limited",
        }
    }
}

/// Why ingest acknowledged an event and did nothing with it.
#[derive(Clone, PartialEq, Eq)]
pub enum IgnoreReason {
    /// Sent to another app than `slack_app_id`.
    AnotherApp,
    /// From another workspace than `slack_team_id`.
    AnotherTeam,
    /// An envelope of a type ingest does not take (Slack's name for it).
    Envelope(String),
    /// An event ingest does not take.
    Unhandled(Unhandled),
    /// A reaction that is neither a positive nor a negative hint
    /// (`positive_reactions`, `negative_reactions`).
    NotAHint,
    /// A reaction on another's message, or the bot's own; a click on
    /// another's.
    NotItsPost,
    /// An interaction other than a click of the feedback buttons (Slack's
    /// type for it).
    Interaction(String),
    /// From a workspace the app is not installed in (a stack with
    /// `slack_client_id`): uninstalled, or never installed.
    NotInstalled,
    /// A click of the feedback buttons while `feedback_buttons` is off.
    FeedbackOff,
}

impl fmt::Display for IgnoreReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IgnoreReason::AnotherApp => f.write_str("event for another app"),
            IgnoreReason::AnotherTeam => f.write_str("event for another team"),
            IgnoreReason::Envelope(kind) => f.write_str(kind),
            IgnoreReason::Unhandled(unhandled) => unhandled.fmt(f),
            IgnoreReason::NotAHint => f.write_str("a reaction that is no hint"),
            IgnoreReason::NotItsPost => f.write_str("a hint not on the bot's post"),
            IgnoreReason::Interaction(kind) => write!(f, "interaction {kind}"),
            IgnoreReason::NotInstalled => {
                f.write_str("event of a team the app is not installed in")
            }
            IgnoreReason::FeedbackOff => f.write_str("a click while feedback_buttons is off"),
        }
    }
}

/// The text, quoted: the `event handled` line logs the outcome with
/// `Debug`, and has always shown an ignored one as `Ignored("...")`.
impl fmt::Debug for IgnoreReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}
