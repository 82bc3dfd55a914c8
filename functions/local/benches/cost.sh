#!/usr/bin/env bash
# The LLM's cost on real chat: the cost benchmark (benches/cost.rs) on the
# two dev corpora beside the repository, each converted to a Slack export
# as the eval scripts do: the IRC disentanglement dev split (each annotated
# conversation a thread) and the Slack chats (each file a channel, each
# conversation a thread).
#
#   bash functions/local/benches/cost.sh
#
# It needs, beside the repository's folder (never copied into it):
#   ../shared/data/irc-disentanglement/dev/*.raw.txt, ../shared/tools/irc2slack.py
#   ../shared/data/slack-chats/*.xml, ../shared/tools/slackchats2export.py
# A corpus that is missing is said and skipped. The exports are written to
# a temporary folder, removed afterwards.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
shared="$root/../shared"

if ! command -v python3 >/dev/null; then
    echo "cost: python3 is needed to convert the corpora; nothing done."
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
shopt -s nullglob
exports=()

logs=("$shared"/data/irc-disentanglement/dev/*.raw.txt)
if [ "${#logs[@]}" -gt 0 ] && [ -f "$shared/tools/irc2slack.py" ]; then
    python3 "$shared/tools/irc2slack.py" "$work/irc" "${logs[@]}" --threads >&2
    exports+=("$work/irc")
else
    echo "cost: no IRC dev split beside the repository; skipped." >&2
fi

chats=("$shared"/data/slack-chats/*.xml)
if [ "${#chats[@]}" -gt 0 ] && [ -f "$shared/tools/slackchats2export.py" ]; then
    files=()
    for chat in "${chats[@]}"; do
        name="$(basename "$chat" .xml)"
        mkdir -p "$work/in/$name"
        cp "$chat" "$work/in/$name/"
        files+=("$work/in/$name/$(basename "$chat")")
    done
    python3 "$shared/tools/slackchats2export.py" "$work/slack" "${files[@]}" >&2
    exports+=("$work/slack")
else
    echo "cost: no Slack chats beside the repository; skipped." >&2
fi

cd "$root"
for export in "${exports[@]}"; do
    cargo bench --quiet -p myao-local --bench cost -- "$export"
done
