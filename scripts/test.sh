#!/usr/bin/env bash
# Runs the whole test suite the way CI does: installs what is missing, then builds and tests
# in release mode (the DSP tests push minutes of audio through the modem; a debug build would
# take ten times longer). -enable-testing keeps @testable imports working in release; the
# test targets themselves build at -Onone (Package.swift), which cut their compile time by a
# third. -gnone leaves out the debug information a plain release build carries: it cost a
# fifth of the compile time (GrokFleet: 70 s of CPU with it, 57 s without) and a test's
# crash still names its functions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
flags=(-c release -Xswiftc -enable-testing -Xswiftc -gnone)
# The modules no test needs fast are built without optimization here (Package.swift,
# suiteUnoptimized): the build is most of the suite's time.
export GROKCTL_SUITE_BUILD=1
swift build "${flags[@]}" --build-tests "$@"
swift test "${flags[@]}" --skip-build "$@"
