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
#   diskfull:state the state directory (ledger, reports, locks) on a 2 MiB tmpfs, filled so
#                  that 0-600 KiB are left (a different amount each trial), then a run; then
#                  the filler is removed and the trial ends as the others do
#   diskfull:bench the same for the bench (the Grokkers' state.json and flash.bin, 272 KiB
#                  each): a 4 MiB tmpfs with 0-1.5 MiB left
#   frozen:TERM    a `grokctl emulate` on FIFOs (through the ALSA file plugin) SIGSTOPped
#                  mid-run, then SIGTERM to the run: it must end within 2 s, exit 130, its
#                  run closed `interrupted` (prints the slowest end, in ms)
#   frozen:stall   the same with no signal and `timeouts.stall_s` 1: the run must end by the
#                  bound (exit 1, `fleet_reader_frozen`), its run closed
#   firmware       power cuts and unplugs at seeded points of a fleet firmware update, in
#                  process (GrokFleetTests' FirmwareChaosTests with GROKCTL_FIRMWARE_CHAOS_SEEDS
#                  = 50 x TRIALS seeds, run only when named: CAMPAIGNS=firmware); each unit must
#                  answer afterwards and be updated by a re-run
# CAMPAIGNS="diskfull:state frozen:TERM" runs only those (default: all; naming any of the
# older campaigns runs them all, and prints the ones named). The diskfull campaigns need a
# mount namespace: the script re-runs itself under `unshare -m` (root) or
# `unshare -rm` (a user namespace) and skips the campaign when neither works.
# After each trial a last run must exit 0, then: the ledger's devices are the Grokkers that
# exist, each change (provision, region, firmware) on each Grokker has exactly one `done`
# record, every run is closed, no intent is open, no temp file is left, `grokctl verify`
# passes.
set -uo pipefail
cd "$(dirname "$0")/.."
# A private mount namespace for the diskfull campaign's tmpfs (nothing leaks to the host).
if [ -z "${CHAOS_IN_NAMESPACE:-}" ]; then
    export CHAOS_IN_NAMESPACE=1
    for flags in -m -rm; do
        if unshare $flags true 2>/dev/null; then exec unshare $flags "$0" "$@"; fi
    done
    CHAOS_IN_NAMESPACE=none
fi
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
    for n in 0 1 2 3; do
        mkdir -p "$W/bench/sim-$n"
        cp "$ROOT/profiles/scenes/demo.json" "$W/bench/sim-$n/scene.json"
    done
    LEDGER=$W/state/grokctl/ledger.sqlite
}

g() { XDG_STATE_HOME=$W/state HOME=$W "$GROKCTL" "$@" --bench "$W/bench" --repository "$ROOT/firmware/demo-channel" \
        --trusted-root "$ROOT/firmware/demo-channel/root.json" --state "$W/tuf-state"; }
provision() { g provision --profile "$PROFILE" --unattended --device "${1:-sim:0-3}" --json; }
# The same in the background, as a process of its own ($! is grokctl itself, not a subshell,
# so the signals below reach it).
provision_bg() {
    ( export XDG_STATE_HOME=$W/state HOME=$W
      exec "$GROKCTL" provision --profile "$PROFILE" --unattended --device "${1:-sim:0-3}" --json --bench "$W/bench" \
          --repository "$ROOT/firmware/demo-channel" --trusted-root "$ROOT/firmware/demo-channel/root.json" --state "$W/tuf-state" ) &
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
    [ "${KEEP:-0}" = 1 ] || rm -rf "$W" 2>/dev/null
    KEEP=0
}

ms_sleep() { sleep "$(printf '0.%03d' "$1")"; }

want() { [ -z "${CAMPAIGNS:-}" ] || [[ " $CAMPAIGNS " == *" $1 "* ]]; }

# A fresh world whose directory $1 (state or bench) is a tmpfs of $2 (size=).
new_small_world() {
    new_world
    mkdir -p "$W/$1"
    mount -t tmpfs -o "size=$2" tmpfs "$W/$1" || return 1
    for n in 0 1 2 3; do
        mkdir -p "$W/bench/sim-$n"
        cp "$ROOT/profiles/scenes/demo.json" "$W/bench/sim-$n/scene.json"
    done
}

ASOUNDRC=$ROOT/Tests/GrokAudioTests/Fixtures/asoundrc
SLOWEST_FROZEN_END=0
# A `grokctl emulate` on FIFOs in $W, a run against it, the emulator frozen after the
# run's second step; $1: TERM (then SIGTERM the run) or stall (stall_s 1, no signal).
frozen_trial() {
    local mode=$1 profile=$PROFILE
    mkfifo "$W/pb" "$W/cp"; mkdir -p "$W/unit"; cp "$ROOT/profiles/scenes/demo.json" "$W/unit/scene.json"
    if [ "$mode" = stall ]; then
        profile=$W/stall.json
        sed 's/"reconnect_s": 20 }/"reconnect_s": 20, "stall_s": 1 }/' "$PROFILE" > "$profile"
    fi
    "$GROKCTL" emulate --state "$W/unit" --input "$W/pb" --output "$W/cp" >/dev/null 2>&1 &
    local emu=$!
    ( export XDG_STATE_HOME=$W/state HOME=$W
      exec "$GROKCTL" --alsa-config "$ASOUNDRC" provision --profile "$profile" --unattended --json \
          --device "alsa:grokbench_host:PLAYBACK=\"$W/pb\",CAPTURE=\"$W/cp\"" --bench "$W/bench" \
          --repository "$ROOT/firmware/demo-channel" --trusted-root "$ROOT/firmware/demo-channel/root.json" --state "$W/tuf-state" ) >"$W/out" 2>/dev/null &
    local pid=$! problems=""
    for _ in $(seq 1000); do [ "$(grep -c step_finished "$W/out" 2>/dev/null)" -ge 2 ] && break; sleep 0.01; done
    kill -STOP $emu
    local t0; t0=$(date +%s%N)
    if [ "$mode" = TERM ]; then sleep 0.3; t0=$(date +%s%N); kill -TERM $pid; fi
    # At most 30 s (the bound is 1-2 s); a run still going then has hung.
    for _ in $(seq 3000); do kill -0 $pid 2>/dev/null || break; sleep 0.01; done
    if kill -0 $pid 2>/dev/null; then problems="$problems hung"; kill -9 $pid; fi
    wait $pid; local status=$?
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ $ms -gt $SLOWEST_FROZEN_END ] && SLOWEST_FROZEN_END=$ms
    kill -9 $emu 2>/dev/null; kill -CONT $emu 2>/dev/null; wait $emu 2>/dev/null
    if [ "$mode" = TERM ]; then
        [ $status = 130 ] || problems="$problems exit-$status"
        [ $ms -lt 2000 ] || problems="$problems took-${ms}ms"
        [ "$(sqlite3 "$LEDGER" "SELECT outcome FROM runs")" = interrupted ] || problems="$problems not-interrupted"
    else
        [ $status = 1 ] || problems="$problems exit-$status"
        grep -q fleet_reader_frozen "$W/out" || problems="$problems no-frozen-code"
    fi
    [ "$(sqlite3 "$LEDGER" "SELECT count(*) FROM runs WHERE ended_at IS NULL")" = 0 ] || problems="$problems open-run"
    local campaign=frozen:$mode
    TRIALS_OF[$campaign]=$(( ${TRIALS_OF[$campaign]:-0} + 1 ))
    if [ -z "$problems" ]; then SURVIVED[$campaign]=$(( ${SURVIVED[$campaign]:-0} + 1 )); rm -rf "$W"
    else LOST[$campaign]="${LOST[$campaign]:-}${problems};"; echo "  $campaign trial in $W:$problems" >&2; fi
}

declare -A TRIALS_OF SURVIVED LOST FIRST_EXIT
STARTED=$(date +%s)
for ((t = 1; t <= TRIALS; t++)); do
    for spec in state:2m:76 bench:4m:192; do
        IFS=: read -r where size steps <<<"$spec"
        want "diskfull:$where" && [ "$CHAOS_IN_NAMESPACE" != none ] || continue
        new_small_world "$where" "$size" || continue
        # Leave 0 to (steps-1)*8 KiB free: the disk fills at a different write each trial.
        free_kib=$(( (RANDOM % steps) * 8 ))
        avail_kib=$(df -k --output=avail "$W/$where" | tail -1 | tr -d ' ')
        fill=$(( avail_kib - free_kib ))
        [ $fill -gt 0 ] && dd if=/dev/zero of="$W/$where/filler" bs=1k count=$fill status=none 2>/dev/null
        provision_bg >/dev/null 2>&1
        pid=$!
        wait $pid; status=$?
        if [ $status -gt 128 ] && [ $status != 130 ]; then LOST[diskfull:$where]="${LOST[diskfull:$where]:-}killed-$status;"; KEEP=1; fi
        FIRST_EXIT[diskfull:$where]="${FIRST_EXIT[diskfull:$where]:-}$status "
        rm -f "$W/$where/filler"
        # The tmpfs goes with the namespace: a failed trial's files are copied out first.
        world=$W survived=${SURVIVED[diskfull:$where]:-0}
        finish_trial "diskfull:$where"
        if [ "${SURVIVED[diskfull:$where]:-0}" = "$survived" ]; then
            cp -a "$world" "$world.kept" 2>/dev/null && echo "  (kept in $world.kept)" >&2
        fi
        umount "$world/$where" 2>/dev/null; rm -rf "$world"
    done
    for mode in TERM stall; do
        if want "frozen:$mode"; then new_world; frozen_trial $mode; fi
    done
    want same2 || want same4 || want disjoint || want kill9 || want change:provision || want sig:TERM || want head || continue
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

if [[ " ${CAMPAIGNS:-} " == *" firmware "* ]]; then
    seeds=$(( ${1:-20} * 50 ))
    if ( cd "$ROOT" && GROKCTL_FIRMWARE_CHAOS_SEEDS=$seeds swift test -c release -Xswiftc -enable-testing --skip-build \
            --filter FirmwareChaosTests >/tmp/grokchaos-firmware.log 2>&1 ); then
        TRIALS_OF[firmware]=$seeds; SURVIVED[firmware]=$seeds
    else
        TRIALS_OF[firmware]=$seeds; SURVIVED[firmware]=$(( seeds - $(grep -c 'recorded an issue with 1 argument' /tmp/grokchaos-firmware.log) ))
        LOST[firmware]="see /tmp/grokchaos-firmware.log;"
    fi
fi

printf '%-18s %7s %9s  %s\n' campaign trials survived lost
for c in same2 same4 disjoint kill9 change:provision change:region change:firmware sig:TERM sig:INT sig:HUP sig:PIPE sig:XFSZ head \
         diskfull:state diskfull:bench frozen:TERM frozen:stall firmware; do
    want "$c" || continue
    printf '%-18s %7s %9s  %s\n' "$c" "${TRIALS_OF[$c]:-0}" "${SURVIVED[$c]:-0}" "${LOST[$c]:-none}"
done
for c in diskfull:state diskfull:bench; do
    [ -n "${FIRST_EXIT[$c]:-}" ] && echo "$c: exit codes of the runs on the full disk: $(echo ${FIRST_EXIT[$c]} | tr ' ' '\n' | sort | uniq -c | awk '{printf "exit %s x%s; ", $2, $1}')"
done
echo "($(( $(date +%s) - STARTED )) s, seed ${2:-1}, $TRIALS trials per campaign; slowest end of a frozen run: ${SLOWEST_FROZEN_END} ms)"
