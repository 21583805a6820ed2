#!/usr/bin/env bash
# Captures, with the vendor's own host library, the packets it sends for each API call and
# what it accepted from the device-side test peer, into Tests/VendorInterop/Fixtures/.
#
#   GROKCTL_VENDOR_SDK=/path/to/libugrokitapi.so Tests/VendorInterop/capture-fixtures.sh [BUILD_DIR]
#
# Every session runs in real time (vendorhost paced to the wall clock, grokpeer clocked by
# the host's stream) over FIFOs; the raw event streams of each session are kept under
# BUILD_DIR/capture/ and the fixtures are extracted from them by extract-fixtures.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/.build/vendor-harness}"
: "${GROKCTL_VENDOR_SDK:?GROKCTL_VENDOR_SDK must name the vendor library}"
"$root/scripts/vendor-harness.sh" "$build"
cap="$build/capture"
# CAPTURE_ONLY="name ...": capture again only these sessions, keeping the others
[[ -z "${CAPTURE_ONLY:-}" ]] && rm -rf "$cap"
mkdir -p "$cap"
run() { # run NAME "PEER OPTIONS" STEP...
    local name="$1" peer="$2"; shift 2
    [[ -n "${CAPTURE_ONLY:-}" && " $CAPTURE_ONLY " != *" $name "* ]] && return 0
    rm -rf "${cap:?}/$name"
    echo "capture: $name"
    printf '%s\n' "$peer" > "$cap/$name.peer-options"
    printf '%s\n' "$*" > "$cap/$name.steps"
    "$here/run-pair.sh" "$build" "$cap/$name" "$peer" "$@" || echo "capture: $name: vendorhost exited $?"
}
E1=300833b2ddd9014000000001
E2=300833b2ddd9014000000002
TAGS="--tags $E1:e2801160200074cf0f9a0a37,$E2"
fw="$build/GR-1_1-9-0_harness.ugif"
python3 "$here/make-test-ugif.py" "$fw"

run connect "" connect battery disconnect
run provisioning-mode "" provisioning-mode 1 connect
run no-region-enforcement "" enforce-region 0 connect
run regions "" connect set-region 0 set-region 1 set-region 2 set-region 3 set-region 4 set-region 5 \
    set-region 6 set-region 7 set-region 8 set-region 9 set-region 10 set-region 11 set-region 12 \
    set-region 13 set-region 14 set-region 15 set-region 16 set-region 17 set-region 18 set-region 19 \
    set-region 20 set-region 21
run commands "" connect geiger-sound 1000 20 2.5 10 300 found-item-sound 1500:100,2000:50 \
    found-last-item-sound 1000:200 play-sound 1 diagnostics temperature test-flags 1 2 pause-connection 500 \
    wait 1 battery
run provisioning "" provisioning-mode 1 connect provision-register 0x1122334455667788 4242 6 1 \
    provision-status 2 provision-antenna 3 provision-hw-rev 7 user-has-set-region 0 user-has-set-region 1
run inventory-presets "$TAGS" connect presets inventory 2 1 inventory 2 2 inventory 2 3 inventory 2 4 inventory 2 5
run tag-access "$TAGS" connect inventory-start 1 wait 1 read-tag $E1 3 0 2 4 write-tag $E1 3 0 11112222 \
    lock-tag $E1 0x3 0x2 program-tag $E1 300833b2ddd90140000000ff change-power 20 15 25 inventory-stop
run autoconfig "" autoconfig 12 150
run firmware-update "--new-version 1.9.0" connect firmware-update "$fw" 120 version
run extras "" connect tune-antenna 15 test-connection 40
run bad-crc "--bad-crc-first 2" connect
run no-answer "--ignore-first 3" connect 12 30
run nack "--nack-first 2" connect 12 30
python3 "$here/extract-fixtures.py" "$cap" "$here/Fixtures"
