#!/usr/bin/env bash
# An app outside the tree, as issue 25 asks: a package in a temporary directory that depends
# on this repository's `UGrokIt` product by path (as an app would), whose sources are the
# README's library snippet and each example under Examples/ (copied now, never kept in the
# repository), each importing only UGrokIt. It is built, then each program is run against an
# emulated Grokker (`grokctl emulate` on two FIFOs, with the guide's tags in its field), as
# the examples' READMEs say. CI runs it after the test suite (.ci/run).
#
#   bash scripts/outside-app.sh            # build and run everything
#   GROKCTL=path/to/grokctl bash scripts/outside-app.sh
#
# What is changed on the way, and why (nothing else is):
# - an example's `import ExampleBench` line is dropped: the in-tree bench builds its Grokker
#   from GrokkerEmulator, which is no product. Here `ExampleBench.reader()` comes from
#   Bench.swift, written below with `import UGrokIt` alone: the FIFOs `grokctl emulate`
#   serves, or a sound card named as the first argument, as in the tree.
# - the snippet's `ALSAPort(device: "hw:1,0")` also takes the device and ALSA configuration
#   from the environment, so the run goes through libasound's file plugin to the emulated
#   Grokker (Tests/GrokAudioTests/Fixtures/asoundrc) instead of a sound card CI lacks.
#
# The build's scratch directory is kept in .build/outside-app, so a second run recompiles
# only what changed (SwiftPM's own incremental build; the package itself is made afresh).
# grokctl is $GROKCTL, else the one `scripts/test.sh` built (.build/release), else a debug
# one, built when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${OUTSIDE_APP_SCRATCH:-$root/.build/outside-app}"
work="$(mktemp -d "${TMPDIR:-/tmp}/grokctl-outside-app.XXXXXX")"
emulator=""
cleanup() {
    if [[ -n "$emulator" ]]; then kill "$emulator" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
started=$SECONDS
say() { printf 'outside-app: %s\n' "$*"; }

# MARK: The package

app="$work/app"
examples=()
for dir in "$root"/Examples/*/; do
    name="$(basename "$dir")"
    [[ "$name" == ExampleBench ]] && continue
    examples+=("$name")
done
(( ${#examples[@]} >= 4 )) || { say "expected at least 4 examples under Examples/, found ${#examples[@]}"; exit 1; }

# The README's library snippet: the first swift block after "## The library".
mkdir -p "$app/Sources/ReadmeSnippet"
awk '/^## The library/ { inside = 1; next }
     inside && /^```swift/ { grab = 1; next }
     grab && /^```/ { exit }
     grab { print }' "$root/README.md" > "$app/Sources/ReadmeSnippet/main.swift"
device='ALSAPort(device: "hw:1,0")'
grep -qF "$device" "$app/Sources/ReadmeSnippet/main.swift" \
    || { say "README.md's library snippet no longer opens $device: update this script"; exit 1; }
sed -i "s|ALSAPort(device: \"hw:1,0\")|ALSAPort(device: ProcessInfo.processInfo.environment[\"OUTSIDE_APP_ALSA_DEVICE\"] ?? \"hw:1,0\", configFile: ProcessInfo.processInfo.environment[\"OUTSIDE_APP_ALSA_CONFIG\"])|" \
    "$app/Sources/ReadmeSnippet/main.swift"

for name in "${examples[@]}"; do
    mkdir -p "$app/Sources/$name"
    grep -v '^import ExampleBench$' "$root/Examples/$name/main.swift" > "$app/Sources/$name/main.swift"
    cat > "$app/Sources/$name/Bench.swift" <<'SWIFT'
// Written by scripts/outside-app.sh: the Grokker an example drives, from UGrokIt alone. A
// sound card's ALSA name as the first argument: a real Grokker on it. Otherwise the emulated
// Grokker `grokctl emulate` serves on the FIFOs OUTSIDE_APP_PIPES names (the host's capture,
// then its playback), paced to the wall clock like real hardware.
import UGrokIt

enum ExampleBench {
    static func reader() throws -> Reader {
        var options = ReaderOptions()
        if let device = CommandLine.arguments.dropFirst().first {
            return Reader(name: "alsa:\(device)", options: options) { try ALSAPort(device: device) }
        }
        let pipes = (ProcessInfo.processInfo.environment["OUTSIDE_APP_PIPES"] ?? "").split(separator: ",").map(String.init)
        guard pipes.count == 2 else {
            throw ReaderError.invalidArgument(field: "OUTSIDE_APP_PIPES", value: pipes.joined(separator: ","),
                                              allowed: "CAPTURE,PLAYBACK: the FIFOs grokctl emulate serves")
        }
        options.realtime = true
        return Reader(name: "pcm:\(pipes[0])", options: options) {
            try RawPipePort(inputPath: pipes[0], outputPath: pipes[1], opensOutputFirst: true)
        }
    }
}
SWIFT
done

# The dependency's identity is its directory's name (SwiftPM names a path dependency so).
identity="$(basename "$root" | tr '[:upper:]' '[:lower:]')"
{
    echo '// swift-tools-version: 6.0'
    echo '// Made by scripts/outside-app.sh: an app that depends on the UGrokIt product by path.'
    echo 'import PackageDescription'
    echo
    echo 'let package = Package('
    echo '    name: "outside-app",'
    echo "    dependencies: [.package(path: \"$root\")],"
    echo '    targets: ['
    for name in ReadmeSnippet "${examples[@]}"; do
        echo "        .executableTarget(name: \"$name\", dependencies: [.product(name: \"UGrokIt\", package: \"$identity\")],"
        echo '                          swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]),'
    done
    echo '    ],'
    echo '    swiftLanguageModes: [.v6]'
    echo ')'
} > "$app/Package.swift"

# Only UGrokIt (and the system's Foundation and Dispatch) is imported anywhere.
if grep -rhE '^(@[a-z_]+ )?import ' "$app/Sources" | grep -vqE '^import (UGrokIt|Foundation|Dispatch)$'; then
    say "a source imports more than UGrokIt:"
    grep -rnE '^(@[a-z_]+ )?import ' "$app/Sources" | grep -vE 'import (UGrokIt|Foundation|Dispatch)$'
    exit 1
fi

# MARK: Build

build_start=$SECONDS
say "building ${#examples[@]} examples and the README snippet against $root (scratch $scratch)"
if ! swift build --package-path "$app" --scratch-path "$scratch" > "$work/build.log" 2>&1; then
    cat "$work/build.log"
    say "build failed"
    exit 1
fi
grep -E '^/.*(warning|error):' "$work/build.log" | sort -u || true
bin="$(swift build --package-path "$app" --scratch-path "$scratch" --show-bin-path)"
build_seconds=$((SECONDS - build_start))

# MARK: The emulated Grokker

grokctl="${GROKCTL:-}"
if [[ -z "$grokctl" ]]; then
    if [[ -x "$root/.build/release/grokctl" ]]; then
        grokctl="$root/.build/release/grokctl"
    else
        [[ -x "$root/.build/debug/grokctl" ]] || swift build --package-path "$root" --product grokctl >/dev/null
        grokctl="$root/.build/debug/grokctl"
    fi
fi
# A unit with its region set (as the tree's bench does) and the guide's tags in front of it
# (the EPCs its snippets name, at 0.3-0.8 m), and five more at 0.4-2 m.
template="$work/bench"
"$grokctl" --quiet --bench "$template" region set fcc --device sim:0 >/dev/null
cat > "$template/sim-0/scene.json" <<'JSON'
{
  "format": 1,
  "tags": [
    { "name": "guide-1", "epc": "35FFFFFFF99C70A063405C48", "distance_m": 0.5 },
    { "name": "guide-2", "epc": "35FFFFFFF956734504747454", "distance_m": 0.8 },
    { "name": "guide-3", "epc": "1234567890ABCDEF12345678", "distance_m": 0.3 },
    { "name": "other-0", "epc": "3034257BF7194E4000001A80", "distance_m": 0.4 },
    { "name": "other-1", "epc": "3034257BF7194E4000001A81", "distance_m": 0.7 },
    { "name": "other-2", "epc": "3034257BF7194E4000001A82", "distance_m": 1.0 },
    { "name": "other-3", "epc": "3034257BF7194E4000001A83", "distance_m": 1.5 },
    { "name": "other-4", "epc": "3034257BF7194E4000001A84", "distance_m": 2.0 }
  ]
}
JSON

# Runs one program against a fresh copy of the unit (a tag programmed by one run is back as
# it was for the next); its output must contain the expected text.
run() {
    local name="$1" expected="$2" unit="$work/run-$1"
    cp -r "$template/sim-0" "$unit"
    mkfifo "$unit/playback.fifo" "$unit/capture.fifo"
    "$grokctl" --quiet emulate --state "$unit" --input "$unit/playback.fifo" --output "$unit/capture.fifo" \
        > "$unit/emulator.log" 2>&1 &
    emulator=$!
    local status=0 output
    output="$(OUTSIDE_APP_PIPES="$unit/capture.fifo,$unit/playback.fifo" \
        OUTSIDE_APP_ALSA_DEVICE="grokbench_host:PLAYBACK=\"$unit/playback.fifo\",CAPTURE=\"$unit/capture.fifo\"" \
        OUTSIDE_APP_ALSA_CONFIG="$root/Tests/GrokAudioTests/Fixtures/asoundrc" \
        timeout 120 "$bin/$name" 2>&1)" || status=$?
    # The host going away ends the emulator; it must not outlive its host for long.
    timeout 10 tail --pid="$emulator" -f /dev/null || kill "$emulator" 2>/dev/null || true
    wait "$emulator" 2>/dev/null || true
    emulator=""
    if (( status != 0 )) || ! grep -qE "$expected" <<<"$output"; then
        say "$name failed (exit $status); its output:"
        printf '%s\n' "$output"
        say "the emulated Grokker's output:"
        cat "$unit/emulator.log"
        exit 1
    fi
    say "$name: $(grep -E "$expected" <<<"$output" | tail -1)"
}

run_start=$SECONDS
run ReadmeSnippet '^\["urn:epc:'
for name in "${examples[@]}"; do
    case "$name" in
        InventoryAllTags) run "$name" '^stopped: [1-9][0-9]* tags' ;;
        *) run "$name" ': OK$' ;;
    esac
done
say "done: build ${build_seconds} s, runs $((SECONDS - run_start)) s, total $((SECONDS - started)) s"
