//! The AWS adapters: DynamoDB, EventBridge Scheduler, SQS and SSM.

pub mod dynamodb;
pub mod scheduler;
pub mod sqs;
pub mod ssm;
