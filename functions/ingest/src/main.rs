use lambda_http::{run, service_fn, Error};
use myao_core::env::Function;

#[tokio::main]
async fn main() -> Result<(), Error> {
    myao_core::telemetry::init(myao_core::telemetry::lambda_wants_json());
    // A missing variable still fails the cold start itself.
    myao_aws::wire::check_env(Function::Ingest)?;
    // Nothing else before the runtime asks for the first event (the init
    // ends at that request): the service is built by the first request
    // (`myao_ingest::handle`), not beside the init, where its work would
    // compete with the runtime's.
    run(service_fn(myao_ingest::handle)).await
}
