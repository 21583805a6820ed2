#!/bin/sh
# Captures one fleet ETA fixture: a real `grokctl provision --json` of one out-of-the-box
# emulated Grokker (sim:0, the demo scene) from the shipped demo channel, paced to the wall
# clock as a real sound card paces it (--realtime), so the events' ISO times are the run's
# true times. Then keeps every 4th firmware_progress (and each image's first and the last),
# so the file stays small; every other event is kept as printed.
#
# Usage, from the checkout after `swift build`:
#   Tests/Fixtures/fleet-eta/capture.sh profiles/bench-us.json Tests/Fixtures/fleet-eta/provision-update.jsonl
#   Tests/Fixtures/fleet-eta/capture.sh Tests/Fixtures/fleet-eta/bench-us-no-firmware.json Tests/Fixtures/fleet-eta/provision-no-update.jsonl
set -eu
profile=$1
out=$2
grokctl=${GROKCTL:-.build/debug/grokctl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bench/sim-0"
cp profiles/scenes/demo.json "$work/bench/sim-0/scene.json"
XDG_STATE_HOME="$work/state" HOME="$work" "$grokctl" provision --profile "$profile" --device sim:0 --unattended \
    --realtime --json --bench "$work/bench" --repository firmware/demo-channel \
    --trusted-root firmware/demo-channel/root.json --state "$work/tuf-state" > "$work/events.jsonl"
python3 - "$work/events.jsonl" "$out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
progress = [i for i, l in enumerate(lines) if '"firmware_progress"' in l]
keep = set(progress[::4]) | ({progress[-1]} if progress else set())
image = None
for i in progress:
    now = json.loads(lines[i])["data"]["image"]
    if now != image: keep.add(i); image = now
with open(sys.argv[2], "w") as f:
    for i, l in enumerate(lines):
        if i not in progress or i in keep: f.write(l + "\n")
PY
