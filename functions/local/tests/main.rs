//! The local mode's integration tests, in one binary: the `myao` command
//! (replay, eval, serve, Socket Mode, doctor, redrive and settings) over its
//! real adapters, with Slack and the LLM as local stubs and AWS as the
//! emulator. Run one module with
//! `bash infra/test.sh -p myao-local --test local serve::`.

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

mod serving;

mod cli;
mod doctor;
mod eval;
mod held;
mod replay;
mod serve;
mod socket;
mod when_to_speak;
