//! The install function: "Add to Slack" on its own Function URL.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    myao_jobs::install::serve().await
}
