//! The memory function.

use myao_core::env::Function;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    myao_jobs::serve(Function::Memory, myao_jobs::MEMORY).await
}
