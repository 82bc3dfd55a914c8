//! In-process twins.
