#!/usr/bin/env bash
# The cold-start benchmark (README, "Lean Lambdas"): builds the functions and
# a hello-world lambda_http binary (functions/ingest/examples/hello.rs) with
# the release profile, in this one run, starts the AWS emulator (moto, as
# infra/test.sh does), and runs tests/examples/coldstart.rs over them: each
# binary started fresh under a loopback Lambda Runtime API, init, first and
# warm event, peak RSS, and ingest's ratios to hello's.
#
# Usage: bash infra/coldstart.sh [--runs N] [--warm N]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# Ingest on its own, so that it is built with its own features (no `jobs`).
cargo build --release -p myao-ingest --bin myao-ingest --example hello
cargo build --release -p myao-jobs
# The harness itself (a debug build: it only serves the Runtime API).
cargo build -p myao-tests --example coldstart

venv=.venv
if [ ! -x "$venv/bin/moto_server" ]; then
  echo "==> installing moto[server] into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]>=5.1,<6'
fi
port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
"$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  if "$venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/')" 2>/dev/null; then
    break
  fi
  sleep 0.2
done

export MYAO_TEST_AWS_ENDPOINT="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
r=target/release
target/debug/examples/coldstart "$@" \
  hello=$r/examples/hello ingest=$r/myao-ingest \
  judgment=$r/myao-judgment response=$r/myao-response memory=$r/myao-memory
