#!/usr/bin/env bash
# The main job on the built-in emulated bench: installs what is missing, builds grokctl, and
# connects to four emulated Grokkers. Extra arguments go to grokctl (e.g. --lang de, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product grokctl >&2
exec .build/release/grokctl info --device sim:0-3 "$@"
