#!/usr/bin/env bash
# What a cold start executes, in instructions (valgrind's callgrind: counts,
# not seconds, the same however busy the machine is): the ingest function
# and the hello world of infra/coldstart.sh, each built with the release
# profile but its symbols (profile `profiling`), each started with a Lambda
# Runtime API address that refuses, so that it runs its start, fails its
# first request for an event, and exits. Ingest builds its service (the
# SDK's configuration, clients and first connector) at its first event now,
# not beside the init, so that is no longer counted here.
# Prints each total, per thread too (the main thread first), and the
# heaviest parts of ingest's.
#
# Usage: bash infra/initcost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }

cargo build --profile profiling -p myao-ingest --bin myao-ingest --example hello
bin=target/profiling
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Lambda's variables and ingest's own (functions' names are placeholders:
# nothing is called before the first event).
lambda_env=(
  AWS_LAMBDA_RUNTIME_API=127.0.0.1:9 AWS_LAMBDA_FUNCTION_NAME=ingest
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256 AWS_LAMBDA_FUNCTION_VERSION=1
  AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
  AWS_ENDPOINT_URL=http://127.0.0.1:9 AWS_CONFIG_FILE=/nonexistent
  AWS_SHARED_CREDENTIALS_FILE=/nonexistent
  MYAO_SETTINGS_PATH=/myao/initcost/ MYAO_TABLE=myao
  MYAO_SLACK_SIGNING_SECRET_PARAM=/myao/initcost/secrets/slack_signing_secret
  MYAO_SCHEDULE_GROUP=myao MYAO_SCHEDULER_ROLE_ARN=arn:aws:iam::123456789012:role/scheduler
  MYAO_SCHEDULE_DLQ_ARN=arn:aws:sqs:us-east-1:123456789012:schedule-dlq
  MYAO_JUDGMENT_FUNCTION_ARN=arn:aws:lambda:us-east-1:123456789012:function:judgment
  MYAO_RESPONSE_FUNCTION_ARN=arn:aws:lambda:us-east-1:123456789012:function:response
  MYAO_RESPONSE_QUEUE_URL=http://127.0.0.1:9/123456789012/response
  MYAO_MEMORY_QUEUE_URL=http://127.0.0.1:9/123456789012/memory
  MYAO_METRICS_NAMESPACE=myao/initcost
)

count() { # name binary
  env -i "${lambda_env[@]}" valgrind --tool=callgrind \
    --callgrind-out-file="$out/$1.out" "$2" >"$out/$1.log" 2>&1 || true
  if grep -q MissingEnv "$out/$1.log"; then
    echo "$1 stopped for a missing variable:" >&2
    grep MissingEnv "$out/$1.log" >&2
    exit 1
  fi
  # The same start again, counted per thread (the first is the main thread).
  env -i "${lambda_env[@]}" valgrind --tool=callgrind --separate-threads=yes \
    --callgrind-out-file="$out/$1-threads.out" "$2" >/dev/null 2>&1 || true
  local threads=""
  for f in $(ls "$out/$1-threads.out"-* | sort); do
    threads="$threads $(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1}')"
  done
  printf '%-7s %s instructions; per thread:%s\n' "$1" \
    "$(callgrind_annotate "$out/$1.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1}')" "$threads"
}

count hello "$bin/examples/hello"
count ingest "$bin/myao-ingest"
echo
echo "ingest's heaviest parts (inclusive, beyond the start of any process and thread):"
callgrind_annotate --inclusive=yes "$out/ingest.out" 2>/dev/null |
  grep -E '^ *[0-9,]+ ' | grep -v -E '=>|PROGRAM TOTALS|\?\?\?|_start|__libc_start|std::rt::|std::sys::|core::ops::function|clone3?|start_thread|main |tokio::|once.rs|closure}} \[/'  |
  head -12 | cut -c1-150 || true
