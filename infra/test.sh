#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: installs the AWS
# emulator (moto's server, from PyPI) into .venv, starts it on a free
# loopback port, and runs `cargo test --workspace` against it. The emulator
# tests never skip: without MYAO_TEST_AWS_ENDPOINT they fail.
#
# Usage: bash infra/test.sh [extra cargo test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=infra/emulator.sh
source infra/emulator.sh
cargo test --workspace "$@"
