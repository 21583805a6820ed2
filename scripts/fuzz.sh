#!/usr/bin/env bash
# Builds grokfuzz with libFuzzer and fuzzes one decoder (see docs/fuzzing.md).
#
#   scripts/fuzz.sh [--asan] <target> [seconds] [libFuzzer options...]
#   scripts/fuzz.sh [--asan] --all [seconds] [libFuzzer options...]   every target in turn
#   scripts/fuzz.sh packet 120
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
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
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

fuzz_one() { # fuzz_one TARGET [libFuzzer options...]
  local name="$1"
  shift
  local corpus="$root/fuzz-corpus/$name"
  local artifacts="$root/fuzz-artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz.sh: fuzzing '$name' for ${seconds}s; corpus $corpus" >&2
  # Swift's crash backtracer would catch the trap before libFuzzer's handler, and then no
  # crashing input would be saved: leave crashes to libFuzzer.
  SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}" GROKFUZZ_TARGET="$name" GROKFUZZ_SEED_DIR="$corpus" "$binary" \
    -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" "$corpus"
}

if [ "$target" != "--all" ]; then
  fuzz_one "$target" "$@"
  exit $?
fi
# Every target: the names from the binary itself (an unknown target lists them).
names="$( (GROKFUZZ_TARGET=--list "$binary" -runs=0 2>&1 || true) | sed -n 's/.*choose one of: \(.*\)\./\1/p' | tr -d ',')"
[ -n "$names" ] || { echo "fuzz.sh: could not list the targets" >&2; exit 1; }
failed=()
for name in $names; do
  log="$root/fuzz-artifacts/$name.log"
  mkdir -p "$root/fuzz-artifacts"
  if fuzz_one "$name" "$@" >"$log" 2>&1; then status=ok; else status=FAILED; failed+=("$name"); fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1)"
  echo "fuzz.sh: $name: $status, ${runs:-?} runs in ${seconds}s, ${cov:-cov: ?} (log $log)"
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz.sh: failed: ${failed[*]}" >&2; exit 1; }
