//! scheduler adapter.
