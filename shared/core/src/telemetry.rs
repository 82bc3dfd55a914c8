//! Logging setup: JSON lines on Lambda (CloudWatch parses them), readable
//! text locally. The levels come from `RUST_LOG` (default `info`), as a
//! default level and `target=level` directives (`warn,myao=debug`); one that
//! does not parse means `info`.
//!
//! The filter is `Targets`, not `EnvFilter`: `EnvFilter`'s span and field
//! directives bring in the `regex` crates and their Unicode tables, some
//! 300 KiB of every function's binary, for filters nobody sets on a Lambda.

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The filter `RUST_LOG` asks for (`None`: unset), `info` where it does
/// not parse.
fn filter(rust_log: Option<&str>) -> Targets {
    rust_log
        .and_then(|directives| directives.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::INFO))
}

/// Installs the global subscriber once; later calls do nothing.
pub fn init(json: bool) {
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
    let format = tracing_subscriber::fmt::layer().with_target(false);
    let result = if json {
        // Lambda adds its own timestamps and request ids.
        let format = format.json().without_time().with_current_span(true);
        tracing_subscriber::registry()
            .with(format)
            .with(filter)
            .try_init()
    } else {
        // Colour only for a person at a terminal, not in a file or a pipe.
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let format = format.with_ansi(ansi).with_writer(std::io::stderr);
        tracing_subscriber::registry()
            .with(format)
            .with(filter)
            .try_init()
    };
    // Already installed (tests, or a second call): keep the first.
    drop(result);
}

/// Whether the process runs on Lambda with JSON logs asked for.
pub fn lambda_wants_json() -> bool {
    std::env::var("AWS_LAMBDA_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn rust_log_sets_levels_per_target_and_info_otherwise() {
        let default = filter(None);
        assert!(default.would_enable("myao", &Level::INFO));
        assert!(!default.would_enable("myao", &Level::DEBUG));

        let asked = filter(Some("warn,myao=debug"));
        assert!(asked.would_enable("myao_services::judgment", &Level::DEBUG));
        assert!(!asked.would_enable("aws_smithy_runtime", &Level::INFO));
        assert!(asked.would_enable("aws_smithy_runtime", &Level::WARN));

        let garbled = filter(Some("myao=loud"));
        assert!(garbled.would_enable("myao", &Level::INFO));
        assert!(!garbled.would_enable("myao", &Level::DEBUG));
    }
}
