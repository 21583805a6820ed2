#!/usr/bin/env bash
# The long chaos campaigns of the fleet engine (docs/ledger.md, "Chaos campaigns"). The
# seeded suite in `swift test` (CLI / Fleet chaos, Intents on the SQLite ledger) runs a few
# trials of each; this runs many, against the built grokctl, and prints a line per campaign:
# trials, survived (every check held), and what was lost.
#
#   scripts/chaos.sh [TRIALS] [SEED]      (defaults: 20 trials, seed 1)
#   GROKCTL=path/to/grokctl scripts/chaos.sh
#
# Campaigns, each trial on a fresh bench of four out-of-the-box emulated Grokkers:
#   same2, same4   2 or 4 processes started together on the same fresh Grokkers
#   disjoint       4 processes, one Grokker each, a new ledger
#   kill9          SIGKILL at a random moment (0-1.5 s), twice, then a run that finishes
#   change:<step>  SIGKILL right after a step changed a Grokker, before its record
#                  (GROKCTL_CHAOS_KILL_AFTER_CHANGE), then a re-run
#   sig:<name>     SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGXFSZ at a random moment
#   head           stdout closed under the run (`| head -c 200`)
# After each trial a last run must exit 0, then: the ledger's devices are the Grokkers that
# exist, each change (provision, region, firmware) on each Grokker has exactly one `done`
# record, every run is closed, no intent is open, no temp file is left, `grokctl verify`
# passes.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
TRIALS=${1:-20}
RANDOM=${2:-1}
GROKCTL=${GROKCTL:-$ROOT/.build/release/grokctl}
[ -x "$GROKCTL" ] || { echo "no grokctl at $GROKCTL: swift build -c release --product grokctl" >&2; exit 64; }
command -v sqlite3 >/dev/null || { echo "chaos.sh needs sqlite3" >&2; exit 64; }
PROFILE=$ROOT/profiles/bench-us.json
VERIFY=$ROOT/profiles/verify-us.json

new_world() {
    W=$(mktemp -d /tmp/grokchaos.XXXXXX)
    cp -r "$ROOT/firmware-cache" "$W/cache"
    for n in 0 1 2 3; do
        mkdir -p "$W/bench/sim-$n"
        cp "$ROOT/profiles/scenes/demo.json" "$W/bench/sim-$n/scene.json"
    done
    LEDGER=$W/state/grokctl/ledger.sqlite
}

g() { XDG_STATE_HOME=$W/state HOME=$W "$GROKCTL" "$@" --bench "$W/bench" --cache "$W/cache" \
        --trusted-keys "$ROOT/profiles/firmware-keys.json"; }
provision() { g provision --profile "$PROFILE" --unattended --device "${1:-sim:0-3}" --json; }
# The same in the background, as a process of its own ($! is grokctl itself, not a subshell,
# so the signals below reach it).
provision_bg() {
    ( export XDG_STATE_HOME=$W/state HOME=$W
      exec "$GROKCTL" provision --profile "$PROFILE" --unattended --device "${1:-sim:0-3}" --json --bench "$W/bench" \
          --cache "$W/cache" --trusted-keys "$ROOT/profiles/firmware-keys.json" ) &
}

# Prints what is wrong with the world, nothing when every check holds.
check() {
    local problems=""
    local serials="" n s
    for n in 0 1 2 3; do
        s=$(sed -n 's/.*"serialNumber" *: *\([0-9]*\).*/\1/p' "$W/bench/sim-$n/state.json" 2>/dev/null)
        serials="$serials $(printf '%08d' "$s")"
    done
    local ledger_devices
    ledger_devices=$(sqlite3 "$LEDGER" "SELECT serial FROM devices ORDER BY serial" | tr '\n' ' ')
    [ "$(echo $serials | tr ' ' '\n' | sort | tr '\n' ' ')" = "$ledger_devices" ] \
        || problems="$problems devices[$ledger_devices vs$serials]"
    local bad
    bad=$(sqlite3 "$LEDGER" "WITH d(serial) AS (SELECT serial FROM devices), s(step) AS (VALUES ('provision'), ('region'), ('firmware'))
        SELECT d.serial || ':' || s.step || '=' || (SELECT count(*) FROM steps t WHERE t.serial = d.serial AND t.step = s.step AND t.result = 'done')
        FROM d, s WHERE (SELECT count(*) FROM steps t WHERE t.serial = d.serial AND t.step = s.step AND t.result = 'done') <> 1")
    [ -z "$bad" ] || problems="$problems authors[$bad]"
    [ "$(sqlite3 "$LEDGER" "SELECT count(*) FROM runs WHERE ended_at IS NULL")" = 0 ] || problems="$problems open-runs"
    [ "$(sqlite3 "$LEDGER" "SELECT count(*) FROM intents WHERE outcome IS NULL")" = 0 ] || problems="$problems open-intents"
    [ -z "$(find "$W/bench" -name '*.tmp-*' -o -name '*.factory-*')" ] || problems="$problems temp-files"
    g verify --profile "$VERIFY" --device sim:0-3 >/dev/null 2>&1 || problems="$problems verify"
    echo "$problems"
}

# Ends a trial: a last run, the checks; counts the result for campaign $1.
finish_trial() {
    local campaign=$1
    provision >/dev/null 2>&1
    local last=$?
    local problems
    problems=$(check)
    [ $last = 0 ] || problems="$problems last-run-exit-$last"
    TRIALS_OF[$campaign]=$(( ${TRIALS_OF[$campaign]:-0} + 1 ))
    if [ -z "$problems" ]; then
        SURVIVED[$campaign]=$(( ${SURVIVED[$campaign]:-0} + 1 ))
    else
        LOST[$campaign]="${LOST[$campaign]:-}${problems};"
        echo "  $campaign trial in $W:$problems" >&2
        KEEP=1
    fi
    [ "${KEEP:-0}" = 1 ] || rm -rf "$W"
    KEEP=0
}

ms_sleep() { sleep "$(printf '0.%03d' "$1")"; }

declare -A TRIALS_OF SURVIVED LOST
STARTED=$(date +%s)
for ((t = 1; t <= TRIALS; t++)); do
    for k in 2 4; do
        new_world
        for ((p = 0; p < k; p++)); do provision_bg >/dev/null 2>&1; done
        wait
        finish_trial "same$k"
    done

    new_world
    for n in 0 1 2 3; do provision_bg "sim:$n" >/dev/null 2>&1; done
    wait
    finish_trial disjoint

    new_world
    for kill in 1 2; do
        provision_bg >/dev/null 2>&1
        pid=$!
        ms_sleep $(( RANDOM % 1000 )); sleep $(( RANDOM % 2 ))
        kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    done
    finish_trial kill9

    for step in provision region firmware; do
        new_world
        GROKCTL_CHAOS_KILL_AFTER_CHANGE=$step provision "sim:$(( RANDOM % 4 ))" >/dev/null 2>&1
        finish_trial "change:$step"
    done

    for sig in TERM INT HUP PIPE XFSZ; do
        new_world
        provision_bg >"$W/out" 2>/dev/null
        pid=$!
        # Once the run is under way (its first finished step), then 0-1 s later.
        for _ in $(seq 500); do grep -q step_finished "$W/out" 2>/dev/null && break; sleep 0.01; done
        ms_sleep $(( RANDOM % 1000 ))
        kill -s $sig $pid 2>/dev/null
        wait $pid; status=$?
        # Ended by the signal's default action: not clean.
        if [ $status -gt 128 ] && [ $status != 130 ]; then LOST[sig:$sig]="${LOST[sig:$sig]:-}killed-$status;"; KEEP=1; fi
        finish_trial "sig:$sig"
    done

    new_world
    provision | head -c 200 >/dev/null
    status=${PIPESTATUS[0]}
    if [ $status -gt 128 ] && [ $status != 130 ]; then LOST[head]="${LOST[head]:-}killed-$status;"; KEEP=1; fi
    finish_trial head
done

printf '%-18s %7s %9s  %s\n' campaign trials survived lost
for c in same2 same4 disjoint kill9 change:provision change:region change:firmware sig:TERM sig:INT sig:HUP sig:PIPE sig:XFSZ head; do
    printf '%-18s %7s %9s  %s\n' "$c" "${TRIALS_OF[$c]:-0}" "${SURVIVED[$c]:-0}" "${LOST[$c]:-none}"
done
echo "($(( $(date +%s) - STARTED )) s, seed ${2:-1}, $TRIALS trials per campaign)"
