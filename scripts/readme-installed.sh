#!/usr/bin/env bash
# Runs the README's commands from an installed copy, in another folder, as a technician
# would: grokctl is installed into a fresh prefix (scripts/setup.sh --install), then every
# command of the README's "grokctl", "Firmware" and "Fleet" sections that needs no hardware,
# no network and no keys runs from an empty folder with a fresh HOME, and each must end with
# the exit code the README gives it. Too slow for the test suite (it flashes and provisions
# emulated Grokkers); run it before a release:
#
#   GROKCTL_BIN_DIR=$PWD/.build/release bash scripts/readme-installed.sh
#
# GROKCTL_BIN_DIR names a built bin directory (default .build/release). Prints each command
# and its exit code; exits 1 at the first command that ends otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${GROKCTL_BIN_DIR:-$root/.build/release}"
[ -x "$bin/grokctl" ] || { echo "readme-installed: no grokctl in $bin; build it first." >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/elsewhere"
HOME="$work/home" GROKCTL_BIN_DIR="$bin" bash "$root/scripts/setup.sh" --install "$work/prefix" 2>/dev/null

export HOME="$work/home" LANG=C.UTF-8 LC_ALL= LANGUAGE=
unset XDG_CONFIG_HOME XDG_STATE_HOME GROKCTL_DATA_DIR GROKCTL_BENCH GROKCTL_LEDGER GROKCTL_REPOSITORY GROKCTL_TRUSTED_ROOT || true
cd "$work/elsewhere"
G="$work/prefix/bin/grokctl"
R="--repository demo"

# run EXPECTED... -- COMMAND...: runs it (output to a log), fails unless it ends with one of EXPECTED.
run() {
  local expected=()
  while [ "$1" != "--" ]; do expected+=("$1"); shift; done
  shift
  local status=0
  "$@" >"$work/out" 2>&1 </dev/null || status=$?
  printf '%3d  %s\n' "$status" "$*" | sed "s|$work|\$WORK|g"
  for code in "${expected[@]}"; do [ "$status" -eq "$code" ] && return 0; done
  echo "readme-installed: expected exit ${expected[*]}, got $status:" >&2
  sed "s|^|    |" "$work/out" >&2
  exit 1
}

# grokctl
run 0 -- $G --help
run 0 -- $G devices
run 0 -- $G bench unplug --device sim:3
run 0 -- $G bench plug --device sim:3
run 0 -- $G info --device sim:0-3
run 0 -- $G region list
run 0 -- $G region set etsi --device sim:0-3
run 0 -- $G inventory --device sim:0-3 --duration 3
run 0 -- $G paths
run 0 -- $G completions bash
run 0 -- $G man firmware flash

# Firmware
run 0 -- $G firmware list $R --device sim:0-3
run 0 100 -- $G firmware check $R --device sim:0-3
run 0 -- $G firmware download $R --all
run 0 -- $G firmware verify firmware/demo/GR-1_1-8-0_demo.ugif $R
run 0 -- $G firmware verify "$work/prefix/share/grokctl/firmware/demo-channel/targets/release/"*.ugif $R
run 0 -- $G firmware flash $R --device sim:0-3
run 0 -- $G firmware flash --device sim:0 --package firmware/demo/GR-1_1-8-0_demo.ugif $R --json
run 0 -- $G region set etsi --device sim:0 $R
cat >fw.json <<'JSON'
{"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
 "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}], "notes": {"en": "Fleet release."}}
JSON
run 0 -- $G firmware pack --hex firmware/demo/grokker-app-1.8.0.hex --loader firmware/demo/grokker-loader-1.0.0.hex \
    --base 0x08007000 --reader-bytes 61440 --description fw.json --output GR-1_1-8-0_fleet.ugif --custom-output custom.json

# Fleet
run 0 -- $G provision --profile profiles/bench-us.json --device sim:0-3 $R
run 0 -- $G provision --profile profiles/bench-us.json --device sim:0-3 --dry-run $R
run 0 -- $G region set etsi --device sim:4-11
# In the profile's night window (or at a weekend) the selected units are updated (0); outside
# it they are postponed (2).
run 0 2 -- $G rollout --profile profiles/rollout-eu-night.json --device sim:4-11 $R
run 0 -- $G verify --profile profiles/verify-us.json --device sim:0-3 $R
run 0 -- $G ledger show
run 0 -- $G ledger export --csv --output steps.csv

# The station's settings instead of $R.
run 0 -- $G station init --repository demo --name bench-3
run 0 -- $G firmware list --device sim:0
echo "readme-installed: every README command ran as the README says, from $work/elsewhere." | sed "s|$work|\$WORK|g"
