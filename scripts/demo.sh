#!/usr/bin/env bash
# The main job, offline: provisions a bench of four out-of-the-box emulated Grokkers
# (sim:0-3) with profiles/bench-us.json from the shipped demo channel (firmware/demo-channel,
# a file:// TUF repository, its root.json beside it) -- region set, firmware updated
# (1.7.3 -> 1.8.0), smoke-tested, recorded in a ledger, summarized.
#
# Installs what is missing (scripts/setup.sh) and builds grokctl in release. Every run
# starts over: the demo directory (default ~/.local/state/grokctl/demo, or
# $GROKCTL_DEMO_DIR) is replaced by a fresh bench whose Grokkers hold the demo scene
# (profiles/scenes/demo.json, the tags the profile's smoke test expects), and a fresh
# ledger and a fresh TUF state directory (trusted metadata, verified images). Extra arguments go to grokctl provision (e.g. --lang de, --json, --dry-run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product grokctl >&2
G=.build/release/grokctl

state="${XDG_STATE_HOME:-$HOME/.local/state}"
case "$state" in /*) ;; *) state="$HOME/.local/state" ;; esac
demo="${GROKCTL_DEMO_DIR:-$state/grokctl/demo}"
if [ -e "$demo" ]; then
  if [ ! -f "$demo/.grokctl-demo" ]; then
    echo "demo: $demo exists and was not made by this script; set GROKCTL_DEMO_DIR to another directory." >&2
    exit 1
  fi
  rm -rf "$demo"
fi
mkdir -p "$demo/bench"
touch "$demo/.grokctl-demo"
for n in 0 1 2 3; do
  mkdir -p "$demo/bench/sim-$n"
  cp profiles/scenes/demo.json "$demo/bench/sim-$n/scene.json"
done

exec "$G" provision --profile profiles/bench-us.json --device sim:0-3 --unattended \
  --bench "$demo/bench" --ledger "$demo/ledger.sqlite" --report "$demo/report.json" \
  --repository firmware/demo-channel --trusted-root firmware/demo-channel/root.json --state "$demo/tuf-state" \
  --station demo-bench "$@"
