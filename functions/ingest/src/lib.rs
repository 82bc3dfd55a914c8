//! The ingest function: Slack's Events API behind a Lambda Function URL.

pub mod handler;

use lambda_http::{Body, Request, Response};
use myao_aws::wire::{common, queue, scheduler, var, MissingEnv};
use myao_core::app::ingest::Ingest;
use myao_core::env::{self, Function};
use tokio::sync::OnceCell;

/// The process's ingest service, built once, by whichever needs it first:
/// [`start`] or the first request.
static INGEST: OnceCell<Ingest> = OnceCell::const_new();

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

/// What a cold start does beside the runtime's first request for an event:
/// builds the service (the SDK's configuration and clients), then reads the
/// signing secret and the settings into their caches, side by side. The
/// first event waits for what is still under way, and for nothing else.
///
/// It fails nothing: an error is logged, and the request that needs what
/// could not be built or read does it again, failing closed as every
/// request does (no secret, no settings: 500, nothing accepted or written).
pub async fn start() {
    match ingest().await {
        Ok(ingest) => warm(ingest).await,
        Err(error) => tracing::error!(%error, "ingest not built at start"),
    }
}

/// Reads the signing secret and the settings, side by side, into their
/// caches; failures are only logged.
pub async fn warm(ingest: &Ingest) {
    let (secret, settings) = tokio::join!(
        ingest.secrets.get(&ingest.signing_secret_name),
        ingest.ports.settings.current(),
    );
    if let Err(error) = secret {
        tracing::warn!(%error, "signing secret not read at start; the first request reads it again");
    }
    if let Err(error) = settings {
        tracing::warn!(%error, "settings not read at start; the first request reads them again");
    }
}

/// Handles one request with the process's service; one that cannot be built
/// answers 500 (Slack retries), accepting nothing.
pub async fn handle(request: Request) -> Result<Response<Body>, lambda_http::Error> {
    match ingest().await {
        Ok(ingest) => handler::handle(ingest, request).await,
        Err(error) => {
            tracing::error!(%error, "ingest unavailable");
            Ok(Response::builder()
                .status(500)
                .header("content-type", "text/plain; charset=utf-8")
                .body(Body::Text("temporarily unavailable".to_owned()))?)
        }
    }
}
