//! The ingest function: Slack's Events API behind a Lambda Function URL.

pub mod handler;

use std::sync::atomic::{AtomicBool, Ordering};

use lambda_http::{run, service_fn, Body, Error, Request, Response};
use myao_aws::wire::{check_env, common, queue, scheduler, var, MissingEnv};
use myao_core::app::ingest::Ingest;
use myao_core::env::{self, Function};
use tokio::sync::OnceCell;

/// The process's ingest service, built once, by the first request: not
/// beside the init, where building it (the SDK's configuration and clients)
/// competed with the runtime's own start for the CPU and made the init
/// 1.6-1.8x a hello world's instead of 1.1-1.3x (docs/performance.md); the
/// first event arrives as soon as the init asks for it, so it waits no longer.
static INGEST: OnceCell<Ingest> = OnceCell::const_new();

/// Runs the ingest function: the environment checked, then each request
/// handled ([`handle`]).
pub async fn serve() -> Result<(), Error> {
    myao_core::telemetry::init(myao_core::telemetry::lambda_wants_json());
    // A missing variable still fails the cold start itself.
    check_env(Function::Ingest)?;
    // Nothing else before the runtime asks for the first event (the init
    // ends at that request): the service is built by the first request
    // (`handle`), not beside the init, where its work would compete with
    // the runtime's.
    run(service_fn(handle)).await
}

/// Whether the first request has started [`warm`]'s reads.
static WARMING: AtomicBool = AtomicBool::new(false);

async fn ingest() -> Result<&'static Ingest, MissingEnv> {
    INGEST.get_or_try_init(build).await
}

/// The ingest service over the AWS adapters of the function's environment.
async fn build() -> Result<Ingest, MissingEnv> {
    let c = common(Function::Ingest).await?;
    let scheduler = scheduler(&c.config)?;
    let queue = queue(&c.config).ok_or(MissingEnv(env::RESPONSE_QUEUE_URL))?;
    Ok(Ingest::new(
        c.ports(scheduler, queue),
        c.secrets,
        var(env::SLACK_SIGNING_SECRET_PARAM)?,
    ))
}

/// Reads the signing secret and the settings, side by side, into their
/// caches; failures are only logged: the request that needs what could not
/// be read reads it again, failing closed as every request does (no secret,
/// no settings: 500, nothing accepted or written).
pub async fn warm(ingest: &Ingest) {
    let (secret, settings) = tokio::join!(
        ingest.secrets.get(&ingest.signing_secret_name),
        ingest.ports.settings.current(),
    );
    if let Err(error) = secret {
        tracing::warn!(%error, "signing secret not read ahead; the request reads it again");
    }
    if let Err(error) = settings {
        tracing::warn!(%error, "settings not read ahead; the request reads them again");
    }
}

/// Handles one request with the process's service; one that cannot be built
/// answers 500 (Slack retries), accepting nothing.
pub async fn handle(request: Request) -> Result<Response<Body>, lambda_http::Error> {
    match ingest().await {
        Ok(ingest) => {
            if !WARMING.swap(true, Ordering::Relaxed) {
                // The settings are read beside the signing secret, not after
                // it: the first request waits for the longer read, not both.
                drop(tokio::spawn(warm(ingest)));
            }
            handler::handle(ingest, request).await
        }
        Err(error) => {
            tracing::error!(%error, "ingest unavailable");
            Ok(Response::builder()
                .status(500)
                .header("content-type", "text/plain; charset=utf-8")
                .body(Body::Text("temporarily unavailable".to_owned()))?)
        }
    }
}
