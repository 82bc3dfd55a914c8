//! The command line's definitions: clap makes the parser, the help (from
//! these doc comments, with [`super::help`]'s examples after the options)
//! and the shells' completions from them.

use std::net::SocketAddr;
use std::path::PathBuf;

use chrono::NaiveDate;
use clap::{Args, Parser, Subcommand, ValueEnum};
use myao_domain::{ChannelId, EmojiName, TeamId, UserId};

use super::help;
use super::values::{self, Interval};
use crate::serve::DEFAULT_ADDR;

/// myao on one machine, without AWS; and checks of a deployed stack
#[derive(Debug, Parser)]
#[command(
    name = "myao",
    version,
    // No command is an error naming the commands, exit code 2, rather than
    // the whole help on standard error.
    subcommand_required = true,
    arg_required_else_help = false,
    args_override_self = true,
    after_help = help::MYAO
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Sub,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Replays a Slack export through the bot on a virtual clock
    ///
    /// Feeds a Slack workspace export (a folder or its .zip) through the bot's
    /// ingest, judgment, response and memory code on a virtual clock, and prints
    /// the timeline and a summary. With no LLM configured it is a dry run: each
    /// judgment's prompt is shown and no reply is invented.
    #[command(verbatim_doc_comment, after_help = help::REPLAY)]
    Replay(Replay),
    /// Replays a Slack export at each chattiness level, and compares them
    ///
    /// Replays the export once per chattiness level (mentions_only, quiet, normal,
    /// chatty) and reports, per channel and in total, the levels side by side:
    /// questions people left unanswered that the bot joined, two-person exchanges
    /// it intruded on, the precision of its unprompted posts, its unprompted posts
    /// per channel-hour, and its LLM judgment calls against one per quiet period.
    /// With no LLM configured the rule stage decides alone (offline).
    #[command(verbatim_doc_comment, after_help = help::EVAL)]
    Eval(Eval),
    /// Runs the bot for a real workspace, without AWS
    ///
    /// Runs the bot for a real workspace: Slack's Events API at /slack/events
    /// (signatures checked), the jobs on an in-process board, the Slack Web API
    /// and the LLM from the settings. Ctrl-C stops it.
    #[command(verbatim_doc_comment, after_help = help::SERVE)]
    Serve(Serve),
    /// Checks a deployed stack, one line per check
    ///
    /// Checks a deployed stack with your AWS credentials (AWS_REGION, AWS_PROFILE,
    /// ...): every setting exists and parses; the secret parameters exist; the bot
    /// token works and has the manifest's scopes; the Function URL answers a
    /// signed url_verification; each model answers a one-token request; the
    /// table and schedule group exist; the failure queues are empty. One line per
    /// check, with the fix of each failure; exit code 1 if any failed.
    #[command(verbatim_doc_comment, after_help = help::DOCTOR)]
    Doctor(Doctor),
    /// Sends a deployed stack's failed jobs back to their queue
    ///
    /// Sends the jobs kept in the failure and dead-letter queues back to the
    /// queue their function reads (response or memory), deleting each only once
    /// it is sent; judgment jobs and what is not a job stay. Lists message ids
    /// and job kinds, never a message's contents.
    #[command(verbatim_doc_comment, after_help = help::REDRIVE)]
    Redrive(Redrive),
    /// Lists the hints people gave on the bot's posts, or takes a channel's back
    ///
    /// Per channel of a deployed stack: the tuning its hints come to (the
    /// offset on its thresholds, a mute), then each post with hints, newest
    /// first, with what the judge knew when it decided it (outcome, score,
    /// thresholds, level, signals) and who gave which hint how. No word of a
    /// message is read. `reset` takes back every hint of the --channel given:
    /// it speaks at its set level again, and a mute is over.
    #[command(verbatim_doc_comment, after_help = help::FEEDBACK)]
    Feedback(Feedback),
    /// Shows the settings, or changes a deployed stack's
    ///
    /// Every setting, its value and where it comes from; and a deployed stack's
    /// settings changed or reset. A value is parsed by the parser the functions
    /// use, and refused with its message before anything is written. The
    /// functions read a change within a minute; no deploy is needed.
    #[command(verbatim_doc_comment, after_help = help::SETTINGS)]
    Settings(Settings),
    /// Prints the completion script of a shell for myao
    ///
    /// Prints the completion script of a shell for myao on standard output:
    /// write it where the shell looks for completions.
    #[command(verbatim_doc_comment, after_help = help::COMPLETIONS)]
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The same as --version
    #[command(hide = true)]
    Version,
}

/// The arguments of replay and eval alike.
#[derive(Debug, Args)]
pub struct Common {
    /// A Slack workspace export: a folder, or its .zip
    #[arg(value_name = "slack-export")]
    pub export: PathBuf,
    /// Settings: a TOML file of `name = value` (the SSM names)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// JSON instead of text (replay: one object per line; eval: one object)
    #[arg(long)]
    pub json: bool,
    /// The bot's user id [default: bot_user_id, else UMYAO]
    #[arg(long, value_name = "ID", value_parser = UserId::parse)]
    pub bot_user_id: Option<UserId>,
    /// The bot's name (persona_name)
    #[arg(long, value_name = "NAME")]
    pub bot_name: Option<String>,
    /// Only this channel (a name or an id); repeat for more
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Vec<String>,
    /// The first day to replay (in the settings' time zone)
    // A date before year 0 is refused as out of range, not read as a flag.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = values::date, allow_hyphen_values = true)]
    pub from: Option<NaiveDate>,
    /// The last day to replay (inclusive)
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = values::date, allow_hyphen_values = true)]
    pub to: Option<NaiveDate>,
    /// An OpenAI-compatible endpoint (else llm_base_url)
    #[arg(long, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// Virtual time between memory sweeps: 30m, 1h, 2h, ... from 1m to 30d; off for none
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = values::memory_interval)]
    pub memory_interval: Interval,
    /// The jitter's random seed
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Members react with EMOJI to the bot's first unprompted posts in each channel
    ///
    /// Another member on each post, as a person's hints count once. As soon
    /// as each is posted, through ingest as Slack's reaction_added would
    /// come: with a hint's emoji (-1, +1, ...) it shows what the hints
    /// change. How many posts: --react-to.
    #[arg(long, value_name = "EMOJI", value_parser = values::emoji, allow_hyphen_values = true, verbatim_doc_comment)]
    pub react: Option<EmojiName>,
    /// With --react: how many posts per channel
    #[arg(long, value_name = "N", default_value_t = 3, requires = "react")]
    pub react_to: usize,
}

/// `myao replay`.
#[derive(Debug, Args)]
pub struct Replay {
    #[command(flatten)]
    pub common: Common,
    /// Write every prompt there as NNN-<role>.txt
    #[arg(long, value_name = "DIR")]
    pub prompts_dir: Option<PathBuf>,
    /// Another workspace's export, replayed beside the first in one stack installed in each; repeat for more
    ///
    /// Each export is a workspace of its own (T00000001, T00000002, ... in
    /// the order given), kept apart from the others as on a deployed stack;
    /// the summary counts each one's prompts, and those holding another's
    /// marker words (MARK-...).
    #[arg(long, value_name = "slack-export", verbatim_doc_comment)]
    pub also: Vec<PathBuf>,
}

/// `myao eval`.
#[derive(Debug, Args)]
pub struct Eval {
    #[command(flatten)]
    pub common: Common,
    /// Also write the report as one page to look at
    ///
    /// The figures per level as charts, and per channel a timeline of where
    /// the bot would have spoken, each case a click away (self-contained: no
    /// network).
    #[arg(long, value_name = "FILE", verbatim_doc_comment)]
    pub html: Option<PathBuf>,
    /// On the page, private channels and DMs too (left out by default: the page is a file that gets shared)
    #[arg(long, requires = "html")]
    pub include_private: bool,
    /// On the page, messages in full (cut to 40 characters by default)
    #[arg(long, requires = "html")]
    pub full_text: bool,
}

/// `myao serve`.
#[derive(Debug, Args)]
pub struct Serve {
    /// Settings, as for replay
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where to listen: this machine only by default, for a tunnel; 0.0.0.0:3000 behind a TLS proxy
    #[arg(long, value_name = "HOST:PORT", default_value = DEFAULT_ADDR, value_parser = values::addr)]
    pub addr: SocketAddr,
    /// Take Slack's events over Socket Mode instead
    ///
    /// A WebSocket myao opens with the app-level token (MYAO_SLACK_APP_TOKEN:
    /// xapp-..., connections:write); no public URL, no signing secret. Not
    /// with --addr: nothing listens.
    // Refused with --addr rather than ignored: whoever gave an address
    // expects Slack to post there, and Socket Mode takes the app's events
    // off its Request URL.
    #[arg(long, conflicts_with = "addr", verbatim_doc_comment)]
    pub socket_mode: bool,
    /// With --socket-mode: ask Slack for short-lived connections, to see the reconnects
    #[arg(long, requires = "socket_mode")]
    pub debug_reconnects: bool,
}

/// Where doctor, redrive and settings learn the stack's names.
#[derive(Debug, Args)]
pub struct Stack {
    /// The stack's description (- reads it from standard input)
    ///
    /// The JSON of `aws cloudformation describe-stacks --stack-name NAME`
    /// or `sam list stack-outputs --stack-name NAME --output json`.
    #[arg(long, value_name = "FILE", verbatim_doc_comment)]
    pub stack: Option<PathBuf>,
    /// The settings' path, e.g. /myao/prod/ (SettingsPath)
    #[arg(long, value_name = "PATH", value_parser = values::settings_path)]
    pub settings_path: Vec<(String, String)>,
    /// The same as --settings-path /myao/<NAME>/
    #[arg(long, value_name = "NAME", value_parser = values::stage)]
    pub stage: Vec<(String, String)>,
    /// A stack output or parameter, over the file's; repeat for more
    ///
    /// E.g. --set TableName=... or --set SlackBotTokenParameter=... (secrets
    /// default to <settings path>secrets/<name>).
    #[arg(long, value_name = "KEY=VALUE", value_parser = values::key_value, verbatim_doc_comment)]
    pub set: Vec<(String, String)>,
}

/// `myao doctor`.
#[derive(Debug, Args)]
pub struct Doctor {
    #[command(flatten)]
    pub stack: Stack,
}

/// `myao redrive`.
#[derive(Debug, Args)]
pub struct Redrive {
    #[command(flatten)]
    pub stack: Stack,
    /// List what would be moved, and move nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// `myao feedback`.
#[derive(Debug, Args)]
pub struct Feedback {
    /// What to do [default: list]
    #[arg(value_enum, value_name = "ACTION")]
    pub action: Option<FeedbackAction>,
    #[command(flatten)]
    pub stack: Stack,
    /// Only this channel's (an id); repeat for more. reset needs one
    #[arg(long, value_name = "ID", value_parser = ChannelId::parse)]
    pub channel: Vec<ChannelId>,
    /// JSON instead of text: one object per channel, in an array
    #[arg(long)]
    pub json: bool,
}

/// What `myao feedback` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FeedbackAction {
    /// The hints per channel, with the judge's grounds and the tuning
    List,
    /// Take back every hint of the --channel given
    Reset,
}

/// `myao settings`.
#[derive(Debug, Args)]
pub struct Settings {
    /// What to do [default: list]
    #[arg(value_enum, value_name = "ACTION")]
    pub action: Option<Action>,
    /// The setting's name (get, set, unset)
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// The value to write (set); it may start with - (like -10,40)
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    pub value: Option<String>,
    #[command(flatten)]
    pub stack: Stack,
    /// Without a stack: the local mode's settings file
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// One installed workspace's own settings (T...): its value of NAME over the stack's; needs the stack
    #[arg(long, value_name = "TEAM", value_parser = TeamId::parse)]
    pub team: Option<TeamId>,
}

/// What `myao settings` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Action {
    /// Every setting: name, value, source (default, SSM, file or environment), and why a value is not used
    List,
    /// The value in effect of NAME
    Get,
    /// Write VALUE to the stack's parameter NAME (a String, over the old value); needs the stack
    Set,
    /// NAME back to the default; needs the stack
    Unset,
}
