#!/usr/bin/env bash
# Runs the whole test suite the way CI does: installs what is missing, then builds and tests
# in release mode (the DSP tests push minutes of audio through the modem; a debug build would
# take ten times longer). -enable-testing keeps @testable imports working in release; the
# test targets themselves build at -Onone (Package.swift), which cut their compile time by a third.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
swift build -c release -Xswiftc -enable-testing --build-tests "$@"
swift test -c release -Xswiftc -enable-testing --skip-build "$@"
