//! The ingest function: Slack's Events API behind a Lambda Function URL.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    myao_ingest::serve().await
}
