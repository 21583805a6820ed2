#!/usr/bin/env bash
# Ten-minute campaigns of foreign audio against the vendor modem's host side: white noise at
# three levels, silence, music-like chords (some holding the request tone and an idle tone),
# Bell 202 and a 3150/5512.5 Hz FSK, and minimodem's own FSK at 300, 1200 and 3675 baud
# (when minimodem is installed: apt-get install minimodem). Each must give no connection.
#
#   scripts/foreign-audio.sh [seconds]     (default 600 per signal)
#
# Runs in a release build, as the test suite does; the suite itself uses 10-30 s per signal.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
swift build -c release -Xswiftc -enable-testing --build-tests
GROKCTL_FOREIGN_AUDIO_SECONDS="$seconds" \
    swift test -c release -Xswiftc -enable-testing --skip-build --filter VendorForeignAudioTests
