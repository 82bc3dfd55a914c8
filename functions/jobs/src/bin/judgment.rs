//! The judgment function.

use myao::env::Function;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    myao_jobs::serve(Function::Judgment, myao_jobs::JUDGMENT).await
}
