//! Logging setup: JSON lines on Lambda (CloudWatch parses them), readable
//! text locally. The level comes from `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber once; later calls do nothing.
pub fn init(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let result = if json {
        // Lambda adds its own timestamps and request ids.
        builder
            .json()
            .without_time()
            .with_current_span(true)
            .try_init()
    } else {
        builder.with_writer(std::io::stderr).try_init()
    };
    // Already installed (tests, or a second call): keep the first.
    drop(result);
}

/// Whether the process runs on Lambda with JSON logs asked for.
pub fn lambda_wants_json() -> bool {
    std::env::var("AWS_LAMBDA_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"))
}
