// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

use chrono::{Duration, NaiveDate};
use clap::error::ErrorKind;
use myao_domain::ChannelId;

use super::*;
use crate::serve::DEFAULT_ADDR;

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

fn parsed(line: &str) -> Command {
    match parse(args(line)) {
        Ok(command) => command,
        Err(e) => panic!("{line:?}: {e}"),
    }
}

/// The error a line makes, as clap shows it.
fn error(line: &str) -> clap::Error {
    match parse(args(line)) {
        Ok(command) => panic!("{line:?} parsed: {command:?}"),
        Err(e) => e,
    }
}

fn settings(line: &str) -> SettingsArgs {
    match parsed(line) {
        Command::Settings(s) => s,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_definitions_hold_together() {
    args::Cli::command().debug_assert();
}

#[test]
fn replay_options_parse_in_both_forms() {
    let Command::Replay(r) = parsed(
        "replay ex --json --channel general --channel=#dev --from 2026-01-05 --to=2026-01-06 \
         --seed 7 --bot-user-id UBOT --memory-interval 30m --prompts-dir p",
    ) else {
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
    // The defaults, and a repeated option: the last one wins, as before.
    let Command::Replay(r) = parsed("replay ex --seed 1 --seed 2") else {
        panic!()
    };
    assert_eq!(r.seed, 2);
    assert_eq!(r.memory_interval, Some(Duration::hours(1)));
    assert!(!r.json && r.filter.channels.is_empty() && r.prompts_dir.is_none());
}

#[test]
fn usage_errors_say_what_is_wrong() {
    for (line, kind, needle) in [
        ("", ErrorKind::MissingSubcommand, "requires a subcommand"),
        ("frobnicate", ErrorKind::InvalidSubcommand, "'frobnicate'"),
        (
            "replay",
            ErrorKind::MissingRequiredArgument,
            "<slack-export>",
        ),
        ("replay a b", ErrorKind::UnknownArgument, "'b'"),
        ("replay a --seed", ErrorKind::InvalidValue, "'--seed <N>'"),
        (
            "replay a --seed x",
            ErrorKind::ValueValidation,
            "'--seed <N>'",
        ),
        (
            "replay a --from 2026-13-01",
            ErrorKind::ValueValidation,
            "date",
        ),
        (
            "replay a --from 2026-01-06 --to 2026-01-05",
            ErrorKind::ArgumentConflict,
            "--from 2026-01-06 is after --to 2026-01-05",
        ),
        ("replay a --bogus", ErrorKind::UnknownArgument, "'--bogus'"),
        ("eval", ErrorKind::MissingRequiredArgument, "<slack-export>"),
        ("eval a b", ErrorKind::UnknownArgument, "'b'"),
        (
            "eval a --prompts-dir p",
            ErrorKind::UnknownArgument,
            "'--prompts-dir'",
        ),
        ("replay a --json=yes", ErrorKind::TooManyValues, "'yes'"),
        (
            "replay a --bot-user-id not-an-id",
            ErrorKind::ValueValidation,
            "--bot-user-id",
        ),
        (
            "replay a --memory-interval 5x",
            ErrorKind::ValueValidation,
            "duration",
        ),
        (
            "replay a --memory-interval h",
            ErrorKind::ValueValidation,
            "duration",
        ),
        (
            "replay a --memory-interval 30s",
            ErrorKind::ValueValidation,
            "from 1m to 30d",
        ),
        (
            "replay a --memory-interval 31d",
            ErrorKind::ValueValidation,
            "from 1m to 30d",
        ),
        (
            "replay a --memory-interval 106751991167301d",
            ErrorKind::ValueValidation,
            "from 1m to 30d",
        ),
        (
            "replay a --memory-interval 9223372036854775807",
            ErrorKind::ValueValidation,
            "from 1m to 30d",
        ),
        (
            "replay a --memory-interval 99999999999999999999999h",
            ErrorKind::ValueValidation,
            "from 1m to 30d",
        ),
        (
            "replay a --from +262142-12-31",
            ErrorKind::ValueValidation,
            "0001-01-01 to 9999-12-31",
        ),
        (
            "replay a --to -262143-01-01",
            ErrorKind::ValueValidation,
            "0001-01-01 to 9999-12-31",
        ),
        (
            "serve --addr nowhere",
            ErrorKind::ValueValidation,
            "host:port",
        ),
        ("serve extra", ErrorKind::UnknownArgument, "'extra'"),
        (
            "serve --socket-mode --addr 127.0.0.1:3000",
            ErrorKind::ArgumentConflict,
            "cannot be used with",
        ),
        (
            "serve --addr=0.0.0.0:3000 --socket-mode",
            ErrorKind::ArgumentConflict,
            "cannot be used with",
        ),
        (
            "serve --debug-reconnects",
            ErrorKind::MissingRequiredArgument,
            "--socket-mode",
        ),
        ("serve --socket-mode=yes", ErrorKind::TooManyValues, "'yes'"),
        (
            "doctor --set TableName",
            ErrorKind::ValueValidation,
            "KEY=VALUE",
        ),
        ("doctor --set =x", ErrorKind::ValueValidation, "KEY=VALUE"),
        (
            "doctor --dry-run",
            ErrorKind::UnknownArgument,
            "'--dry-run'",
        ),
        ("doctor extra", ErrorKind::UnknownArgument, "'extra'"),
        (
            "redrive --stack",
            ErrorKind::InvalidValue,
            "'--stack <FILE>'",
        ),
        ("redrive --dry-run=yes", ErrorKind::TooManyValues, "'yes'"),
        (
            "eval ex --full-text",
            ErrorKind::MissingRequiredArgument,
            "--html <FILE>",
        ),
        (
            "replay ex --html r.html",
            ErrorKind::UnknownArgument,
            "'--html'",
        ),
    ] {
        let e = error(line);
        assert_eq!(e.kind(), kind, "{line:?}: {e}");
        assert_eq!(e.exit_code(), 2, "{line:?}");
        assert!(e.to_string().contains(needle), "{line:?}: {e}");
    }
}

#[test]
fn eval_takes_the_options_of_replay() {
    let Command::Eval(r) =
        parsed("eval ex --json --channel dev --seed 3 --memory-interval off --config c.toml")
    else {
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
    let Command::Eval(r) = parsed("eval ex --html r.html --include-private --full-text") else {
        panic!()
    };
    assert_eq!(r.html, Some(PathBuf::from("r.html")));
    assert!(r.html_options.include_private && r.html_options.full_text);
}

#[test]
fn settings_takes_an_action_and_needs_a_stack_to_write() {
    let list = settings("settings --config my.toml");
    assert_eq!(list.action, SettingsAction::List);
    assert_eq!(list.config, Some(PathBuf::from("my.toml")));
    let set = settings("settings set rule_thresholds -10,40 --stage prod");
    assert_eq!(
        set.action,
        SettingsAction::Set("rule_thresholds".into(), "-10,40".into())
    );
    assert_eq!(
        set.stack.names,
        [("SettingsPath".to_owned(), "/myao/prod/".to_owned())]
    );
    let get = settings("settings get chattiness --stack s.json");
    assert_eq!(get.action, SettingsAction::Get("chattiness".into()));
    let unset = settings("settings --stage prod unset chattiness");
    assert_eq!(unset.action, SettingsAction::Unset("chattiness".into()));
    for (line, kind, needle) in [
        (
            "settings set chattiness quiet",
            ErrorKind::MissingRequiredArgument,
            "settings set changes a deployed stack's settings",
        ),
        (
            "settings unset chattiness",
            ErrorKind::MissingRequiredArgument,
            "settings unset changes a deployed stack's settings",
        ),
        (
            "settings set chattiness --stage prod",
            ErrorKind::MissingRequiredArgument,
            "settings set needs a VALUE after the NAME",
        ),
        (
            "settings get",
            ErrorKind::MissingRequiredArgument,
            "settings get needs",
        ),
        ("settings remove x", ErrorKind::InvalidValue, "'remove'"),
        ("settings get a b", ErrorKind::UnknownArgument, "'b'"),
        ("settings list x", ErrorKind::UnknownArgument, "'x'"),
        (
            "settings list --stage ../x",
            ErrorKind::ValueValidation,
            "stage's name",
        ),
        (
            "settings list --stage Prod",
            ErrorKind::ValueValidation,
            "stage's name",
        ),
        (
            "settings list --stage prod --config my.toml",
            ErrorKind::ArgumentConflict,
            "--config is for the local settings",
        ),
        ("settings --bogus", ErrorKind::UnknownArgument, "'--bogus'"),
    ] {
        let e = error(line);
        assert_eq!(e.kind(), kind, "{line:?}: {e}");
        assert!(e.to_string().contains(needle), "{line:?}: {e}");
    }
}

#[test]
fn doctor_and_redrive_take_a_stack_and_names_in_order() {
    let Command::Doctor(d) = parsed(
        "doctor --stack s.json --settings-path /myao/dev/ --set TableName=t --set=K=a=b --stage prod",
    ) else {
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
            ("K", "a=b"),
            ("SettingsPath", "/myao/prod/"),
        ]
    );
    let Command::Redrive(r) = parsed("redrive --stack - --dry-run") else {
        panic!()
    };
    assert!(r.dry_run);
    assert_eq!(r.stack.description, Some(PathBuf::from("-")));
    for (line, needle) in [
        ("doctor", "doctor needs the stack"),
        ("redrive --dry-run", "redrive needs the stack"),
    ] {
        let e = error(line);
        assert_eq!(e.kind(), ErrorKind::MissingRequiredArgument, "{line:?}");
        assert!(e.to_string().contains(needle), "{line:?}: {e}");
    }
    assert!(matches!(
        parsed("doctor --set TableName=t"),
        Command::Doctor(_)
    ));
}

#[test]
fn help_version_and_completions() {
    for line in [
        "--help",
        "-h",
        "help",
        "replay --help",
        "help serve",
        "serve --socket-mode --help",
    ] {
        let e = error(line);
        assert_eq!(e.kind(), ErrorKind::DisplayHelp, "{line:?}");
        assert_eq!(e.exit_code(), 0, "{line:?}");
    }
    let replay = error("replay --help").to_string();
    assert!(replay.contains("--prompts-dir") && !replay.contains("--dry-run"));
    assert!(replay.contains("Examples:") && replay.contains("myao replay export.zip"));
    assert!(error("help redrive").to_string().contains("--dry-run"));
    assert_eq!(error("--version").kind(), ErrorKind::DisplayVersion);
    assert_eq!(parsed("version"), Command::Version);
    assert_eq!(version(), format!("myao {}\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(
        parsed("completions zsh"),
        Command::Completions(clap_complete::Shell::Zsh)
    );
    assert_eq!(error("completions tcsh").kind(), ErrorKind::InvalidValue);
}

#[test]
fn serve_defaults() {
    let Command::Serve(s) = parsed("serve") else {
        panic!()
    };
    assert_eq!(s.addr.to_string(), DEFAULT_ADDR);
    assert!(!s.socket_mode && !s.debug_reconnects);
    let Command::Serve(s) = parsed("serve --socket-mode --debug-reconnects --config c.toml") else {
        panic!()
    };
    assert!(s.socket_mode && s.debug_reconnects);
    assert_eq!(s.config, Some(PathBuf::from("c.toml")));
}

#[test]
fn intervals_and_the_widest_dates() {
    assert_eq!(interval("off").unwrap(), None);
    assert_eq!(interval("90").unwrap(), Some(Duration::seconds(90)));
    assert_eq!(interval("2h").unwrap(), Some(Duration::hours(2)));
    assert_eq!(interval("1m").unwrap(), Some(Duration::minutes(1)));
    assert_eq!(interval("30d").unwrap(), Some(Duration::days(30)));
    assert_eq!(interval("0h").unwrap(), None);
    let Command::Replay(r) = parsed("replay a --from 0001-01-01 --to 9999-12-31") else {
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

/// The command lines of README.md, docs/ and functions/local/README.md
/// (without their environment), as they are written there.
#[test]
fn the_documented_command_lines_parse() {
    for line in [
        "replay functions/local/examples/export",
        "replay functions/local/examples/export --channel dev",
        "replay functions/local/examples/export --config proactive.toml",
        "replay export.zip --channel general --from 2026-01-05 --json",
        "eval functions/local/examples/export",
        "eval export.zip --html report.html",
        "eval export.zip --json",
        "serve",
        "serve --socket-mode",
        "doctor --stack stack.json",
        "doctor --stack -",
        "redrive --stack stack.json",
        "redrive --stack stack.json --dry-run",
        "settings",
        "settings list",
        "settings list --stack stack.json",
        "settings list --settings-path /myao/dev/",
        "settings get chattiness --stack stack.json",
        "settings set chattiness quiet --stack stack.json",
        "settings set min_wait_seconds 60 --stack stack.json",
        "settings set slack_team_id T0123ABCD --stack stack.json",
        "settings set response_provider openai --stack stack.json",
        "settings set judgment_model us.anthropic.claude-haiku-4-5-20251001-v1:0 --stack stack.json",
        "settings unset chattiness --stack stack.json",
        "settings set chattiness quiet --stage prod",
        "completions bash",
    ] {
        parsed(line);
    }
    // A quoted value of several words, as `"$(cat persona.txt)"` gives it.
    let prompt = [
        "settings",
        "set",
        "persona_system_prompt",
        "You are -- myao.",
        "--stack",
        "s.json",
    ];
    let Ok(Command::Settings(s)) = parse(prompt) else {
        panic!("{prompt:?}")
    };
    assert_eq!(
        s.action,
        SettingsAction::Set("persona_system_prompt".into(), "You are -- myao.".into())
    );
    for line in [
        "replay --help",
        "settings --help",
        "help replay",
        "--version",
    ] {
        let e = error(line);
        assert_eq!(e.exit_code(), 0, "{line}: {e}");
    }
}

#[test]
fn feedback_lists_by_channel_and_reset_takes_exactly_one() {
    let Command::Feedback(f) = parsed("feedback --stack s.json --channel C1 --channel C2 --json")
    else {
        panic!()
    };
    assert!(!f.reset && f.json);
    let channels: Vec<&str> = f.channels.iter().map(ChannelId::as_str).collect();
    assert_eq!(channels, ["C1", "C2"]);
    let Command::Feedback(r) = parsed("feedback reset --set TableName=t --channel C1") else {
        panic!()
    };
    assert!(r.reset && r.channels.len() == 1);
    for (line, needle) in [
        ("feedback", "feedback needs the stack"),
        (
            "feedback reset --stack s.json",
            "exactly one --channel (got 0)",
        ),
        (
            "feedback reset --stack s.json --channel C1 --channel C2",
            "exactly one --channel (got 2)",
        ),
    ] {
        let e = error(line);
        assert_eq!(e.kind(), ErrorKind::MissingRequiredArgument, "{line:?}");
        assert!(e.to_string().contains(needle), "{line:?}: {e}");
    }
}

#[test]
fn replay_takes_more_workspaces_exports_and_settings_one_teams() {
    let Command::Replay(r) = parsed("replay a.zip --also b.zip --also c") else {
        panic!()
    };
    assert_eq!(r.export, PathBuf::from("a.zip"));
    assert_eq!(r.also, [PathBuf::from("b.zip"), PathBuf::from("c")]);
    let Command::Replay(r) = parsed("replay a.zip") else {
        panic!()
    };
    assert!(r.also.is_empty());
    // eval has no --also: one workspace's figures.
    assert_eq!(
        error("eval a.zip --also b.zip").kind(),
        ErrorKind::UnknownArgument
    );
    let s = settings("settings set chattiness quiet --team T0123 --stage prod");
    assert_eq!(s.team.map(|t| t.to_string()).as_deref(), Some("T0123"));
    assert!(matches!(
        parse(args("settings get chattiness --team T0123")),
        Err(e) if e.to_string().contains("needs the stack") || e.to_string().contains("--team")
    ));
}
