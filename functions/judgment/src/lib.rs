//! The judgment function: runs the jobs its schedules and queue deliver.

pub mod handler;
