#!/usr/bin/env bash
# The station's udev path with a real udevd (issue 26): starts Debian's systemd-udevd in a
# private mount and PID namespace (its own /run, so the machine's /run/udev is not made or
# touched) and runs the test that needs it, CardEventsTests.udevEventsFromUdevd, there: an
# event udevd sends reaches grokctl's libudev monitor. The suite itself runs no udevd (the
# test is skipped there, saying so); CI runs this after the test command.
#
#   bash scripts/udev-events.sh [--if-possible]
#       --if-possible: where the machine cannot (not root, no unshare), say so and exit 0.
# Installs Debian's udev when missing. Uses the test build the test command made.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = "--inside" ]; then
  mount --make-rprivate /
  mount -t tmpfs tmpfs /run
  /lib/systemd/systemd-udevd --daemon 2> /dev/null
  for _ in $(seq 1 50); do [ -S /run/udev/control ] && break; sleep 0.1; done
  cd "$root"
  export GROKCTL_UDEVD_TEST=1 GROKCTL_SUITE_BUILD=1
  swift test -c release -Xswiftc -enable-testing -Xswiftc -gnone --skip-build \
    --filter 'CardEventsTests/udevEventsFromUdevd|CardEventsTests.udevEventsFromUdevd' 2>&1 | grep -E '✔|✘|↳|error' | grep -v 'Testing Library\|Target Platform'
  exit "${PIPESTATUS[0]}"
fi

cannot() {
  if [ "${if_possible:-0}" -eq 1 ]; then echo "udev-events: SKIPPED: $1" >&2; exit 0; fi
  echo "udev-events: cannot run here: $1" >&2
  exit 2
}
if_possible=0
[ "${1:-}" = "--if-possible" ] && if_possible=1
[ "$(id -u)" -eq 0 ] || cannot "needs root for its namespace and udevd"
unshare --pid --fork --mount true 2>/dev/null || cannot "unshare of a PID and mount namespace is not permitted"
if [ ! -x /lib/systemd/systemd-udevd ]; then
  echo "udev-events: installing udev" >&2
  env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends udev > /dev/null
fi
[ -d "$root/.build/release" ] || { echo "udev-events: no test build; run the test command (bash scripts/test.sh) first." >&2; exit 2; }
out="$(unshare --pid --fork --mount bash "$0" --inside 2>&1)" && status=0 || status=$?
echo "$out"
if [ "$status" -ne 0 ] || ! grep -q '✔ Test "udev: an event from a running udevd' <<< "$out"; then
  echo "udev-events: the test did not pass with a running udevd" >&2
  exit 1
fi
echo "udev-events: an event from a running udevd reached the monitor"
