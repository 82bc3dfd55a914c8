#!/usr/bin/env bash
# Sourced by the scripts that measure on the dev corpora beside the
# repository (eval_irc.sh, eval_slack.sh, cost.sh), never copied into it:
#   ../shared/data/irc-disentanglement/dev/*.raw.txt, ../shared/tools/irc2slack.py
#   ../shared/data/slack-chats/*.xml, ../shared/tools/slackchats2export.py
# Each function writes a Slack export to its argument and returns 0, or says
# on stderr why it cannot (the corpus or python3 missing) and returns 1.

corpora_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
corpora_shared="$corpora_root/../shared"

# The IRC disentanglement dev split (Kummerfeld et al.), each annotated
# conversation a thread.
irc_export() {
    local out="$1" tool="$corpora_shared/tools/irc2slack.py" logs
    shopt -s nullglob
    logs=("$corpora_shared"/data/irc-disentanglement/dev/*.raw.txt)
    if [ "${#logs[@]}" -eq 0 ] || [ ! -f "$tool" ]; then
        echo "no IRC dev split beside the repository ($corpora_shared/data/irc-disentanglement/dev, $tool)" >&2
        return 1
    fi
    if ! command -v python3 >/dev/null; then
        echo "python3 is needed to convert the IRC logs" >&2
        return 1
    fi
    python3 "$tool" "$out" "${logs[@]}" --threads >&2
}

# The disentangled Slack chats (Chatterjee et al., racket #general), each
# file a channel and each conversation a thread. The converter names a
# channel after the file's folder: one folder per file.
slack_export() {
    local out="$1" tool="$corpora_shared/tools/slackchats2export.py" chats files=() chat name work
    shopt -s nullglob
    chats=("$corpora_shared"/data/slack-chats/*.xml)
    if [ "${#chats[@]}" -eq 0 ] || [ ! -f "$tool" ]; then
        echo "no Slack chats beside the repository ($corpora_shared/data/slack-chats, $tool)" >&2
        return 1
    fi
    if ! command -v python3 >/dev/null; then
        echo "python3 is needed to convert the Slack chats" >&2
        return 1
    fi
    work="$(dirname "$out")/slack-in"
    for chat in "${chats[@]}"; do
        name="$(basename "$chat" .xml)"
        mkdir -p "$work/$name"
        cp "$chat" "$work/$name/"
        files+=("$work/$name/$(basename "$chat")")
    done
    python3 "$tool" "$out" "${files[@]}" >&2
}
