//! The judgment function.

use myao_core::env::Function;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    myao_jobs::serve(Function::Judgment, myao_jobs::JUDGMENT).await
}
