#!/usr/bin/env bash
# When-to-speak figures on real Slack chat: `myao eval` on the disentangled
# Slack chats of Chatterjee et al. (racket #general, 2017 and 2019),
# converted to a Slack export, each file a channel and each conversation a
# thread.
#
#   bash functions/local/benches/eval_slack.sh [myao eval options, e.g. --json]
#
# It needs, beside the repository's folder (never copied into it):
#   ../shared/data/slack-chats/*.xml
#   ../shared/tools/slackchats2export.py
# Without them it says so and exits 0. The export is written to a temporary
# folder, removed afterwards. Offline (no MYAO_LLM_BASE_URL) the rule stage
# decides alone; with an LLM configured, as for `myao replay`, it judges the
# ambiguous band.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
data="$root/../shared/data/slack-chats"
tool="$root/../shared/tools/slackchats2export.py"

if [ ! -d "$data" ] || [ ! -f "$tool" ]; then
    echo "eval_slack: no Slack chats beside the repository ($data and $tool); nothing to do."
    exit 0
fi
shopt -s nullglob
chats=("$data"/*.xml)
if [ "${#chats[@]}" -eq 0 ]; then
    echo "eval_slack: no *.xml in $data; nothing to do."
    exit 0
fi
if ! command -v python3 >/dev/null; then
    echo "eval_slack: python3 is needed to convert the chats; nothing done."
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The converter names a channel after the file's folder: one folder per
# file, so that each file is a channel of its own.
files=()
for chat in "${chats[@]}"; do
    name="$(basename "$chat" .xml)"
    mkdir -p "$work/in/$name"
    cp "$chat" "$work/in/$name/"
    files+=("$work/in/$name/$(basename "$chat")")
done
python3 "$tool" "$work/export" "${files[@]}" >&2

cd "$root"
cargo build --release --quiet -p myao-local --bin myao
cargo run --release --quiet -p myao-local --bin myao -- eval "$work/export" "$@"
