//! Translates between the Function URL's HTTP request and the ingest service.

use lambda_http::{Body, Request, Response};
use myao_core::app::ingest::{Ingest, IngestRequest};

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Handles one request. Infallible: every failure is an HTTP status.
pub async fn handle(
    ingest: &Ingest,
    request: Request,
) -> Result<Response<Body>, lambda_http::Error> {
    // lambda_http has already decoded a base64 body: these are the raw bytes Slack signed.
    let body: &[u8] = request.body().as_ref();
    let answer = ingest
        .handle(IngestRequest {
            timestamp: header(&request, "x-slack-request-timestamp"),
            signature: header(&request, "x-slack-signature"),
            retry_num: header(&request, "x-slack-retry-num"),
            body,
        })
        .await;
    Ok(Response::builder()
        .status(answer.status)
        .header("content-type", answer.content_type)
        .body(Body::Text(answer.body))?)
}
