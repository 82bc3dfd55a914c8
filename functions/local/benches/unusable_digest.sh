#!/usr/bin/env bash
# The memory calls a model that never answers the digest in shape costs:
# the example export replayed against a local stand-in model (Python's
# standard library, on a free loopback port) that answers every digest in
# prose, judges nothing worth answering, and writes "ok" as a reply. The
# replay's summary line `LLM calls  memory N` and its count of unusable
# digest answers are the figures (docs/operations.md, the dashboard's
# LlmUnusableAnswers). Measured before the digest backed off, the same
# replay made 372 memory calls; a model that answers in shape makes 22.
#
#   bash functions/local/benches/unusable_digest.sh [export]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export_dir=${1:-functions/local/examples/export}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$port" <<'PY' &
import json, sys, http.server
class Model(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        text = {"memo": "Sure! Here is a summary of the channel: people talked about builds.",
                "judge": '{"should_respond": false, "confidence": 0.9, "reason": "no"}'}.get(body.get("model"), "ok")
        answer = json.dumps({"id": "x", "object": "chat.completion", "model": body.get("model"),
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Model).serve_forever()
PY
model=$!
trap 'kill "$model" 2>/dev/null || true' EXIT
sleep 1

MYAO_LLM_BASE_URL="http://127.0.0.1:$port/v1" MYAO_LLM_API_KEY=stand-in \
  MYAO_JUDGMENT_MODEL=judge MYAO_RESPONSE_MODEL=writer MYAO_MEMORY_MODEL=memo \
  cargo run --quiet -p myao-local --bin myao -- replay "$export_dir" | sed -n '/── summary/,$p'
