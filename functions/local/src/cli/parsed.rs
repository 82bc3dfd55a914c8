//! What each command is given once the line is parsed: its own module so
//! that the commands' runners can name them without leaning on the parser.

use std::net::SocketAddr;
use std::path::PathBuf;

use chrono::Duration;
use myao_domain::{ChannelId, TeamId, UserId};

use crate::eval::html::HtmlOptions;
use crate::export::Filter;
use crate::replay::React;

/// `myao replay`'s arguments, and `myao eval`'s (no `prompts_dir`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayArgs {
    pub export: PathBuf,
    pub config: Option<PathBuf>,
    pub json: bool,
    pub bot_user_id: Option<UserId>,
    pub bot_name: Option<String>,
    /// `--channel`, `--from` and `--to`; the time zone is the settings'.
    pub filter: Filter,
    pub llm_base_url: Option<String>,
    pub prompts_dir: Option<PathBuf>,
    pub memory_interval: Option<Duration>,
    pub seed: u64,
    /// `--react EMOJI --react-to N`.
    pub react: Option<React>,
    /// `eval --html`: where to write the report page, and what it may show.
    pub html: Option<PathBuf>,
    pub html_options: HtmlOptions,
    /// `replay --also`: more workspaces' exports, each a team of its own.
    pub also: Vec<PathBuf>,
}

/// `myao serve`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeArgs {
    pub config: Option<PathBuf>,
    /// Where HTTP serve listens (not used with `socket_mode`).
    pub addr: SocketAddr,
    /// `--socket-mode`: events over Slack's Socket Mode instead of HTTP.
    pub socket_mode: bool,
    /// `--debug-reconnects`: Slack's short-lived connections (Socket Mode).
    pub debug_reconnects: bool,
}

/// Where `myao doctor` and `myao redrive` learn the stack's names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackArgs {
    /// `--stack`: the stack's description (`-`: standard input).
    pub description: Option<PathBuf>,
    /// `--set`, `--stage` and `--settings-path`, by output or parameter
    /// key, in the order given (a later one wins).
    pub names: Vec<(String, String)>,
}

/// `myao redrive`'s arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedriveArgs {
    pub stack: StackArgs,
    pub dry_run: bool,
}

/// What `myao settings` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsAction {
    List,
    Get(String),
    Set(String, String),
    Unset(String),
}

/// `myao feedback`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackArgs {
    pub stack: StackArgs,
    /// `reset` (else list).
    pub reset: bool,
    pub channels: Vec<ChannelId>,
    pub json: bool,
}

/// `myao settings`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsArgs {
    pub action: SettingsAction,
    /// The stack's names; none: the local mode's settings.
    pub stack: StackArgs,
    pub config: Option<PathBuf>,
    /// One installed workspace's own settings, over the stack's.
    pub team: Option<TeamId>,
}
