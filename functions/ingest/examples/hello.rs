//! A hello-world `lambda_http` function: the yardstick of the cold-start
//! benchmark (`infra/coldstart.sh`), built with the same profile as the
//! functions and answering the same Function URL events.

use lambda_http::{run, service_fn, Body, Error, Request, Response};

#[tokio::main]
async fn main() -> Result<(), Error> {
    run(service_fn(|_request: Request| async {
        Ok::<_, Error>(Response::new(Body::Text("hello".to_owned())))
    }))
    .await
}
