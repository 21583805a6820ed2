#!/usr/bin/env bash
# The longer multi-station campaign (docs/fleet.md, "Many stations"): the suite
# "Many stations, one database" (Tests/GrokCLITests/MultiStationTests.swift) with more seeds
# and more rounds per seed: for each seed, ROUNDS database restarts (4 stations x 2
# Grokkers, each at a seeded step, `fast` or `immediate`) on a private cluster, and ROUNDS
# rounds of SIGKILLs (4 stations x 2 Grokkers, each killed at a seeded step) before the
# re-runs; the eight-station run, the outage longer than the window and the fight for the
# same serials run once. After each: the one invariant checker (no step twice, nothing the
# stations reported done missing, no open run, no lock left).
#
#   scripts/stations.sh [SEEDS] [ROUNDS] [FIRST_SEED]   (defaults: 4 seeds, 3 rounds, seed 1)
#
# Needs PostgreSQL's server binaries (scripts/setup.sh --test) and the tests built:
# `swift build --build-tests` (debug; CONFIG=release for `-c release -Xswiftc -enable-testing`).
# Prints the seeds, the time, and how many tests passed and failed; the log is in
# /tmp/grokstations.log.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SEEDS=${1:-4}
ROUNDS=${2:-3}
FIRST=${3:-1}
list=""
for ((i = 0; i < SEEDS; i++)); do
    list+="${list:+,}$(printf '%x' $((FIRST + i)))"
done
config=()
if [ "${CONFIG:-debug}" = release ]; then config=(-c release -Xswiftc -enable-testing); fi
echo "seeds (hex): $list; rounds per seed: $ROUNDS"
start=$(date +%s)
( cd "$ROOT" && GROKCTL_STATIONS_SEEDS=$list GROKCTL_STATIONS_ROUNDS=$ROUNDS \
    swift test "${config[@]}" --skip-build --filter MultiStationTests ) >/tmp/grokstations.log 2>&1
status=$?
end=$(date +%s)
passed=$(grep -cE '^✔ Test "' /tmp/grokstations.log)
failed=$(grep -cE '^✘ Test ".*failed after' /tmp/grokstations.log)
issues=$(grep -c 'recorded an issue' /tmp/grokstations.log)
echo "time: $((end - start)) s; tests passed: $passed, failed: $failed; issues recorded: $issues (exit $status)"
grep -E '^(✔|✘) Test ".*(passed|failed) after' /tmp/grokstations.log | sed 's/^/  /'
exit $status
