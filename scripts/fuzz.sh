#!/usr/bin/env bash
# Builds grokfuzz with libFuzzer and fuzzes one decoder (see docs/fuzzing.md).
#
#   scripts/fuzz.sh [--asan] <target> [seconds] [libFuzzer options...]
#   scripts/fuzz.sh command 120
#   scripts/fuzz.sh --asan response 60 -jobs=2
#
# Targets: see `swift run grokfuzz --list`. The corpus grows in fuzz-corpus/<target>/
# (seeded with valid messages on first use); crashing inputs land in
# fuzz-artifacts/<target>/. Exit status: 0 when no input failed, non-zero otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitizers="fuzzer"
if [ "${1:-}" = "--asan" ]; then
  sanitizers="fuzzer,address"
  shift
fi
if [ $# -lt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 64
fi
target="$1"
shift
seconds="60"
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
fi

# A separate scratch path per sanitizer set: instrumented objects must not mix with
# normal builds.
scratch="${GROKFUZZ_SCRATCH:-$root/.build/fuzz-${sanitizers/,/-}}"
echo "fuzz.sh: building grokfuzz with -sanitize=$sanitizers into $scratch" >&2
swift build -c release --package-path "$root" --scratch-path "$scratch" --product grokfuzz \
  -Xswiftc "-sanitize=$sanitizers" -Xswiftc -DFUZZING \
  -Xswiftc -enable-experimental-feature -Xswiftc Extern >&2
binary="$(swift build -c release --package-path "$root" --scratch-path "$scratch" --show-bin-path)/grokfuzz"

corpus="$root/fuzz-corpus/$target"
artifacts="$root/fuzz-artifacts/$target"
mkdir -p "$corpus" "$artifacts"
echo "fuzz.sh: fuzzing '$target' for ${seconds}s; corpus $corpus" >&2
# Swift's crash backtracer would catch the trap before libFuzzer's handler, and then no
# crashing input would be saved: leave crashes to libFuzzer.
SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}" GROKFUZZ_TARGET="$target" GROKFUZZ_SEED_DIR="$corpus" exec "$binary" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" "$corpus"
