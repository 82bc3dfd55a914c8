#!/usr/bin/env bash
# When-to-speak figures on real chat: `myao eval` on the dev split of the IRC
# disentanglement data (Kummerfeld et al.), converted to a Slack export with
# each annotated conversation as a thread (corpora.sh).
#
#   bash functions/local/benches/eval_irc.sh [myao eval options, e.g. --json]
#
# It needs the data and its converter beside the repository (never copied
# into it); without them it says so and exits 0. The export is written to a
# temporary folder, removed afterwards. Offline (no MYAO_LLM_BASE_URL) the
# rule stage decides alone; with an LLM configured, as for `myao replay`, it
# judges the ambiguous band.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/corpora.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! irc_export "$work/export"; then
    echo "eval_irc: nothing to do."
    exit 0
fi
cd "$corpora_root"
cargo build --release --quiet -p myao-local --bin myao
cargo run --release --quiet -p myao-local --bin myao -- eval "$work/export" "$@"
