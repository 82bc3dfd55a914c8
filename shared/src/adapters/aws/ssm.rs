//! ssm adapter.
