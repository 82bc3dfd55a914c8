//! The install function: "Add to Slack" on its own Function URL.

use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    myao_core::telemetry::init(myao_core::telemetry::lambda_wants_json());
    let installer = myao_wire::aws::installer().await?;
    let installer = &installer;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        Ok::<_, Error>(myao_jobs::install::answer(installer, &event.payload).await)
    }))
    .await
}
