#!/usr/bin/env bash
# Interop test against the vendor's host library: builds the harness, then runs the vendor
# host in real time against the device-side test peer and checks what the library reports.
#
#   GROKCTL_VENDOR_SDK=/path/to/libugrokitapi.so Tests/VendorInterop/interop-test.sh [BUILD_DIR]
#
# Without GROKCTL_VENDOR_SDK (or with one that is not a readable library) it prints why and
# exits 0 with "skipped". Ends with the line "N passed, N failed".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/.build/vendor-harness}"
out="$("$root/scripts/vendor-harness.sh" "$build")" || { echo "$out"; echo "0 passed, 1 failed"; exit 1; }
echo "$out"
if [[ "$out" == *skipped* ]]; then
    echo "interop-test: skipped (0 passed, 0 failed)"
    exit 0
fi
work="$build/interop-test"
rm -rf "$work"
mkdir -p "$work"
passed=0 failed=0
check() { # check NAME FILE PATTERN...: every extended regex must match a line of FILE
    local name="$1" file="$2"; shift 2
    local p
    for p in "$@"; do
        if ! grep -Eq -- "$p" "$file"; then
            echo "FAIL $name: no line of $file matches: $p"
            failed=$((failed + 1))
            return
        fi
    done
    echo "PASS $name"
    passed=$((passed + 1))
}
check_count() { # check_count NAME FILE PATTERN N: at least N lines of FILE match
    local name="$1" file="$2" pattern="$3" want="$4" got
    got="$(grep -Ec -- "$pattern" "$file")"
    if ((got >= want)); then
        echo "PASS $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name: $got lines of $file match $pattern, want $want"
        failed=$((failed + 1))
    fi
}
pair() { # pair NAME "PEER OPTIONS" STEP...
    local name="$1" peer="$2"; shift 2
    "$here/run-pair.sh" "$build" "$work/$name" "$peer" "$@" > "$work/$name.out" 2>&1
}

# 1. The answer tone for each samples-per-bit setting, to a 3150 Hz request tone.
"$build/tonemeter" generate 3150 3 > "$work/request-3150.raw"
declare -A answer=([8]=126 [10]=11[45] [12]=140 [16]=105 [20]=90 [24]=7[89] [36]=6[67] [48]=4[34] [72]=3[34])
for spb in 8 10 12 16 20 24 36 48 72; do
    "$build/vendorhost" --sdk "$GROKCTL_VENDOR_SDK" --pcm-in "$work/request-3150.raw" \
        --pcm-out "$work/answer-$spb.raw" --events "$work/answer-$spb.jsonl" connect "$spb" 2 > /dev/null 2>&1
    "$build/tonemeter" measure "$work/answer-$spb.raw" > "$work/answer-$spb.tones"
    check "handshake answer tone at $spb samples per bit" "$work/answer-$spb.tones" \
        "\"window\":4,.*\"changes\":${answer[$spb]},"
done

E1=300833b2ddd9014000000001 E2=300833b2ddd9014000000002 E3=e20034120000000000000abc
pair basic "--tags $E1,$E2,$E3" connect battery set-region 1 inventory 3 1 expect-tags 3
check "the vendor host connects and reads the version" "$work/basic/host.jsonl" \
    '"event":"connection".*"name":"CONNECTED"' \
    '"event":"version".*"protocol":20,"hardware_type":5,"hardware_revision":6,"major":1,"minor":8,"build":0,"serial":1234567'
check "the vendor host reads the battery" "$work/basic/host.jsonl" '"event":"battery".*"percent":87,"millivolts":3900'
check "the vendor host sets a region" "$work/basic/host.jsonl" '"event":"region_set".*"index":1,.*"result":0'
check "an inventory reports each tag the reader sent" "$work/basic/host.jsonl" \
    "\"event\":\"tag\".*\"first_find\":true.*\"epc\":\"$E1\"" "\"event\":\"tag\".*\"first_find\":true.*\"epc\":\"$E2\"" \
    "\"event\":\"tag\".*\"first_find\":true.*\"epc\":\"$E3\"" '"step":"expect-tags","want":3,"got":3,"ok":true'

VENDORHOST_OPTS="--rate 48000" pair rate48k "--rate 48000" connect 12 5 battery
check "the 48 kHz handshake (rate tone, then the reader at 2666.67 Hz) connects" "$work/rate48k/host.jsonl" \
    '"text":"HandshakePhase1Callback, moving to phase 1A, sending HandshakeResponse for 48000 samples/second"' \
    '"event":"connection".*"name":"CONNECTED"' '"event":"battery".*"percent":87'

pair access "--tags $E1" connect inventory-start 1 wait 1 read-tag $E1 3 0 2 4 write-tag $E1 3 0 11112222 \
    lock-tag $E1 0x3 0x2 program-tag $E1 300833b2ddd90140000000ff inventory-stop
check "tag access completes with the reader's result codes" "$work/access/host.jsonl" \
    "\"event\":\"tag_read\".*\"epc\":\"$E1\",\"data\":\"a0a1a2a3a4a5a6a7\",\"result\":0" \
    "\"event\":\"tag_accessed\".*\"epc\":\"$E1\",\"result\":0" \
    "\"event\":\"tag_programmed\".*\"new_epc\":\"300833b2ddd90140000000ff\",\"result\":0" \
    '"event":"inventory_stopped"'
check_count "write and lock both report the reader's result" "$work/access/host.jsonl" \
    "\"event\":\"tag_accessed\".*\"epc\":\"$E1\",\"result\":0" 2

pair autoconfig "" autoconfig 12 150
check "AutoConfig's echo tests pass and keep the fastest setting" "$work/autoconfig/host.jsonl" \
    '"event":"autoconfig_completed".*"success":true,"audio_params":\[8,44100'

python3 "$here/make-test-ugif.py" "$work/GR-1_1-9-0_harness.ugif"
pair firmware "--new-version 1.9.0" connect firmware-update "$work/GR-1_1-9-0_harness.ugif" 120 version
check "the vendor firmware update completes and the reader comes back on the new version" \
    "$work/firmware/host.jsonl" '"event":"firmware_completed".*"result":0' \
    '"event":"version".*"major":1,"minor":9,"build":0'

pair badcrc "--bad-crc-first 2" connect
check "answers with a bad crc8 are dropped and the request retried with the retry bit" "$work/badcrc/host.jsonl" \
    '"event":"tx".*"bytes":"c0050614e80302df"' '"event":"connection".*"name":"CONNECTED"'

VENDORHOST_OPTS="--record-rx $work/rx.raw" pair record "" connect battery battery battery wait 0.3
# what the live host decoded is what its receive path must decode again from the recording
hexed="$(grep '"event":"rx"' "$work/record/host.jsonl" | grep -o '"bytes":"[0-9a-f]*"' | sed 's/"bytes":"//; s/"$//' | tr -d '\n')"
"$build/vendorhost" demod --sdk "$GROKCTL_VENDOR_SDK" --pcm-in "$work/rx.raw" --spb 12 \
    --expect-bytes $((${#hexed} / 2)) > "$work/demod.json" 2> /dev/null
check "the vendor's receive path decodes a recording offline, every byte the live host did" "$work/demod.json" \
    '"bytes_received":[1-9][0-9]' '"complete":true'

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
