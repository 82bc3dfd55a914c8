#!/usr/bin/env bash
# The LLM's cost on real chat: the cost benchmark (benches/cost.rs) on the
# two dev corpora beside the repository, converted as the eval scripts do
# (corpora.sh). A corpus that is missing is said and skipped. The exports
# are written to a temporary folder, removed afterwards.
#
#   bash functions/local/benches/cost.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/corpora.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
exports=()
if irc_export "$work/irc"; then exports+=("$work/irc"); else echo "cost: IRC skipped" >&2; fi
if slack_export "$work/slack"; then exports+=("$work/slack"); else echo "cost: Slack skipped" >&2; fi

cd "$corpora_root"
for export in "${exports[@]}"; do
    cargo bench --quiet -p myao-local --bench cost -- "$export"
done
