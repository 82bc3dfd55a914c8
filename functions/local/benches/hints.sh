#!/usr/bin/env bash
# What three hints change, on real chat: `myao eval` (offline, the rule
# stage alone) over week-long stretches of each channel of both dev corpora
# (corpora.sh), three times: as it is, with a member's thumbs-down on the
# bot's first three unprompted posts of each stretch (`--react=-1`), and
# with a thumbs-up on them (`--react=+1`). The reactions go through ingest
# as Slack's reaction_added would, in time order; the bot's unprompted posts
# of all stretches are summed per level.
#
#   bash functions/local/benches/hints.sh [days per stretch, default 7]
#
# It needs the data and its converters beside the repository (never copied
# into it); without them it says so and exits 0.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/corpora.sh"

days="${1:-7}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! irc_export "$work/irc" || ! slack_export "$work/slack"; then
    echo "hints: nothing to do."
    exit 0
fi
cd "$corpora_root"
cargo build --release --quiet -p myao-local --bin myao
myao="$corpora_root/target/release/myao"

python3 - "$myao" "$days" "$work/irc" "$work/slack" <<'EOF'
import datetime, json, os, subprocess, sys

myao, days, exports = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
levels = ["quiet", "normal", "chatty"]
runs = [("as it is", []), ("3 thumbs-down", ["--react=-1"]), ("3 thumbs-up", ["--react=+1"])]

for export in exports:
    sums = {}
    stretches = 0
    for channel in sorted(os.listdir(export)):
        folder = os.path.join(export, channel)
        if not os.path.isdir(folder):
            continue
        dates = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json"))
        first = datetime.date.fromisoformat(dates[0])
        last = datetime.date.fromisoformat(dates[-1])
        start = first
        while start <= last:
            end = start + datetime.timedelta(days=days - 1)
            stretches += 1
            for name, extra in runs:
                line = [myao, "eval", export, "--channel", channel, "--from", str(start),
                        "--to", str(end), "--memory-interval", "off", "--json"] + extra
                done = subprocess.run(line, capture_output=True, text=True)
                if done.returncode != 0:
                    # A stretch with no message: nothing to count.
                    continue
                total = json.loads(done.stdout)["total"]
                for level in levels:
                    s = sums.setdefault((name, level), [0, 0, 0, 0, 0])
                    t = total[level]
                    s[0] += t["unprompted"]
                    s[1] += t["joined"]
                    s[2] += t["questions"]
                    s[3] += t["hints_positive"]
                    s[4] += t["hints_negative"]
            start = end + datetime.timedelta(days=1)
    print(f"{os.path.basename(export)}: {stretches} stretches of {days} days")
    print(f"  {'':14}" + "".join(f"  {level:>34}" for level in levels))
    for name, _ in runs:
        cells = []
        for level in levels:
            posts, joined, questions, up, down = sums.get((name, level), [0] * 5)
            hints = f" (+{up} -{down})" if up or down else ""
            cells.append(f"{posts} posts, {joined}/{questions} joined{hints}")
        print(f"  {name:14}" + "".join(f"  {c:>34}" for c in cells))
EOF
