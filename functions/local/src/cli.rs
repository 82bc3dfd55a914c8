//! The command line: `myao replay <export>`, `myao eval <export>`,
//! `myao serve`, and for a deployed stack `myao doctor` and `myao redrive`,
//! parsed by hand.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use chrono::{Datelike as _, Duration, NaiveDate};
use myao::adapters::openai::OpenAiLlm;
use myao::adapters::system::FixedSettings;
use myao::domain::rules::Chattiness;
use myao::domain::{IdError, UserId};
use myao::ports::Llm;

use crate::config::{self, ConfigError, LocalConfig, LLM_API_KEY};
use crate::eval::html::HtmlOptions;
use crate::export::{self, Filter};
use crate::replay::{self, Options, DEFAULT_BOT_USER_ID};
use crate::serve::{self, DEFAULT_ADDR};
use crate::stack::{Stack, SETTINGS_PATH};
use crate::timeline::{JsonSink, Sink, TextSink};
use crate::{doctor, eval, redrive, socket};

/// The start of `myao --help`: what it is and the commands.
const HELP_HEAD: &str = "\
myao on one machine, without AWS; and checks of a deployed stack

USAGE:
    myao replay <slack-export> [OPTIONS]
    myao eval <slack-export> [OPTIONS]
    myao serve [OPTIONS]
    myao serve --socket-mode [OPTIONS]
    myao doctor --stack <file> [OPTIONS]
    myao redrive --stack <file> [--dry-run] [OPTIONS]
    myao settings [list | get NAME | set NAME VALUE | unset NAME] [OPTIONS]
    myao help | --help | <command> --help
    myao --version

";

/// `myao replay --help`.
const HELP_REPLAY: &str = "\
myao replay <slack-export>
    Feeds a Slack workspace export (a folder or its .zip) through the bot's
    ingest, judgment, response and memory code on a virtual clock, and prints
    the timeline and a summary. With no LLM configured it is a dry run: each
    judgment's prompt is shown and no reply is invented.

    --config <file>         settings: a TOML file of `name = value` (the SSM names)
    --json                  one JSON object per line instead of text
    --bot-user-id <id>      the bot's user id (default: bot_user_id, else UMYAO)
    --bot-name <name>       the bot's name (persona_name)
    --channel <name|id>     only this channel; repeat for more
    --from <YYYY-MM-DD>     the first day to replay (in the settings' time zone)
    --to <YYYY-MM-DD>       the last day to replay (inclusive)
    --llm-base-url <url>    an OpenAI-compatible endpoint (else llm_base_url)
    --prompts-dir <dir>     write every prompt there as NNN-<role>.txt
    --memory-interval <d>   virtual time between memory sweeps: 30m, 1h (default),
                            2h, ... from 1m to 30d; off for none
    --seed <n>              the jitter's random seed (default 0)

    Examples:
        myao replay functions/local/examples/export
        myao replay export.zip --channel general --from 2026-01-05 --json
        MYAO_LLM_BASE_URL=http://localhost:11434/v1 myao replay export.zip

";

/// `myao eval --help`.
const HELP_EVAL: &str = "\
myao eval <slack-export>
    Replays the export once per chattiness level (mentions_only, quiet, normal,
    chatty) and reports, per channel and in total, the levels side by side:
    questions people left unanswered that the bot joined, two-person exchanges
    it intruded on, the precision of its unprompted posts, its unprompted posts
    per channel-hour, and its LLM judgment calls against one per quiet period.
    With no LLM configured the rule stage decides alone (offline).

    Options as for replay, but --prompts-dir; --json prints one JSON object.

    --html <file>           also write the report as one page to look at: the
                            figures per level as charts, and per channel a
                            timeline of where the bot would have spoken, each
                            case a click away (self-contained: no network)
    --include-private       on the page, private channels and DMs too (left
                            out by default: the page is a file that gets shared)
    --full-text             on the page, messages in full (cut to 40 characters
                            by default)

    Examples:
        myao eval functions/local/examples/export
        myao eval export.zip --json > eval.json
        myao eval export.zip --html report.html

";

/// `myao serve --help`.
const HELP_SERVE: &str = "\
myao serve
    Runs the bot for a real workspace: Slack's Events API at /slack/events
    (signatures checked), the jobs on an in-process board, the Slack Web API
    and the LLM from the settings. Ctrl-C stops it.

    --config <file>         settings, as for replay
    --addr <host:port>      where to listen (default 127.0.0.1:3000: this machine
                            only, for a tunnel; 0.0.0.0:3000 behind a TLS proxy)
    --socket-mode           take Slack's events over Socket Mode instead: a
                            WebSocket myao opens with the app-level token
                            (MYAO_SLACK_APP_TOKEN: xapp-..., connections:write);
                            no public URL, no signing secret; not with --addr
    --debug-reconnects      with --socket-mode: ask Slack for short-lived
                            connections, to see the reconnects

    Examples:
        MYAO_SLACK_SIGNING_SECRET=... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve
        MYAO_SLACK_APP_TOKEN=xapp-... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve --socket-mode

";

/// `myao doctor --help`.
const HELP_DOCTOR: &str = "\
myao doctor
    Checks a deployed stack with your AWS credentials (AWS_REGION, AWS_PROFILE,
    ...): every setting exists and parses; the secret parameters exist; the bot
    token works and has the manifest's scopes; the Function URL answers a
    signed url_verification; each model answers a one-token request; the
    table and schedule group exist; the failure queues are empty. One line per
    check, with the fix of each failure; exit code 1 if any failed.

    --stack <file>          the stack's description: the JSON of
                            `aws cloudformation describe-stacks --stack-name NAME`
                            or `sam list stack-outputs --stack-name NAME --output json`
                            (- reads it from standard input)
    --settings-path <path>  the settings' path, e.g. /myao/prod/ (SettingsPath)
    --set <KEY>=<value>     a stack output or parameter, over the file's, e.g.
                            --set TableName=... or --set SlackBotTokenParameter=...
                            (secrets default to <settings path>secrets/<name>)

    Examples:
        aws cloudformation describe-stacks --stack-name myao > stack.json
        myao doctor --stack stack.json
        sam list stack-outputs --stack-name myao --output json | myao doctor --stack -

";

/// `myao redrive --help`.
const HELP_REDRIVE: &str = "\
myao redrive
    Sends the jobs kept in the failure and dead-letter queues back to the
    queue their function reads (response or memory), deleting each only once
    it is sent; judgment jobs and what is not a job stay. Lists message ids
    and job kinds, never a message's contents.

    --stack <file>, --set <KEY>=<value>   as for doctor
    --dry-run               list what would be moved, and move nothing

    Examples:
        myao redrive --stack stack.json --dry-run
        myao redrive --stack stack.json

";

/// `myao settings --help`.
const HELP_SETTINGS_COMMAND: &str = "\
myao settings
    Every setting, its value and where it comes from; and a deployed stack's
    settings changed or reset. A value is parsed by the parser the functions
    use, and refused with its message before anything is written. The
    functions read a change within a minute; no deploy is needed.

    list                    every setting: name, value, source (default, SSM,
                            file or environment), and why a value is not used
                            (the default for a missing command)
    get NAME                the value in effect
    set NAME VALUE          write VALUE to the stack's parameter (a String,
                            over the old value); needs the stack
    unset NAME              back to the default; needs the stack

    --stack <file>, --set <KEY>=<value>   as for doctor: the stack's settings
    --settings-path <path>  the settings' path, e.g. /myao/prod/
    --stage <name>          the same as --settings-path /myao/<name>/
    --config <file>         without a stack: the local mode's settings file

    Examples:
        myao settings list
        myao settings list --stack stack.json
        myao settings set chattiness quiet --stage prod
        myao settings get chattiness --stage prod
        myao settings unset chattiness --stage prod

";

/// Where settings come from: the end of every help.
const HELP_SETTINGS: &str = "\
SETTINGS
    The names of the SSM parameters (min_wait_seconds, jitter_ratio,
    llm_base_url, persona_name, ...), from --config and from the environment
    as MYAO_<NAME> (MYAO_MIN_WAIT_SECONDS=30), the environment winning.
    Secrets: MYAO_LLM_API_KEY, MYAO_SLACK_SIGNING_SECRET, MYAO_SLACK_BOT_TOKEN,
    MYAO_SLACK_APP_TOKEN (or llm_api_key, slack_signing_secret, slack_bot_token,
    slack_app_token in the file).
    A bad value is reported and its default kept.
";

/// The help of `command` (`None`: of them all): its usage, options and
/// examples, then where settings come from.
pub fn help(command: Option<&str>) -> String {
    let sections: &[&str] = match command {
        Some("replay") => &[HELP_REPLAY],
        Some("eval") => &[HELP_EVAL],
        Some("serve") => &[HELP_SERVE],
        Some("doctor") => &[HELP_DOCTOR],
        Some("redrive") => &[HELP_REDRIVE],
        Some("settings") => &[HELP_SETTINGS_COMMAND],
        _ => &[
            HELP_HEAD,
            HELP_REPLAY,
            HELP_EVAL,
            HELP_SERVE,
            HELP_DOCTOR,
            HELP_REDRIVE,
            HELP_SETTINGS_COMMAND,
        ],
    };
    let mut text: String = sections.concat();
    text.push_str(HELP_SETTINGS);
    text
}

/// What `myao --version` prints.
pub fn version() -> String {
    format!("myao {}\n", env!("CARGO_PKG_VERSION"))
}

/// A command line that makes no sense: exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    #[error("no command given: replay, eval, serve, doctor, redrive or settings")]
    NoCommand,
    #[error("unknown command {0:?}: replay, eval, serve, doctor, redrive or settings")]
    UnknownCommand(String),
    #[error("unknown option {option} for {command}")]
    UnknownOption {
        command: &'static str,
        option: String,
    },
    #[error("unknown argument {0} for serve")]
    UnknownServeArgument(String),
    #[error("unknown argument {arg} for {command}")]
    UnknownArgument { command: &'static str, arg: String },
    #[error("--set wants KEY=VALUE, like --set TableName=myao-Table-X, not {0:?}")]
    NotAKeyValue(String),
    /// The flag, given last or followed by another flag.
    #[error("{0} needs a value")]
    NeedsValue(String),
    /// `--flag=value` for a flag that takes none.
    #[error("{0} takes no value")]
    TakesNoValue(String),
    #[error("{0} needs the path of a Slack export")]
    NoExport(&'static str),
    #[error("{command} takes one export, and {path:?} is a second")]
    SecondExport { command: &'static str, path: String },
    #[error("{flag} wants a date like 2026-01-05, not {value:?}")]
    NotADate { flag: String, value: String },
    #[error("{flag} wants a date from 0001-01-01 to 9999-12-31, not {value:?}")]
    DateOutOfRange { flag: String, value: String },
    #[error("--from {from} is after --to {to}")]
    FromAfterTo { from: NaiveDate, to: NaiveDate },
    #[error("--memory-interval wants a duration like 30m, 1h or off, not {0:?}")]
    NotAnInterval(String),
    #[error("--memory-interval must be from 1m to 30d (or off), not {0:?}")]
    IntervalOutOfRange(String),
    #[error("--bot-user-id: {0}")]
    BotUserId(IdError),
    #[error("--include-private and --full-text are for the page: give --html <file>")]
    PageOptionWithoutHtml,
    #[error("--seed wants a whole number, not {0:?}")]
    NotASeed(String),
    #[error("--addr wants host:port like 127.0.0.1:3000, not {0:?}")]
    NotAnAddress(String),
    #[error("--addr has no use with --socket-mode: nothing listens, myao connects to Slack")]
    AddrWithSocketMode,
    #[error("--debug-reconnects is for --socket-mode")]
    DebugReconnectsWithoutSocketMode,
    #[error("{0} needs the stack: --stack <file> (the JSON of `aws cloudformation describe-stacks --stack-name NAME`, - for standard input), or its outputs with --set KEY=VALUE")]
    NoStack(&'static str),
    #[error("settings {0} changes a deployed stack's settings: give --stack <file>, --stage <name> or --settings-path <path> (locally, edit the --config file or set MYAO_<NAME>)")]
    SettingsNeedStack(&'static str),
    #[error("settings takes list, get NAME, set NAME VALUE or unset NAME, not {0:?}")]
    UnknownSettingsAction(String),
    #[error("settings {action} needs {needs}")]
    SettingsNeeds {
        action: &'static str,
        needs: &'static str,
    },
    #[error("--config is for the local settings; a stack's are in SSM: give one or the other")]
    ConfigWithStack,
    #[error("--stage wants a stage's name like prod (lower-case letters, digits, -), not {0:?}")]
    NotAStage(String),
}

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
    /// `eval --html`: where to write the report page, and what it may show.
    pub html: Option<PathBuf>,
    pub html_options: HtmlOptions,
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
    /// `--set` and `--settings-path`, by output or parameter key, in order.
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

/// `myao settings`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsArgs {
    pub action: SettingsAction,
    /// The stack's names; none: the local mode's settings.
    pub stack: StackArgs,
    pub config: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `--help`: of one command, or (`None`) of them all.
    Help(Option<&'static str>),
    /// `--version`.
    Version,
    Replay(ReplayArgs),
    Eval(ReplayArgs),
    Serve(ServeArgs),
    Doctor(StackArgs),
    Redrive(RedriveArgs),
    Settings(SettingsArgs),
}

/// Splits `--name=value` and takes the value of `--name value`.
struct Args<'a> {
    rest: std::slice::Iter<'a, String>,
    pending: Option<String>,
}

impl<'a> Args<'a> {
    fn new(args: &'a [String]) -> Args<'a> {
        Args {
            rest: args.iter(),
            pending: None,
        }
    }

    /// The next argument; for `--name=value`, `--name` (the value is kept).
    fn next(&mut self) -> Option<String> {
        let arg = self.rest.next()?;
        if arg.starts_with("--") {
            if let Some((name, value)) = arg.split_once('=') {
                self.pending = Some(value.to_owned());
                return Some(name.to_owned());
            }
        }
        Some(arg.clone())
    }

    fn value(&mut self, flag: &str) -> Result<String, UsageError> {
        if let Some(v) = self.pending.take() {
            return Ok(v);
        }
        match self.rest.next() {
            Some(v) if !v.starts_with("--") => Ok(v.clone()),
            _ => Err(UsageError::NeedsValue(flag.to_owned())),
        }
    }

    /// Refuses `--flag=value` for a flag that takes none.
    fn no_value(&mut self, flag: &str) -> Result<(), UsageError> {
        match self.pending.take() {
            Some(_) => Err(UsageError::TakesNoValue(flag.to_owned())),
            None => Ok(()),
        }
    }
}

/// The dates `--from` and `--to` accept: four-digit years. (chrono reads
/// `+262143-12-31` too, where a day more or less no longer exists.)
fn date(flag: &str, value: &str) -> Result<NaiveDate, UsageError> {
    let (flag, value) = (flag.to_owned(), value.to_owned());
    match NaiveDate::parse_from_str(&value, "%Y-%m-%d") {
        Ok(date) if (1..=9999).contains(&date.year()) => Ok(date),
        Ok(_) => Err(UsageError::DateOutOfRange { flag, value }),
        Err(_) => Err(UsageError::NotADate { flag, value }),
    }
}

/// The shortest `--memory-interval`: one minute of virtual time.
pub const MIN_MEMORY_INTERVAL_SECONDS: i64 = 60;
/// The longest `--memory-interval`: thirty days.
pub const MAX_MEMORY_INTERVAL_SECONDS: i64 = 30 * 86_400;

/// `90s`, `30m`, `1h`, `2d` (a bare number is seconds), from one minute to
/// thirty days; `0` and `off` are `None`.
pub fn interval(value: &str) -> Result<Option<Duration>, UsageError> {
    let v = value.trim();
    if v == "off" || v == "0" {
        return Ok(None);
    }
    let bad = || UsageError::NotAnInterval(value.to_owned());
    let out_of_range = || UsageError::IntervalOutOfRange(value.to_owned());
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(split);
    let unit_seconds: i64 = match unit {
        "" | "s" => 1,
        "m" | "min" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    if digits.is_empty() {
        return Err(bad());
    }
    // All digits: a number that does not parse is too large for an i64.
    let n: i64 = digits.parse().map_err(|_| out_of_range())?;
    let seconds = n.checked_mul(unit_seconds).ok_or_else(out_of_range)?;
    if seconds == 0 {
        return Ok(None);
    }
    if !(MIN_MEMORY_INTERVAL_SECONDS..=MAX_MEMORY_INTERVAL_SECONDS).contains(&seconds) {
        return Err(out_of_range());
    }
    Duration::try_seconds(seconds)
        .map(Some)
        .ok_or_else(out_of_range)
}

/// The commands, as their help names them.
const COMMANDS: [&str; 6] = ["replay", "eval", "serve", "doctor", "redrive", "settings"];

/// Parses the arguments after the program's name.
pub fn parse(args: &[String]) -> Result<Command, UsageError> {
    let mut args = Args::new(args);
    let command = match args.next() {
        None => return Err(UsageError::NoCommand),
        Some(c) => c,
    };
    match command.as_str() {
        "help" | "--help" | "-h" => Ok(Command::Help(
            args.next()
                .and_then(|c| COMMANDS.iter().find(|k| **k == c).copied()),
        )),
        "--version" | "-V" | "version" => Ok(Command::Version),
        "replay" => parse_replay(args, "replay", Command::Replay),
        "eval" => parse_replay(args, "eval", Command::Eval),
        "serve" => parse_serve(args),
        "doctor" => parse_stack(args, "doctor"),
        "redrive" => parse_stack(args, "redrive"),
        "settings" => parse_settings(args),
        other => Err(UsageError::UnknownCommand(other.to_owned())),
    }
}

/// The arguments of `command`: `replay`, or `eval` (which writes no
/// prompts), made into a command by `make`.
fn parse_replay(
    mut args: Args<'_>,
    command: &'static str,
    make: fn(ReplayArgs) -> Command,
) -> Result<Command, UsageError> {
    let mut export = None;
    let mut r = ReplayArgs {
        export: PathBuf::new(),
        config: None,
        json: false,
        bot_user_id: None,
        bot_name: None,
        filter: Filter::default(),
        llm_base_url: None,
        prompts_dir: None,
        memory_interval: Some(Duration::hours(1)),
        seed: 0,
        html: None,
        html_options: HtmlOptions::default(),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help(Some(command))),
            "--config" => r.config = Some(args.value(&arg)?.into()),
            "--json" => {
                args.no_value(&arg)?;
                r.json = true;
            }
            "--bot-user-id" => {
                let v = args.value(&arg)?;
                r.bot_user_id = Some(UserId::parse(&v).map_err(UsageError::BotUserId)?);
            }
            "--bot-name" => r.bot_name = Some(args.value(&arg)?),
            "--channel" => r.filter.channels.push(args.value(&arg)?),
            "--from" => r.filter.from = Some(date(&arg, &args.value(&arg)?)?),
            "--to" => r.filter.to = Some(date(&arg, &args.value(&arg)?)?),
            "--llm-base-url" => r.llm_base_url = Some(args.value(&arg)?),
            "--prompts-dir" if command == "replay" => {
                r.prompts_dir = Some(args.value(&arg)?.into())
            }
            "--memory-interval" => r.memory_interval = interval(&args.value(&arg)?)?,
            "--html" if command == "eval" => r.html = Some(args.value(&arg)?.into()),
            "--include-private" if command == "eval" => {
                args.no_value(&arg)?;
                r.html_options.include_private = true;
            }
            "--full-text" if command == "eval" => {
                args.no_value(&arg)?;
                r.html_options.full_text = true;
            }
            "--seed" => {
                let v = args.value(&arg)?;
                r.seed = v.parse().map_err(|_| UsageError::NotASeed(v))?;
            }
            flag if flag.starts_with('-') => {
                return Err(UsageError::UnknownOption {
                    command,
                    option: flag.to_owned(),
                })
            }
            path => {
                if export.is_some() {
                    return Err(UsageError::SecondExport {
                        command,
                        path: path.to_owned(),
                    });
                }
                export = Some(PathBuf::from(path));
            }
        }
    }
    r.export = export.ok_or(UsageError::NoExport(command))?;
    if r.html.is_none() && r.html_options != HtmlOptions::default() {
        return Err(UsageError::PageOptionWithoutHtml);
    }
    if let (Some(from), Some(to)) = (r.filter.from, r.filter.to) {
        if from > to {
            return Err(UsageError::FromAfterTo { from, to });
        }
    }
    Ok(make(r))
}

fn parse_serve(mut args: Args<'_>) -> Result<Command, UsageError> {
    let mut s = ServeArgs {
        config: None,
        addr: DEFAULT_ADDR
            .parse()
            .unwrap_or_else(|_| unreachable!("a valid address")),
        socket_mode: false,
        debug_reconnects: false,
    };
    let mut addr_given = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help(Some("serve"))),
            "--config" => s.config = Some(args.value(&arg)?.into()),
            "--addr" => {
                let v = args.value(&arg)?;
                s.addr = v.parse().map_err(|_| UsageError::NotAnAddress(v))?;
                addr_given = true;
            }
            "--socket-mode" => {
                args.no_value(&arg)?;
                s.socket_mode = true;
            }
            "--debug-reconnects" => {
                args.no_value(&arg)?;
                s.debug_reconnects = true;
            }
            other => return Err(UsageError::UnknownServeArgument(other.to_owned())),
        }
    }
    // Refused rather than ignored: whoever gave an address expects Slack to
    // post there, and Socket Mode takes the app's events off its Request URL.
    if s.socket_mode && addr_given {
        return Err(UsageError::AddrWithSocketMode);
    }
    if s.debug_reconnects && !s.socket_mode {
        return Err(UsageError::DebugReconnectsWithoutSocketMode);
    }
    Ok(Command::Serve(s))
}

/// A flag that names the stack (`--stack`, `--settings-path`, `--stage`,
/// `--set`), taken into `stack`.
fn stack_flag(flag: &str, args: &mut Args<'_>, stack: &mut StackArgs) -> Result<(), UsageError> {
    let value = args.value(flag)?;
    match flag {
        "--stack" => stack.description = Some(value.into()),
        "--settings-path" => stack.names.push((SETTINGS_PATH.to_owned(), value)),
        "--stage" => {
            // The template's pattern: ^[a-z0-9][a-z0-9-]{0,19}$.
            let name_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if value.is_empty()
                || value.len() > 20
                || value.starts_with('-')
                || !value.chars().all(name_char)
            {
                return Err(UsageError::NotAStage(value));
            }
            stack
                .names
                .push((SETTINGS_PATH.to_owned(), format!("/myao/{value}/")));
        }
        _ => match value.split_once('=') {
            Some((key, v)) if !key.trim().is_empty() => {
                stack.names.push((key.trim().to_owned(), v.to_owned()))
            }
            _ => return Err(UsageError::NotAKeyValue(value)),
        },
    }
    Ok(())
}

/// The arguments of `settings`: an action and its names and value, then
/// where the settings are.
fn parse_settings(mut args: Args<'_>) -> Result<Command, UsageError> {
    let mut words = Vec::new();
    let mut stack = StackArgs::default();
    let mut config = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help(Some("settings"))),
            "--stack" | "--settings-path" | "--stage" | "--set" => {
                stack_flag(&arg, &mut args, &mut stack)?
            }
            "--config" => config = Some(args.value(&arg)?.into()),
            flag if flag.starts_with("--") => {
                return Err(UsageError::UnknownOption {
                    command: "settings",
                    option: flag.to_owned(),
                })
            }
            _ => words.push(arg),
        }
    }
    let mut words = words.into_iter();
    let action = words.next();
    let mut take = |action: &'static str, needs: &'static str| {
        words
            .next()
            .ok_or(UsageError::SettingsNeeds { action, needs })
    };
    let action = match action.as_deref() {
        None | Some("list") => SettingsAction::List,
        Some("get") => SettingsAction::Get(take("get", "a setting's NAME")?),
        Some("set") => SettingsAction::Set(
            take("set", "a setting's NAME and a VALUE")?,
            take("set", "a VALUE after the NAME")?,
        ),
        Some("unset") => SettingsAction::Unset(take("unset", "a setting's NAME")?),
        Some(other) => return Err(UsageError::UnknownSettingsAction(other.to_owned())),
    };
    if let Some(extra) = words.next() {
        return Err(UsageError::UnknownArgument {
            command: "settings",
            arg: extra,
        });
    }
    let has_stack = stack.description.is_some() || !stack.names.is_empty();
    if has_stack && config.is_some() {
        return Err(UsageError::ConfigWithStack);
    }
    match &action {
        SettingsAction::Set(..) if !has_stack => return Err(UsageError::SettingsNeedStack("set")),
        SettingsAction::Unset(_) if !has_stack => {
            return Err(UsageError::SettingsNeedStack("unset"))
        }
        _ => {}
    }
    Ok(Command::Settings(SettingsArgs {
        action,
        stack,
        config,
    }))
}

/// The arguments of `doctor` or `redrive` (which alone takes `--dry-run`).
fn parse_stack(mut args: Args<'_>, command: &'static str) -> Result<Command, UsageError> {
    let mut r = RedriveArgs::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help(Some(command))),
            "--stack" | "--settings-path" | "--stage" | "--set" => {
                stack_flag(&arg, &mut args, &mut r.stack)?
            }
            "--dry-run" if command == "redrive" => {
                args.no_value(&arg)?;
                r.dry_run = true;
            }
            flag if flag.starts_with('-') && flag != "-" => {
                return Err(UsageError::UnknownOption {
                    command,
                    option: flag.to_owned(),
                })
            }
            other => {
                return Err(UsageError::UnknownArgument {
                    command,
                    arg: other.to_owned(),
                })
            }
        }
    }
    // Nothing to check or move without the stack's names: a usage error,
    // not a failure of every check.
    if r.stack.description.is_none() && r.stack.names.is_empty() {
        return Err(UsageError::NoStack(command));
    }
    Ok(match command {
        "doctor" => Command::Doctor(r.stack),
        _ => Command::Redrive(r),
    })
}

/// The process environment, as `(name, value)` pairs.
pub fn environment() -> Vec<(String, String)> {
    std::env::vars().collect()
}

/// Prints the issues of a configuration to stderr.
fn warn_issues(config: &LocalConfig) {
    for issue in &config.issues {
        eprintln!("warning: {issue}");
    }
}

/// The configuration of a replay: `--config`, the environment, and the
/// options that stand for settings (`--bot-name`, `--llm-base-url`,
/// `--bot-user-id`).
pub fn replay_config(
    args: &ReplayArgs,
    env: &[(String, String)],
) -> Result<LocalConfig, ConfigError> {
    let mut overrides = Vec::new();
    if let Some(name) = &args.bot_name {
        overrides.push(("persona_name", "--bot-name", name.clone()));
    }
    if let Some(url) = &args.llm_base_url {
        overrides.push(("llm_base_url", "--llm-base-url", url.clone()));
    }
    if let Some(id) = &args.bot_user_id {
        overrides.push(("bot_user_id", "--bot-user-id", id.to_string()));
    }
    config::load(args.config.as_deref(), env, &overrides)
}

/// What to read of the export and how to replay it. The LLM is the
/// configured endpoint when `llm_base_url` was given, else none (a dry run).
pub fn replay_plan(args: &ReplayArgs, config: &LocalConfig) -> Result<(Filter, Options), IdError> {
    replay_plan_with(args, config, None)
}

/// The same, with `bedrock` answering the roles whose provider is Amazon
/// Bedrock ([`crate::llm::bedrock_if_asked`]): an LLM is then configured
/// even without `llm_base_url` (the roles left on OpenAI stay dry).
pub fn replay_plan_with(
    args: &ReplayArgs,
    config: &LocalConfig,
    bedrock: Option<Arc<dyn Llm>>,
) -> Result<(Filter, Options), IdError> {
    let settings = config.settings.clone();
    let bot_user_id = match &settings.bot_user_id {
        Some(id) => id.clone(),
        None => UserId::parse(DEFAULT_BOT_USER_ID)?,
    };
    let filter = Filter {
        tz: Some(settings.timezone),
        ..args.filter.clone()
    };
    let (llm, llm_label) = if config.llm_base_url_set || bedrock.is_some() {
        let provider = Arc::new(FixedSettings::new(settings.clone()));
        let openai: Arc<dyn Llm> = if config.llm_base_url_set {
            Arc::new(OpenAiLlm::new(
                myao::adapters::tls::http_client(),
                provider.clone(),
                Arc::new(config.secrets.clone()),
                LLM_API_KEY,
            ))
        } else {
            Arc::new(crate::twins::DryRunLlm)
        };
        let mut llm = myao::adapters::llm::LlmRouter::new(provider, openai);
        if let Some(bedrock) = bedrock {
            llm = llm.with_bedrock(bedrock);
        }
        let label = crate::llm::label(&settings);
        (Some(Arc::new(llm) as Arc<dyn Llm>), Some(label))
    } else {
        (None, None)
    };
    let options = Options {
        settings,
        bot_user_id,
        llm,
        llm_label,
        prompts_dir: args.prompts_dir.clone(),
        memory_interval: args.memory_interval,
        seed: args.seed,
    };
    Ok((filter, options))
}

/// [`replay_plan_with`] Bedrock when the settings send a role there.
async fn planned(args: &ReplayArgs, config: &LocalConfig) -> anyhow::Result<(Filter, Options)> {
    let provider = Arc::new(FixedSettings::new(config.settings.clone()));
    let bedrock = crate::llm::bedrock_if_asked(&config.settings, provider).await?;
    Ok(replay_plan_with(args, config, bedrock)?)
}

/// Runs `myao replay`, writing to stdout.
pub async fn replay(args: ReplayArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    let config = replay_config(&args, env)?;
    warn_issues(&config);
    let (filter, options) = planned(&args, &config).await?;
    let export = export::read(&args.export, &filter)?;
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut sink: Box<dyn Sink> = if args.json {
        Box::new(JsonSink::new(out))
    } else {
        Box::new(TextSink::new(out))
    };
    match replay::run(&export, options, sink.as_mut()).await {
        Ok(_) => Ok(()),
        // The reader went away (`myao replay ... | head`): not an error.
        Err(e) if is_broken_pipe(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Runs `myao eval`, writing the table (or one JSON object) to stdout.
pub async fn eval(args: ReplayArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    let config = replay_config(&args, env)?;
    warn_issues(&config);
    let (filter, options) = planned(&args, &config).await?;
    for name in eval::set_aside(&options.settings) {
        eprintln!(
            "warning: setting {name} is set aside: eval sets each chattiness level everywhere"
        );
    }
    let export = export::read(&args.export, &filter)?;
    let report = eval::run(&export, &options, &Chattiness::ALL).await?;
    if let Some(path) = &args.html {
        let page = eval::html::render(&report, args.html_options)
            .context("cannot render the report page")?;
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("the report page is in {}", path.display());
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if args.json {
        serde_json::to_writer(&mut out, &report.to_json())
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
            .and_then(|()| out.flush())
    } else {
        report.write_text(&mut out)
    };
    match written {
        // The reader went away (`myao eval ... | head`): not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// The stack's names: the description given by `--stack` (a file, or `-`
/// for standard input), then the flags.
pub fn stack(args: &StackArgs) -> anyhow::Result<Stack> {
    let mut stack = match &args.description {
        None => Stack::default(),
        Some(path) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
            } else {
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?
            };
            Stack::from_json(&text)
                .with_context(|| format!("{} is not a stack's description", path.display()))?
        }
    };
    for (key, value) in &args.names {
        stack.set(key.as_str(), value.as_str());
    }
    Ok(stack)
}

/// The AWS configuration of doctor and redrive: the caller's, which must
/// name a region.
async fn aws_config() -> anyhow::Result<aws_config::SdkConfig> {
    let config = myao::adapters::aws::sdk_config().await;
    if config.region().is_none() {
        anyhow::bail!(
            "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION) to the stack's region"
        );
    }
    Ok(config)
}

/// Runs `myao doctor`: one line per check on stdout; an error when any failed.
pub async fn doctor(args: StackArgs) -> anyhow::Result<()> {
    let stack = stack(&args)?;
    let aws = doctor::Clients::new(&aws_config().await?);
    let http = myao::adapters::tls::http_client_builder()
        .timeout(std::time::Duration::from_secs(40))
        .build()
        .context("cannot make an HTTP client")?;
    let checks = doctor::run(&aws, &http, &stack).await;
    let mut out = std::io::stdout().lock();
    for check in &checks {
        writeln!(out, "{check}")?;
    }
    let failed = checks.iter().filter(|c| !c.passed()).count();
    if failed > 0 {
        anyhow::bail!("{failed} of {} checks failed", checks.len());
    }
    writeln!(out, "all {} checks passed", checks.len())?;
    Ok(())
}

/// Runs `myao redrive`: one line per message and a count on stdout; an
/// error when a move failed.
pub async fn redrive(args: RedriveArgs) -> anyhow::Result<()> {
    let stack = stack(&args.stack)?;
    let sqs = aws_sdk_sqs::Client::new(&aws_config().await?);
    let report = redrive::run(&sqs, &stack, args.dry_run).await?;
    let mut out = std::io::stdout().lock();
    for entry in &report.entries {
        writeln!(out, "{entry}")?;
    }
    for error in &report.errors {
        writeln!(out, "FAILED      {error}")?;
    }
    writeln!(out, "{}", report.summary(args.dry_run))?;
    if let Some(failure) = report.failure(args.dry_run) {
        anyhow::bail!(failure);
    }
    Ok(())
}

/// Runs `myao settings`: the local mode's settings without a stack, the
/// stack's SSM parameters with one.
pub async fn settings(args: SettingsArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    use crate::settings::{self as s, Unset};
    let has_stack = args.stack.description.is_some() || !args.stack.names.is_empty();
    let mut out = std::io::stdout().lock();
    if !has_stack {
        let (given, issues) = s::local(args.config.as_deref(), env)?;
        for issue in issues {
            eprintln!("warning: {issue}");
        }
        return match print_settings(&mut out, &args.action, &given, "locally") {
            // The reader went away (`myao settings | head`): not an error.
            Err(e) if is_broken_pipe(&e) => Ok(()),
            other => other,
        };
    }
    let stack = stack(&args.stack)?;
    let Some(path) = stack.get(SETTINGS_PATH).map(str::to_owned) else {
        anyhow::bail!(
            "the settings' path is unknown (no {SETTINGS_PATH} output in --stack, no --stage, \
             no --settings-path): give --stage <name> or --settings-path <path>"
        );
    };
    let ssm = aws_sdk_ssm::Client::new(&aws_config().await?);
    let given = s::in_ssm(&ssm, &path).await?;
    let prefix = s::prefix(&path);
    match &args.action {
        SettingsAction::Set(name, value) => {
            let current = given
                .iter()
                .map(|(n, (v, _))| (n.clone(), v.clone()))
                .collect();
            let text = s::checked(name, value, &current)?;
            s::put(&ssm, &path, name, &text).await?;
            writeln!(out, "{prefix}{name} = {text}")?;
            writeln!(
                out,
                "the functions read it within a minute; no deploy is needed"
            )?;
            Ok(())
        }
        SettingsAction::Unset(name) => {
            match s::unset(&ssm, &path, name).await? {
                Unset::Default(text) => writeln!(out, "{prefix}{name} = {text} (the default)")?,
                Unset::Deleted => writeln!(out, "{prefix}{name} deleted: {name} has no value")?,
                Unset::Already => writeln!(out, "{prefix}{name} has no value already")?,
            }
            Ok(())
        }
        action => print_settings(&mut out, action, &given, &format!("under {prefix}")),
    }
}

/// `myao settings list` or `get` of the values `given` (`place`: where
/// they were read, for the unknown names).
fn print_settings(
    out: &mut impl Write,
    action: &SettingsAction,
    given: &crate::settings::Given,
    place: &str,
) -> anyhow::Result<()> {
    use crate::settings as s;
    let entries = s::entries(given);
    if let SettingsAction::Get(name) = action {
        s::find(name)?;
        let entry = entries
            .iter()
            .find(|e| e.name == name.as_str())
            .context("every setting has an entry")?;
        if let Some(problem) = &entry.problem {
            eprintln!("warning: {name}'s value is not valid ({problem}); the default is used");
        }
        writeln!(out, "{}", entry.value)?;
        return Ok(());
    }
    const WIDTH: usize = 40;
    writeln!(out, "{:<34} {:<WIDTH$} SOURCE", "NAME", "VALUE")?;
    for entry in &entries {
        writeln!(out, "{}", entry.line(WIDTH))?;
    }
    for name in s::unknown(given) {
        writeln!(
            out,
            "{name}: no setting has this name ({place}); it is not used"
        )?;
    }
    Ok(())
}

/// Runs `myao serve` until Ctrl-C.
pub async fn serve(args: ServeArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    let config = config::load(args.config.as_deref(), env, &[])?;
    warn_issues(&config);
    if args.socket_mode {
        return serve_socket_mode(config, args.debug_reconnects).await;
    }
    let server = serve::bind(config, args.addr).await?;
    let addr = server.local_addr()?;
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "myao serving as {} on http://{addr}{} (Ctrl-C stops)",
        server.bot_user_id(),
        serve::EVENTS_PATH
    );
    server
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("the server stopped")
}

/// Runs `myao serve --socket-mode` until Ctrl-C, or until Slack refuses it.
async fn serve_socket_mode(config: LocalConfig, debug_reconnects: bool) -> anyhow::Result<()> {
    let socket = socket::prepare(config, debug_reconnects).await?;
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "myao serving as {} over Slack's Socket Mode (Ctrl-C stops)",
        socket.bot_user_id()
    );
    socket
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("Socket Mode stopped")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn replay_options_parse_in_both_forms() {
        let Command::Replay(r) = parse(&args(
            "replay ex --json --channel general --channel=#dev --from 2026-01-05 --to=2026-01-06 \
             --seed 7 --bot-user-id UBOT --memory-interval 30m --prompts-dir p",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(r.export, PathBuf::from("ex"));
        assert!(r.json);
        assert_eq!(r.filter.channels, ["general", "#dev"]);
        assert_eq!(r.filter.from, NaiveDate::from_ymd_opt(2026, 1, 5));
        assert_eq!(r.filter.to, NaiveDate::from_ymd_opt(2026, 1, 6));
        assert_eq!(r.seed, 7);
        assert_eq!(r.bot_user_id.unwrap().as_str(), "UBOT");
        assert_eq!(r.memory_interval, Some(Duration::minutes(30)));
        assert_eq!(r.prompts_dir, Some(PathBuf::from("p")));
    }

    #[test]
    fn usage_errors_say_what_is_wrong() {
        for (line, needle) in [
            ("", "no command"),
            ("frobnicate", "unknown command"),
            ("replay", "needs the path"),
            ("replay a b", "second"),
            ("replay a --seed", "needs a value"),
            ("replay a --seed x", "whole number"),
            ("replay a --from 2026-13-01", "date"),
            ("replay a --from 2026-01-06 --to 2026-01-05", "after"),
            ("replay a --bogus", "unknown option --bogus for replay"),
            ("eval", "eval needs the path"),
            ("eval a b", "eval takes one export"),
            (
                "eval a --prompts-dir p",
                "unknown option --prompts-dir for eval",
            ),
            ("replay a --json=yes", "takes no value"),
            ("replay a --bot-user-id not-an-id", "--bot-user-id"),
            ("replay a --memory-interval 5x", "duration"),
            ("replay a --memory-interval h", "duration"),
            ("replay a --memory-interval 30s", "from 1m to 30d"),
            ("replay a --memory-interval 31d", "from 1m to 30d"),
            (
                "replay a --memory-interval 106751991167301d",
                "from 1m to 30d",
            ),
            (
                "replay a --memory-interval 9223372036854775807",
                "from 1m to 30d",
            ),
            (
                "replay a --memory-interval 99999999999999999999999h",
                "from 1m to 30d",
            ),
            ("replay a --from +262142-12-31", "0001-01-01 to 9999-12-31"),
            ("replay a --to -262143-01-01", "0001-01-01 to 9999-12-31"),
            ("serve --addr nowhere", "host:port"),
            ("serve extra", "unknown argument"),
            (
                "serve --socket-mode --addr 127.0.0.1:3000",
                "no use with --socket-mode",
            ),
            (
                "serve --addr=0.0.0.0:3000 --socket-mode",
                "no use with --socket-mode",
            ),
            ("serve --debug-reconnects", "for --socket-mode"),
            ("serve --socket-mode=yes", "takes no value"),
            ("doctor --set TableName", "KEY=VALUE"),
            ("doctor --set =x", "KEY=VALUE"),
            ("doctor --dry-run", "unknown option --dry-run for doctor"),
            ("doctor extra", "unknown argument extra for doctor"),
            ("redrive --stack", "needs a value"),
            ("redrive --dry-run=yes", "takes no value"),
        ] {
            let e = parse(&args(line)).unwrap_err();
            assert!(e.to_string().contains(needle), "{line:?}: {e}");
        }
    }

    #[test]
    fn eval_takes_the_options_of_replay() {
        let Command::Eval(r) = parse(&args(
            "eval ex --json --channel dev --seed 3 --memory-interval off --config c.toml",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(r.export, PathBuf::from("ex"));
        assert!(r.json);
        assert_eq!(r.filter.channels, ["dev"]);
        assert_eq!(r.seed, 3);
        assert_eq!(r.memory_interval, None);
        assert_eq!(r.config, Some(PathBuf::from("c.toml")));
        assert_eq!(r.prompts_dir, None);
        assert_eq!(r.html, None);
        assert_eq!(
            parse(&args("eval --help")).unwrap(),
            Command::Help(Some("eval"))
        );
        let Command::Eval(r) =
            parse(&args("eval ex --html r.html --include-private --full-text")).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.html, Some(PathBuf::from("r.html")));
        assert!(r.html_options.include_private && r.html_options.full_text);
        // The page's options are the page's: not without it, not for replay.
        assert_eq!(
            parse(&args("eval ex --full-text")),
            Err(UsageError::PageOptionWithoutHtml)
        );
        assert!(matches!(
            parse(&args("replay ex --html r.html")),
            Err(UsageError::UnknownOption { .. })
        ));
    }

    #[test]
    fn settings_takes_an_action_and_needs_a_stack_to_write() {
        let settings = |line: &str| match parse(&args(line)) {
            Ok(Command::Settings(s)) => Ok(s),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        let list = settings("settings --config my.toml").unwrap();
        assert_eq!(list.action, SettingsAction::List);
        assert_eq!(list.config, Some(PathBuf::from("my.toml")));
        let set = settings("settings set rule_thresholds -10,40 --stage prod").unwrap();
        assert_eq!(
            set.action,
            SettingsAction::Set("rule_thresholds".into(), "-10,40".into())
        );
        assert_eq!(
            set.stack.names,
            [("SettingsPath".to_owned(), "/myao/prod/".to_owned())]
        );
        let get = settings("settings get chattiness --stack s.json").unwrap();
        assert_eq!(get.action, SettingsAction::Get("chattiness".into()));
        assert_eq!(
            settings("settings set chattiness quiet"),
            Err(UsageError::SettingsNeedStack("set"))
        );
        assert_eq!(
            settings("settings unset chattiness"),
            Err(UsageError::SettingsNeedStack("unset"))
        );
        assert!(matches!(
            settings("settings set chattiness --stage prod"),
            Err(UsageError::SettingsNeeds { action: "set", .. })
        ));
        assert_eq!(
            settings("settings remove x"),
            Err(UsageError::UnknownSettingsAction("remove".into()))
        );
        assert_eq!(
            settings("settings get a b"),
            Err(UsageError::UnknownArgument {
                command: "settings",
                arg: "b".into()
            })
        );
        assert_eq!(
            settings("settings list --stage ../x"),
            Err(UsageError::NotAStage("../x".into()))
        );
        assert_eq!(
            settings("settings list --stage Prod"),
            Err(UsageError::NotAStage("Prod".into()))
        );
        assert_eq!(
            settings("settings list --stage prod --config my.toml"),
            Err(UsageError::ConfigWithStack)
        );
        assert_eq!(
            parse(&args("settings --help")).unwrap(),
            Command::Help(Some("settings"))
        );
    }

    #[test]
    fn doctor_and_redrive_take_a_stack_and_names() {
        let Command::Doctor(d) = parse(&args(
            "doctor --stack s.json --settings-path /myao/dev/ --set TableName=t --set=K=a=b",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(d.description, Some(PathBuf::from("s.json")));
        let names: Vec<(&str, &str)> = d
            .names
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("SettingsPath", "/myao/dev/"),
                ("TableName", "t"),
                ("K", "a=b")
            ]
        );
        let Command::Redrive(r) = parse(&args("redrive --stack - --dry-run")).unwrap() else {
            panic!()
        };
        assert!(r.dry_run);
        assert_eq!(r.stack.description, Some(PathBuf::from("-")));
        assert_eq!(
            parse(&args("doctor --help")).unwrap(),
            Command::Help(Some("doctor"))
        );
    }

    #[test]
    fn help_and_serve_defaults() {
        assert_eq!(parse(&args("--help")).unwrap(), Command::Help(None));
        assert_eq!(
            parse(&args("replay --help")).unwrap(),
            Command::Help(Some("replay"))
        );
        assert_eq!(
            parse(&args("help serve")).unwrap(),
            Command::Help(Some("serve"))
        );
        assert_eq!(parse(&args("--version")).unwrap(), Command::Version);
        assert_eq!(parse(&args("doctor")), Err(UsageError::NoStack("doctor")));
        assert_eq!(
            parse(&args("redrive --dry-run")),
            Err(UsageError::NoStack("redrive"))
        );
        assert!(matches!(
            parse(&args("doctor --set TableName=t")),
            Ok(Command::Doctor(_))
        ));
        let replay = help(Some("replay"));
        assert!(replay.contains("--prompts-dir") && !replay.contains("--dry-run"));
        assert!(help(Some("redrive")).contains("--dry-run"));
        assert!(help(None).contains("USAGE") && help(None).contains("--dry-run"));
        assert!(version().starts_with("myao "));
        let Command::Serve(s) = parse(&args("serve")).unwrap() else {
            panic!()
        };
        assert_eq!(s.addr.to_string(), DEFAULT_ADDR);
        assert!(!s.socket_mode && !s.debug_reconnects);
        let Command::Serve(s) = parse(&args(
            "serve --socket-mode --debug-reconnects --config c.toml",
        ))
        .unwrap() else {
            panic!()
        };
        assert!(s.socket_mode && s.debug_reconnects);
        assert_eq!(s.config, Some(PathBuf::from("c.toml")));
        assert_eq!(
            parse(&args("serve --socket-mode --help")).unwrap(),
            Command::Help(Some("serve"))
        );
        assert_eq!(interval("off").unwrap(), None);
        assert_eq!(interval("90").unwrap(), Some(Duration::seconds(90)));
        assert_eq!(interval("2h").unwrap(), Some(Duration::hours(2)));
        assert_eq!(interval("1m").unwrap(), Some(Duration::minutes(1)));
        assert_eq!(interval("30d").unwrap(), Some(Duration::days(30)));
        assert_eq!(interval("0h").unwrap(), None);
        let Command::Replay(r) =
            parse(&args("replay a --from 0001-01-01 --to 9999-12-31")).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.filter.to, NaiveDate::from_ymd_opt(9999, 12, 31));
        // What the range check keeps out: the ends of chrono's calendar,
        // where the export's day of margin would overflow.
        for (text, end) in [
            ("+262142-12-31", NaiveDate::MAX),
            ("-262143-01-01", NaiveDate::MIN),
        ] {
            assert_eq!(NaiveDate::parse_from_str(text, "%Y-%m-%d"), Ok(end));
        }
    }
}
