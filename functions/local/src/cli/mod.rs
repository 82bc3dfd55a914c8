//! The command line: `myao replay <export>`, `myao eval <export>`,
//! `myao serve`, and for a deployed stack `myao doctor` and `myao redrive`,
//! parsed by hand.

use std::net::SocketAddr;
use std::path::PathBuf;

use chrono::{Datelike as _, Duration, NaiveDate};
use myao_domain::{IdError, UserId};

use crate::eval::html::HtmlOptions;
use crate::export::Filter;
use crate::serve::DEFAULT_ADDR;
use crate::stack::SETTINGS_PATH;

mod help;
mod run;

pub use help::{help, version};
pub use run::{
    doctor, environment, eval, redrive, replay, replay_config, replay_plan, replay_plan_with,
    serve, settings, stack,
};

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
