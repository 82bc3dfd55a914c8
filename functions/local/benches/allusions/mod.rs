//! The recall-by-meaning benchmark's cases (`benches/meaning.rs`).
pub mod cases;
pub mod cues;
pub mod set_a;
pub mod set_b;
