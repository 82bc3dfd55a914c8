//! `myao`: replay or evaluate a Slack export, or serve the bot, on one
//! machine; check a deployed stack, or redrive its failed jobs.

use std::process::ExitCode;

use anyhow::Context as _;
use myao_local::cli::{self, Command};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    // A usage error exits 2 with clap's message; --help and --version
    // print and exit 0.
    let command = match cli::parse(std::env::args_os().skip(1)) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    // The replay prints its own timeline: the core's logs stay quiet unless
    // RUST_LOG asks for them. The server logs at info.
    let default_level = match command {
        Command::Serve(_) => "info",
        _ => "off",
    };
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    // Colour only for a person at a terminal, not in a file or a pipe.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let env = cli::environment();
    let result = runtime.block_on(async {
        match command {
            Command::Completions(shell) => {
                match cli::completions(shell, &mut std::io::stdout().lock()) {
                    // The reader went away (`myao completions bash | head`).
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                    other => other.context("cannot write the completion script"),
                }
            }
            Command::Version => {
                print!("{}", cli::version());
                Ok(())
            }
            Command::Replay(args) => cli::replay(args, &env).await,
            Command::Eval(args) => cli::eval(args, &env).await,
            Command::Serve(args) => cli::serve(args, &env).await,
            Command::Doctor(args) => cli::doctor(args).await,
            Command::Redrive(args) => cli::redrive(args).await,
            Command::Feedback(args) => cli::feedback(args).await,
            Command::Settings(args) => cli::settings(args, &env).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
