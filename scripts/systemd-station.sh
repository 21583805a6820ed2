#!/usr/bin/env bash
# The watching station's systemd unit under a real systemd (issue 26): installs grokctl with
# scripts/setup.sh --install, starts systemd 252+ as PID 1 of a private PID and mount namespace
# (its own /etc, /usr/local, /run, /tmp and /var/lib/grokctl, so the machine is not changed),
# and checks what docs/fleet.md "An unattended station (systemd)" says:
#   the unit starts and shows in `grokctl station status`; Grokkers plugged into the emulated
#   bench are provisioned, their lines in the journal; after a SIGKILL systemd starts it again
#   (Restart=on-failure) and `station status` shows the new process, which finds the Grokkers
#   still plugged in already done, as it does one pulled out and plugged in again;
#   `systemctl stop` ends the session with its tally in the journal.
# Needs root (namespaces and mounts) and systemd's binary; PID 1 of the machine need not be
# systemd. The suite does not run this (about a minute); CI does, after the test command.
#
#   bash scripts/systemd-station.sh [--if-possible]
#       --if-possible: where the machine cannot do this (not root, no unshare, no systemd),
#       say so and exit 0 instead of failing.
# Uses the grokctl in $GROKCTL_BIN_DIR (default .build/release, as the test command builds it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${GROKCTL_BIN_DIR:-$root/.build/release}"
profile=bench-us
unit="grokctl-watch@$profile.service"

if [ "${1:-}" = "--inside" ]; then
  # PID 1's parent in the new namespaces: private copies of what the install and the
  # station change, then systemd as PID 1.
  sandbox="$2"
  mount --make-rprivate /
  mount -t tmpfs tmpfs /run
  mount -t tmpfs tmpfs /tmp
  [ -d /var/log/journal ] && mount -t tmpfs tmpfs /var/log/journal
  cp -a /etc "$sandbox/etc"
  mount --bind "$sandbox/etc" /etc
  mount --bind "$sandbox/usr-local" /usr/local
  mkdir -p /var/lib/grokctl
  mount --bind "$sandbox/var-lib-grokctl" /var/lib/grokctl
  mkdir -p /etc/systemd/journald.conf.d
  printf '[Journal]\nStorage=volatile\n' > /etc/systemd/journald.conf.d/sandbox.conf
  # The installed copy, as a station's administrator makes it (the user grokctl, the unit).
  GROKCTL_BIN_DIR="$bin" bash "$root/scripts/setup.sh" --install /usr/local > "$sandbox/setup.log" 2>&1
  chown grokctl:audio /var/lib/grokctl
  /usr/local/bin/grokctl station init --system --repository demo --name sandbox-station \
    --ledger /var/lib/grokctl/ledger.sqlite > /dev/null
  # Only journald and the station: the machine's other units stay out of this namespace.
  mkdir -p /run/systemd/system/grokctl-watch@.service.d
  printf '[Unit]\nDescription=grokctl sandbox\nDefaultDependencies=no\nWants=systemd-journald.service %s\n' "$unit" \
    > /run/systemd/system/grokctl-sandbox.target
  printf '[Unit]\nDefaultDependencies=no\n' > /run/systemd/system/grokctl-watch@.service.d/sandbox.conf
  exec env container=grokctl-sandbox /lib/systemd/systemd --system --unit=grokctl-sandbox.target \
    --log-target=console --log-level=warning
fi

cannot() {
  if [ "${if_possible:-0}" -eq 1 ]; then echo "systemd-station: SKIPPED: $1" >&2; exit 0; fi
  echo "systemd-station: cannot run here: $1" >&2
  exit 2
}
if_possible=0
[ "${1:-}" = "--if-possible" ] && if_possible=1
[ "$(id -u)" -eq 0 ] || cannot "needs root for its namespaces and mounts"
[ -x /lib/systemd/systemd ] || cannot "no /lib/systemd/systemd (Debian's package systemd)"
command -v unshare >/dev/null && command -v nsenter >/dev/null || cannot "no unshare/nsenter (util-linux)"
unshare --pid --fork --mount --mount-proc true 2>/dev/null || cannot "unshare of a PID and mount namespace is not permitted"
[ -x "$bin/grokctl" ] || { echo "systemd-station: no grokctl in $bin; run the test command (bash scripts/test.sh) first." >&2; exit 2; }

sandbox="$(mktemp -d /var/tmp/grokctl-systemd.XXXXXX)"
mkdir -p "$sandbox/usr-local" "$sandbox/var-lib-grokctl"
pid1=""
cleanup() {
  # Killing the namespace's PID 1 ends every process in it; then its mounts are gone.
  [ -n "$pid1" ] || pid1="$(pgrep -P "$launcher" | head -1 || true)"
  [ -n "$pid1" ] && kill -9 "$pid1" 2>/dev/null || true
  wait "$launcher" 2>/dev/null || true
  rm -rf "$sandbox"
}
trap cleanup EXIT
unshare --pid --fork --mount --mount-proc bash "$0" --inside "$sandbox" > "$sandbox/console.log" 2>&1 &
launcher=$!

inside() { nsenter -t "$pid1" -m -p -- "$@"; }
failures=0
check() {  # check WHAT COMMAND...: passes when COMMAND succeeds
  local what="$1"; shift
  if "$@"; then echo "ok - $what"; else echo "not ok - $what" >&2; failures=$((failures + 1)); fi
}
wait_for() {  # wait_for SECONDS COMMAND...
  local seconds="$1"; shift
  local until=$((SECONDS + seconds))
  while [ "$SECONDS" -lt "$until" ]; do "$@" && return 0; sleep 0.5; done
  return 1
}
status_json() { inside /usr/local/bin/grokctl --json station status --system; }
status_says() {  # status_says PYTHON-EXPRESSION over s (the status object)
  status_json 2>/dev/null | python3 -c "import json,sys; s=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"
}
as_station() { inside runuser -u grokctl -- env HOME=/var/lib/grokctl XDG_STATE_HOME=/var/lib /usr/local/bin/grokctl "$@"; }
journal() { inside journalctl --no-pager -o cat -u "$unit"; }
main_pid() { inside systemctl show -p MainPID --value "$unit"; }
provisioned_lines() { local text; text="$(journal)"; [ "$(grep -c ': provisioned$' <<< "$text")" -eq "$1" ]; }
already_done_lines() { local text; text="$(journal)"; [ "$(grep -c ': already done, left alone$' <<< "$text")" -eq "$1" ]; }
restarted() { local p; p="$(main_pid)"; [ "$p" != 0 ] && [ "$p" != "$1" ]; }
stopped() { ! inside systemctl is-active --quiet "$unit"; }
summary_in_journal() { local text; text="$(journal)"; grep -q '^Watch session .*: ' <<< "$text"; }

# PID 1 of the namespace is unshare's forked child: the setup, then systemd in its place.
systemd_started() { pid1="$(pgrep -P "$launcher" | head -1 || true)"; [ -n "$pid1" ] && [ "$(cat "/proc/$pid1/comm" 2>/dev/null)" = systemd ]; }
wait_for 120 systemd_started || { cat "$sandbox/setup.log" "$sandbox/console.log" >&2 || true; echo "systemd-station: systemd did not start" >&2; exit 1; }
wait_for 30 inside test -S /run/systemd/private || { cat "$sandbox/console.log" >&2; echo "systemd-station: systemd's socket did not appear" >&2; exit 1; }

check "the unit is installed where systemd looks" inside test -f /usr/local/lib/systemd/system/grokctl-watch@.service
check "systemd started $unit" wait_for 60 inside systemctl is-active --quiet "$unit"
first="$(main_pid)"
check "station status shows the session running as process $first" wait_for 30 status_says "s['running'] and s['status']['pid'] == $first"
# Another user, who has no station of their own, is shown the system's.
others_see_it() {
  local text; text="$(inside runuser -u nobody -- env HOME=/nonexistent /usr/local/bin/grokctl --lang en station status)"
  grep -q "^The system's watching station" <<< "$text"
}
check "station status, for a user without a station of their own, shows the system's" wait_for 30 others_see_it
as_station bench plug --device sim:0 > /dev/null
as_station bench plug --device sim:1 > /dev/null
check "two Grokkers plugged in are provisioned (station status' tally)" wait_for 120 status_says "s['status']['tally']['provisioned'] == 2"
check "the journal has each Grokker's line" provisioned_lines 2

# A Grokker whose smoke test fails (a field without tags): its lines reach the journal as
# warnings, the others as information (journalctl -p warning shows only what needs someone).
inside runuser -u grokctl -- sh -c 'mkdir -p /var/lib/grokctl/bench/sim-2 && echo "{\"tags\": []}" > /var/lib/grokctl/bench/sim-2/scene.json'
as_station bench plug --device sim:2 > /dev/null
check "a Grokker whose smoke test fails is counted failed" wait_for 60 status_says "s['status']['tally']['failed'] == 1"
warnings_only_failures() {
  local warnings; warnings="$(inside journalctl --no-pager -o cat -p warning -u "$unit")"
  grep -q '^sim:2: .*failed' <<< "$warnings" && ! grep -q ': provisioned$' <<< "$warnings"
}
check "journalctl -p warning shows the failed Grokker's lines, not the provisioned ones" warnings_only_failures
as_station bench unplug --device sim:2 > /dev/null

inside systemctl kill --signal=SIGKILL "$unit"
check "after a SIGKILL systemd starts it again (Restart=on-failure)" wait_for 30 restarted "$first"
second="$(main_pid)"
check "systemd counts the restart" test "$(inside systemctl show -p NRestarts --value "$unit")" = 1
check "station status shows the new process $second running" wait_for 30 status_says "s['running'] and s['status']['pid'] == $second"
check "the new session finds both Grokkers still plugged in, already done" wait_for 60 status_says "s['status']['tally']['already_done'] == 2"
as_station bench unplug --device sim:0 > /dev/null
check "a Grokker pulled out leaves the status" wait_for 30 status_says "'sim:0' not in [p['port'] for p in s['status']['ports']]"
as_station bench plug --device sim:0 > /dev/null
check "plugged in again, it is greeted as already done (the tally counts Grokkers, not turns)" wait_for 60 already_done_lines 3

inside systemctl stop "$unit"
check "systemctl stop ends it" stopped
check "the journal has the session's summary" summary_in_journal
check "station status says no session runs, with the last tally" status_says "not s['running'] and s['status']['tally']['already_done'] == 2"

ledger_show() { inside /usr/local/bin/grokctl --lang en ledger show --ledger /var/lib/grokctl/ledger.sqlite; }
killed_run_abandoned() { local text; text="$(ledger_show)"; grep -q "abandoned (its process died; closed by a later run)" <<< "$text"; }
check "the ledger has the killed session's run abandoned, closed by the next" killed_run_abandoned
echo "--- the station's ledger"
ledger_show || failures=$((failures + 1))
if [ "$failures" -gt 0 ]; then
  echo "--- journal of $unit" >&2
  journal >&2 || true
  echo "systemd-station: $failures checks failed" >&2
  exit 1
fi
echo "systemd-station: every check passed (systemd $(inside systemctl --version | head -1 | cut -d' ' -f2), unit $unit)"
