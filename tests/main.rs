//! The integration tests of the core, in one binary: the AWS adapters
//! against the emulator (moto at `MYAO_TEST_AWS_ENDPOINT`), the handlers
//! over local HTTP stubs of Slack and the LLM, and the template's checks.
//! Each module is one subject; run one with
//! `bash infra/test.sh -p myao-tests --test integration conversation::`.

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

mod aws;
mod bedrock;
mod bounded;
mod conversation;
mod deadline;
mod facts;
mod feedback;
mod hints;
mod home;
mod ingest;
mod install;
mod judge;
mod layout;
mod limits;
mod manifests;
mod meaning;
mod memory;
mod metrics;
mod privacy;
mod proactive;
mod question_waits;
mod reactions;
mod real_model;
mod sketches;
mod template;
mod tenants;
