#!/usr/bin/env bash
# The cold-start benchmark (docs/performance.md, "Cold starts and size"):
# builds the functions and a hello-world lambda_http binary
# (functions/ingest/examples/hello.rs) with the release profile, in this one
# run, starts the AWS emulator (moto, as infra/test.sh does), and runs
# tests/examples/coldstart.rs over them: each
# binary started fresh under a loopback Lambda Runtime API, init, first and
# warm event, peak RSS, and ingest's ratios to hello's.
#
# Usage: bash infra/coldstart.sh [--runs N] [--warm N]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# Ingest on its own, so that cargo does not unify its dependencies' features
# with the job functions' (it links myao-core and myao-aws, not the job services).
cargo build --release -p myao-ingest --bin myao-ingest --example hello
cargo build --release -p myao-jobs
# The harness itself (a debug build: it only serves the Runtime API).
cargo build -p myao-tests --example coldstart

# shellcheck source=infra/emulator.sh
source infra/emulator.sh
r=target/release
target/debug/examples/coldstart "$@" \
  hello=$r/examples/hello ingest=$r/myao-ingest \
  judgment=$r/myao-judgment response=$r/myao-response memory=$r/myao-memory
