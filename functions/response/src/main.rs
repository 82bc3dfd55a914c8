use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use myao::env::Function;
use myao_response::handler;
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    myao::telemetry::init(myao::telemetry::lambda_wants_json());
    let services = myao::adapters::aws::wire::services(Function::Response).await?;
    let services = &services;
    run(service_fn(move |event: LambdaEvent<Value>| {
        handler::handle(services, event)
    }))
    .await
}
