//! The `myao` binary: exit codes, help, completions, and the README's first
//! command. The replay's timeline and the eval's table of the example are
//! snapshotted whole (insta, in `snapshots/`).

use std::path::Path;
use std::process::{Command, Output};

fn myao(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_myao"));
    command.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    // The developer's own settings must not turn the dry run into a live one.
    for (name, _) in std::env::vars() {
        if name.starts_with("MYAO_") {
            command.env_remove(name);
        }
    }
    command.env_remove("RUST_LOG");
    command.output().expect("the myao binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A replay's text without the one figure that is not the export's: the
/// wall clock it took.
pub(crate) fn without_wall_clock(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("elapsed ") && line.ends_with(" s wall clock") {
                "elapsed       [n] s wall clock"
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every command, as `myao --help` lists them.
const COMMANDS: [&str; 7] = [
    "replay",
    "eval",
    "serve",
    "doctor",
    "redrive",
    "settings",
    "completions",
];

#[test]
fn completions_bash_prints_a_script_naming_every_command() {
    let out = myao(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let script = text(&out.stdout);
    assert!(script.contains("complete -F _myao"), "{script}");
    for c in COMMANDS {
        assert!(script.contains(&format!("myao,{c})")), "{c}: {script}");
    }
    // The options of a command are completed too.
    assert!(script.contains("--memory-interval") && script.contains("--dry-run"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = myao(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(text(&out.stdout).contains("redrive"), "{shell}");
    }
    let out = myao(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("possible values: bash"));
}

#[test]
fn help_of_a_command_shows_its_examples_however_asked() {
    for c in COMMANDS {
        for args in [&["help", c][..], &[c, "--help"][..], &[c, "-h"][..]] {
            let out = myao(args);
            assert_eq!(out.status.code(), Some(0), "{args:?}");
            let help = text(&out.stdout);
            let examples = help.split_once("Examples:\n").map(|(_, e)| e);
            let Some(examples) = examples else {
                panic!("{args:?}: {help}")
            };
            assert!(
                examples.lines().any(|l| l.contains(&format!("myao {c} "))),
                "{args:?}: {help}"
            );
        }
    }
}

#[test]
fn an_unknown_option_is_a_usage_error_exit_2() {
    let out = myao(&["replay", "examples/export", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: unexpected argument '--bogus' found"),
        "{err}"
    );
    assert!(err.contains("Usage: myao replay"), "{err}");
    assert!(out.stdout.is_empty());
    // A near miss is named.
    let out = myao(&["replay", "examples/export", "--jsn"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a similar argument exists: '--json'"));
}

#[test]
fn logs_into_a_pipe_carry_no_colour_codes() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_myao"));
    command
        .args(["replay", "examples/export"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("RUST_LOG", "info");
    for (name, _) in std::env::vars() {
        if name.starts_with("MYAO_") {
            command.env_remove(name);
        }
    }
    let out = command.output().expect("the myao binary runs");
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("INFO"), "the core logged: {err}");
    assert!(!err.contains('\u{1b}'), "an escape code in a pipe: {err:?}");
}

#[test]
fn each_command_has_its_own_help_and_there_is_a_version() {
    let helps: Vec<String> = COMMANDS
        .iter()
        .map(|c| {
            let out = myao(&[c, "--help"]);
            assert!(out.status.success(), "{c}");
            let help = text(&out.stdout);
            assert!(help.contains(&format!("Usage: myao {c}")), "{c}: {help}");
            assert!(help.contains("Examples:"), "{c}");
            help
        })
        .collect();
    for (i, a) in helps.iter().enumerate() {
        for b in &helps[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // The whole help lists every command, each with what it does.
    let all = text(&myao(&["--help"]).stdout);
    assert!(all.contains("Usage: myao <COMMAND>"), "{all}");
    for c in COMMANDS {
        assert!(all.contains(&format!("\n  {c} ")), "{c}: {all}");
    }
    let out = myao(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        format!("myao {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_malformed_stack_file_is_named_once_with_its_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("stack.json");
    std::fs::write(&bad, "{not json").expect("written");
    for command in ["doctor", "redrive"] {
        let out = myao(&[command, "--stack", bad.to_str().expect("a path")]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        let err = text(&out.stderr);
        assert!(
            err.contains("is not a stack's description: not JSON"),
            "{err}"
        );
        assert_eq!(err.matches("key must be a string").count(), 1, "{err}");
    }
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    for args in [
        &[][..],
        &["replay"][..],
        &["replay", "examples/export", "--seed", "many"][..],
        &["serve", "--addr"][..],
        &["serve", "--socket-mode", "--addr", "127.0.0.1:3000"][..],
        &["dance"][..],
        &["doctor"][..],
        &["redrive", "--dry-run"][..],
    ] {
        let out = myao(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("error: "), "{err}");
        // clap's pointer to the help.
        assert!(err.contains("try '--help'"), "{err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn out_of_range_intervals_and_dates_exit_2_instead_of_panicking() {
    for (args, needle) in [
        (
            &[
                "replay",
                "examples/export",
                "--memory-interval",
                "106751991167301d",
            ][..],
            "'--memory-interval <DURATION>': must be from 1m to 30d",
        ),
        (
            &[
                "replay",
                "examples/export",
                "--memory-interval=9223372036854775807",
            ][..],
            "'--memory-interval <DURATION>': must be from 1m to 30d",
        ),
        (
            &[
                "replay",
                "examples/export",
                "--memory-interval",
                "99999999999999999999h",
            ][..],
            "'--memory-interval <DURATION>': must be from 1m to 30d",
        ),
        (
            &["replay", "examples/export", "--to", "+262142-12-31"][..],
            "'--to <YYYY-MM-DD>': the dates go from 0001-01-01 to 9999-12-31",
        ),
        (
            &["replay", "examples/export", "--from", "-262143-01-01"][..],
            "'--from <YYYY-MM-DD>': the dates go from 0001-01-01 to 9999-12-31",
        ),
    ] {
        let out = myao(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // The widest range the options take replays everything.
    let out = myao(&[
        "replay",
        "examples/export",
        "--from",
        "0001-01-01",
        "--to",
        "9999-12-31",
        "--memory-interval",
        "30d",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("── summary (dry run)"));
}

#[test]
fn help_exits_0() {
    let out = myao(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(help.contains("myao replay functions/local/examples/export"));
    assert!(help.contains("MYAO_SLACK_BOT_TOKEN"));
    assert!(help.contains("myao serve --socket-mode"));
    assert!(help.contains("MYAO_SLACK_APP_TOKEN"));
}

#[test]
fn the_readme_replay_runs_as_a_dry_run() {
    let out = myao(&["replay", "examples/export"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The whole timeline: the dry run's notice, each judgment past the gates
    // with the rule stage's ruling, edits and skips, and the summary.
    insta::assert_snapshot!(without_wall_clock(&stdout));
    // The judgment "Reading the replay" shows, as the replay writes it.
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let shown: Vec<&str> = readme
        .lines()
        .filter(|l| {
            (l.starts_with("2026-") && l.contains("judgment: "))
                || l.trim_start().starts_with("rule stage: ")
        })
        .collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    for line in shown {
        assert!(stdout.contains(line.trim()), "{line}");
    }
    // The prompts a dry run made (in the snapshot) are not read as a live
    // run's cost.
    assert!(!stdout.contains("LLM calls     memory"), "{stdout}");
}

#[test]
fn json_output_is_one_object_per_line() {
    let out = myao(&["replay", "examples/export", "--json", "--channel", "random"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["type"], "replay");
    assert_eq!(lines.last().unwrap()["type"], "summary");
    assert!(lines.iter().any(|l| l["type"] == "message"));
    assert!(lines
        .iter()
        .filter(|l| l["type"] == "message")
        .all(|l| l["channel_name"] == "random"));
}

#[test]
fn a_malformed_export_exits_1_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("users.json"), "[]").unwrap();
    std::fs::write(
        root.join("channels.json"),
        r#"[{"id": "C1", "name": "general"}]"#,
    )
    .unwrap();
    std::fs::create_dir(root.join("general")).unwrap();
    std::fs::write(root.join("general/2026-01-05.json"), "[{oops").unwrap();
    let out = myao(&["replay", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let file = Path::new(root).join("general/2026-01-05.json");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("not valid JSON"), "{err}");
}

#[test]
fn bad_settings_are_reported_and_defaults_kept() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("myao.toml");
    std::fs::write(&cfg, "jitter_ratio = 5\nmin_wait_seconds = 60\n").unwrap();
    let out = myao(&[
        "replay",
        "examples/export",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: setting jitter_ratio = \"5\" ignored"),
        "{err}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("judgment 60 s after a conversation goes quiet (±30%)"),
        "{stdout}"
    );
}

#[test]
fn eval_prints_the_levels_side_by_side() {
    let out = myao(&["eval", "examples/export"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Offline: the four levels side by side, per channel and in total.
    insta::assert_snapshot!(text(&out.stdout));

    let out = myao(&["eval", "examples/export", "--json", "--channel", "dev"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 1, "one JSON object");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["levels"].as_array().unwrap().len(), 4);
    assert_eq!(v["channels"].as_array().unwrap().len(), 1);
    assert_eq!(v["total"]["mentions_only"]["unprompted"], 0);

    for (args, needle) in [
        (&["eval"][..], "<slack-export>"),
        (
            &["eval", "examples/export", "--prompts-dir", "p"][..],
            "unexpected argument '--prompts-dir' found",
        ),
    ] {
        let out = myao(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(needle), "{}", text(&out.stderr));
    }
}
