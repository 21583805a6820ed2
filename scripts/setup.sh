#!/usr/bin/env bash
# Installs the Debian packages grokctl needs to build and test, only when missing.
# Idempotent: a machine that has everything runs no apt-get at all.
set -euo pipefail

# Build: C libraries behind the .systemLibrary targets, and pkg-config to find them.
build_pkgs=(pkg-config libasound2-dev libcurl4-openssl-dev zlib1g-dev libssl-dev libsqlite3-dev libpq-dev)
# Tests: ALSA's file/null plugins ship with libasound2 itself; sox resamples recordings in
# the decoder test; openssl makes test keys and the test CA; nginx-light provides
# /usr/sbin/nginx, the real HTTPS server the GrokNet download tests run on loopback;
# sqlite3 is the second process the ledger tests read with and kill mid-transaction;
# python3 and python3-venv hold python-tuf (below) for the TUF interop tests; minimodem makes
# another modem's FSK, which the vendor modem must never take for a Grokker; gcc builds the
# vendor interop harness (used only when GROKCTL_VENDOR_SDK names the vendor library);
# postgresql is the real server the shared-ledger tests start a throwaway cluster of
# (initdb and pg_ctl in a temporary directory, on a Unix socket: Tests/PostgresTestSupport).
test_pkgs=(sox openssl nginx-light sqlite3 python3 python3-venv minimodem gcc postgresql)

want=("${build_pkgs[@]}")
if [ "${1:-}" = "--test" ]; then want+=("${test_pkgs[@]}"); fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! command -v swift >/dev/null 2>&1; then
  echo "setup: the Swift 6 toolchain is not on PATH; install it from swift.org and retry." >&2
  exit 1
fi

# Tests: python-tuf from PyPI, in a virtual environment under the build directory (never the
# system's or the user's site), made only when it cannot import tuf yet. GrokTUFTests finds
# it at .build/python-tuf (or $GROK_TUF_PYTHON) to make repositories with python-tuf.
if [ "${1:-}" = "--test" ]; then
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="$root/.build/python-tuf"
  if ! "$venv/bin/python3" -c 'import tuf.api.metadata, securesystemslib.signer' >/dev/null 2>&1; then
    echo "setup: installing python-tuf into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$root/.build"
    python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check "tuf==7.0.0" "securesystemslib[crypto]==1.4.0"
  fi
fi
