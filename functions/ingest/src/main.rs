use lambda_http::{run, service_fn, Error};
use myao_core::env::Function;

#[tokio::main]
async fn main() -> Result<(), Error> {
    myao_core::telemetry::init(myao_core::telemetry::lambda_wants_json());
    // A missing variable still fails the cold start itself.
    myao_aws::wire::check_env(Function::Ingest)?;
    // Not awaited: the service is built and its secret and settings read
    // while the runtime asks for the first event (the init ends at that
    // request), on another worker thread.
    tokio::spawn(myao_ingest::start());
    run(service_fn(myao_ingest::handle)).await
}
