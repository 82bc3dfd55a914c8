//! The command line: `myao replay <export>`, `myao eval <export>`,
//! `myao serve`, for a deployed stack `myao doctor`, `myao redrive` and
//! `myao settings`, and `myao completions <shell>`. Parsed by clap from the
//! definitions in [`args`], which its help and the completions come from
//! too; then made into a [`Command`], with the checks that span options.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory, FromArgMatches as _};

use crate::eval::html::HtmlOptions;
use crate::export::Filter;
use crate::replay::React;

pub mod args;
mod help;
mod parsed;
mod run;
mod values;

pub use parsed::{
    FeedbackArgs, RedriveArgs, ReplayArgs, ServeArgs, SettingsAction, SettingsArgs, StackArgs,
};
pub use run::{
    completions, doctor, environment, eval, feedback, redrive, replay, replay_config, replay_plan,
    replay_plan_with, serve, settings, stack, version,
};
pub use values::{interval, UsageError, MAX_MEMORY_INTERVAL_SECONDS, MIN_MEMORY_INTERVAL_SECONDS};

/// What the command line asks for. (`--help` and its kin are clap's: an
/// error of kind `DisplayHelp` that prints the help and exits 0.)
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `--version`, or `version`.
    Version,
    Replay(ReplayArgs),
    Eval(ReplayArgs),
    Serve(ServeArgs),
    Doctor(StackArgs),
    Redrive(RedriveArgs),
    Settings(SettingsArgs),
    Feedback(FeedbackArgs),
    /// `completions <shell>`: the shell's completion script.
    Completions(clap_complete::Shell),
}

/// Parses the arguments after the program's name. A usage error, and the
/// help or version asked for, come back as clap's error: its `exit()`
/// prints it (help to stdout) and exits with its code (2 for an error).
pub fn parse<I, T>(args: I) -> Result<Command, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut cli = args::Cli::command();
    let argv = std::iter::once(OsString::from("myao")).chain(args.into_iter().map(Into::into));
    let matches = cli.try_get_matches_from_mut(argv)?;
    let parsed = args::Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cli))?;
    let Some((name, sub)) = matches.subcommand() else {
        unreachable!("clap requires a subcommand")
    };
    command(parsed.command, sub).map_err(|e| match cli.find_subcommand_mut(name) {
        Some(sub) => sub.error(e.kind(), e),
        None => cli.error(e.kind(), e),
    })
}

/// The command the parsed line asks for; `matches` (the subcommand's)
/// give the order of the stack's names.
fn command(sub: args::Sub, matches: &ArgMatches) -> Result<Command, UsageError> {
    use args::Sub;
    Ok(match sub {
        Sub::Replay(r) => {
            let mut args = replay_args(r.common, r.prompts_dir)?;
            args.also = r.also;
            Command::Replay(args)
        }
        Sub::Eval(e) => {
            let mut args = replay_args(e.common, None)?;
            args.html = e.html;
            args.html_options = HtmlOptions {
                include_private: e.include_private,
                full_text: e.full_text,
            };
            Command::Eval(args)
        }
        Sub::Serve(s) => Command::Serve(ServeArgs {
            config: s.config,
            addr: s.addr,
            socket_mode: s.socket_mode,
            debug_reconnects: s.debug_reconnects,
        }),
        Sub::Doctor(d) => Command::Doctor(needed_stack("doctor", d.stack, matches)?),
        Sub::Redrive(r) => Command::Redrive(RedriveArgs {
            stack: needed_stack("redrive", r.stack, matches)?,
            dry_run: r.dry_run,
        }),
        Sub::Settings(s) => Command::Settings(settings_args(s, matches)?),
        Sub::Feedback(f) => Command::Feedback(feedback_args(f, matches)?),
        Sub::Completions { shell } => Command::Completions(shell),
        Sub::Version => Command::Version,
    })
}

fn replay_args(c: args::Common, prompts_dir: Option<PathBuf>) -> Result<ReplayArgs, UsageError> {
    if let (Some(from), Some(to)) = (c.from, c.to) {
        if from > to {
            return Err(UsageError::FromAfterTo { from, to });
        }
    }
    Ok(ReplayArgs {
        export: c.export,
        config: c.config,
        json: c.json,
        bot_user_id: c.bot_user_id,
        bot_name: c.bot_name,
        filter: Filter {
            channels: c.channel,
            from: c.from,
            to: c.to,
            tz: None,
        },
        llm_base_url: c.llm_base_url,
        prompts_dir,
        memory_interval: c.memory_interval.0,
        seed: c.seed,
        react: c.react.map(|emoji| React {
            emoji,
            posts: c.react_to,
        }),
        html: None,
        html_options: HtmlOptions::default(),
        also: Vec::new(),
    })
}

/// The stack's description and names, in the order given on the line.
fn stack_args(stack: args::Stack, matches: &ArgMatches) -> StackArgs {
    let mut named: Vec<(usize, (String, String))> = Vec::new();
    for (id, values) in [
        ("settings_path", stack.settings_path),
        ("stage", stack.stage),
        ("set", stack.set),
    ] {
        let indices = matches.indices_of(id).into_iter().flatten();
        named.extend(indices.zip(values));
    }
    named.sort_by_key(|(index, _)| *index);
    StackArgs {
        description: stack.stack,
        names: named.into_iter().map(|(_, name)| name).collect(),
    }
}

/// The stack of `doctor` or `redrive`: without its names there is nothing
/// to check or move, a usage error rather than a failure of every check.
fn needed_stack(
    command: &'static str,
    stack: args::Stack,
    matches: &ArgMatches,
) -> Result<StackArgs, UsageError> {
    let stack = stack_args(stack, matches);
    if stack.description.is_none() && stack.names.is_empty() {
        return Err(UsageError::NoStack(command));
    }
    Ok(stack)
}

/// `feedback`'s action, its channels and the stack; `reset` takes exactly
/// one channel.
fn feedback_args(f: args::Feedback, matches: &ArgMatches) -> Result<FeedbackArgs, UsageError> {
    let reset = f.action == Some(args::FeedbackAction::Reset);
    if reset && f.channel.len() != 1 {
        return Err(UsageError::ResetOneChannel(f.channel.len()));
    }
    Ok(FeedbackArgs {
        stack: needed_stack("feedback", f.stack, matches)?,
        reset,
        channels: f.channel,
        json: f.json,
    })
}

/// `settings`' action with its name and value, and where the settings are.
fn settings_args(s: args::Settings, matches: &ArgMatches) -> Result<SettingsArgs, UsageError> {
    use args::Action;
    let extra = |action, takes, arg: String| UsageError::SettingsExtra { action, takes, arg };
    let needs = |action, needs| UsageError::SettingsNeeds { action, needs };
    let action = match (s.action.unwrap_or(Action::List), s.name, s.value) {
        (Action::List, Some(arg), _) => return Err(extra("list", "no name", arg)),
        (Action::List, None, _) => SettingsAction::List,
        (Action::Get, None, _) => return Err(needs("get", "a setting's NAME")),
        (Action::Get, Some(_), Some(arg)) => return Err(extra("get", "a NAME alone", arg)),
        (Action::Get, Some(name), None) => SettingsAction::Get(name),
        (Action::Set, None, _) => return Err(needs("set", "a setting's NAME and a VALUE")),
        (Action::Set, Some(_), None) => return Err(needs("set", "a VALUE after the NAME")),
        (Action::Set, Some(name), Some(value)) => SettingsAction::Set(name, value),
        (Action::Unset, None, _) => return Err(needs("unset", "a setting's NAME")),
        (Action::Unset, Some(_), Some(arg)) => return Err(extra("unset", "a NAME alone", arg)),
        (Action::Unset, Some(name), None) => SettingsAction::Unset(name),
    };
    let stack = stack_args(s.stack, matches);
    let has_stack = stack.description.is_some() || !stack.names.is_empty();
    if has_stack && s.config.is_some() {
        return Err(UsageError::ConfigWithStack);
    }
    match &action {
        SettingsAction::Set(..) if !has_stack => return Err(UsageError::SettingsNeedStack("set")),
        SettingsAction::Unset(_) if !has_stack => {
            return Err(UsageError::SettingsNeedStack("unset"))
        }
        _ => {}
    }
    if s.team.is_some() && !has_stack {
        return Err(UsageError::SettingsNeedStack("--team"));
    }
    Ok(SettingsArgs {
        action,
        stack,
        config: s.config,
        team: s.team,
    })
}

#[cfg(test)]
mod tests;
