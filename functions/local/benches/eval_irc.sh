#!/usr/bin/env bash
# When-to-speak figures on real chat: `myao eval` on the dev split of the IRC
# disentanglement data (Kummerfeld et al.), converted to a Slack export with
# each annotated conversation as a thread.
#
#   bash functions/local/benches/eval_irc.sh [myao eval options, e.g. --json]
#
# It needs, beside the repository's folder (never copied into it):
#   ../shared/data/irc-disentanglement/dev/*.raw.txt
#   ../shared/tools/irc2slack.py
# Without them it says so and exits 0. The export is written to a temporary
# folder, removed afterwards. Offline (no MYAO_LLM_BASE_URL) the rule stage
# decides alone; with an LLM configured, as for `myao replay`, it judges the
# ambiguous band.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
data="$root/../shared/data/irc-disentanglement/dev"
tool="$root/../shared/tools/irc2slack.py"

if [ ! -d "$data" ] || [ ! -f "$tool" ]; then
    echo "eval_irc: no IRC data beside the repository ($data and $tool); nothing to do."
    exit 0
fi
shopt -s nullglob
logs=("$data"/*.raw.txt)
if [ "${#logs[@]}" -eq 0 ]; then
    echo "eval_irc: no *.raw.txt in $data; nothing to do."
    exit 0
fi
if ! command -v python3 >/dev/null; then
    echo "eval_irc: python3 is needed to convert the logs; nothing done."
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$tool" "$work/export" "${logs[@]}" --threads >&2

cd "$root"
cargo build --release --quiet -p myao-local --bin myao
cargo run --release --quiet -p myao-local --bin myao -- eval "$work/export" "$@"
