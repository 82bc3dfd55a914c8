//! Application services.
