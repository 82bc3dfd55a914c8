use lambda_http::{run, service_fn, Error, Request};
use myao_ingest::handler;

#[tokio::main]
async fn main() -> Result<(), Error> {
    myao::telemetry::init(myao::telemetry::lambda_wants_json());
    let ingest = myao::wire::aws::ingest().await?;
    let ingest = &ingest;
    run(service_fn(move |request: Request| {
        handler::handle(ingest, request)
    }))
    .await
}
