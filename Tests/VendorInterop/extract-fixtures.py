#!/usr/bin/env python3
"""Turns the event streams of capture-fixtures.sh sessions into fixture files.

For each session CAP/NAME (host.jsonl from vendorhost --trace, peer.jsonl from grokpeer)
and each step of its script, writes FIXTURES/NAME/NN-STEP.json with:
  host_sends      the packets the vendor host modulated during the step (its own byte
                  trace), with the host's audio clock (seconds);
  host_received   what the host's modem decoded in the same step (from its own trace);
  peer_sent       what the peer put on the wire (the answers the host accepted or not);
  results         the library's own report of the step (callbacks, step results);
  captured        how: the session's command line, peer options, library identity.
wire_confirmed says whether every packet the host traced in the session was demodulated
by the peer off the audio, identical and in the same order."""
import hashlib
import json
import os
import re
import shutil
import sys

cap, out = sys.argv[1], sys.argv[2]
sdk = os.environ.get("GROKCTL_VENDOR_SDK", "")
sdk_sha = hashlib.sha256(open(sdk, "rb").read()).hexdigest() if sdk and os.path.exists(sdk) else None
library = {"file": "libugrokitapi.so (x86_64)", "sdk": "U Grok It Android SDK 1.7.16, built Aug 25 2015",
           "sha256": sdk_sha}
# steps that send nothing themselves: they own no packets and get no fixture
SKIP = {"wait", "version", "expect-tags", "provisioning-mode", "enforce-region", "firmware-check", "presets"}
RESULT_EVENTS = {"step_result", "battery", "region_set", "tag", "tag_read", "tag_accessed", "tag_programmed",
                 "power_changed", "firmware_progress", "firmware_completed", "firmware_update_started",
                 "autoconfig_progress", "autoconfig_completed", "diagnostics", "temperature", "connection",
                 "inventory_started", "inventory_stopped", "inventory_state", "version", "timeout"}
problems = 0


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


for name in sorted(os.listdir(cap)):
    d = os.path.join(cap, name)
    if not os.path.isdir(d):
        continue
    host, peer = load(os.path.join(d, "host.jsonl")), load(os.path.join(d, "peer.jsonl"))
    steps_line = open(os.path.join(cap, name + ".steps")).read().strip()
    peer_opts = open(os.path.join(cap, name + ".peer-options")).read().strip()
    # peer events carry the peer's sample clock; both clocks start together within the
    # pipe latency, so a step's window on the host clock selects the peer's packets too.
    modes = [(e["t"], e["spb"]) for e in peer if e.get("handshake") == "answer_tone"]

    def spb_at(t):
        cur = 12
        for t0, spb in modes:
            if t0 <= t:
                cur = spb
        return cur

    steps = []
    for e in host:
        if e["event"] == "step_begin":
            steps.append({"step": e["step"], "args": e["args"], "t0": e["t"], "events": []})
        elif steps:
            steps[-1]["events"].append(e)
    for k, st in enumerate(steps):
        st["t1"] = steps[k + 1]["t0"] if k + 1 < len(steps) else 1e9

    def owner(e):
        """The first step (in script order, not counting steps that send nothing) still
        running when packet e started."""
        for j, st in enumerate(steps):
            if st["step"] in SKIP:
                continue
            later = [s2["t0"] for s2 in steps[j + 1:] if s2["t0"] > st["t0"] and s2["step"] not in SKIP]
            if e["t0"] < (later[0] if later else 1e9) and (e["t0"] >= st["t0"] or j == 0):
                return j
        return len(steps) - 1
    # What the host modulated (its "Byte sent" trace) must be what the peer demodulated,
    # packet for packet, over the whole session: that is the on-the-wire confirmation.
    host_tx = [e["bytes"] for e in host if e["event"] == "tx"]
    peer_rx = [e["bytes"] for e in peer if e.get("dir") == "rx" and e.get("what") in ("request", "answer", "bad_crc")]
    wire_confirmed = host_tx == peer_rx
    if not wire_confirmed:
        problems += 1
        print("extract: %s: %d packets traced by the host, %d demodulated by the peer, not the same" %
              (name, len(host_tx), len(peer_rx)), file=sys.stderr)
    shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    os.makedirs(os.path.join(out, name))
    for k, st in enumerate(steps):
        if st["step"] in SKIP:
            continue
        # a packet belongs to the step during which it started (its event is logged when
        # its last byte is through, which may be after the next step began)
        inside = lambda e: owner(e) == k
        tx = [{"t": e["t0"], "bytes": e["bytes"]} for e in host if e["event"] == "tx" and inside(e)]
        rx = [{"t": e["t0"], "bytes": e["bytes"]} for e in host if e["event"] == "rx" and inside(e)]
        win = lambda t: st["t0"] - 0.02 <= t < st["t1"] - 0.02
        psent = [{"t": e["t"], "bytes": e["bytes"], "what": e["what"]} for e in peer if e.get("dir") == "tx" and win(e["t"])]
        fixture = {
            "fixture": "%s/%02d-%s" % (name, k, st["step"]),
            "step": st["step"], "args": st["args"],
            "host_sends": [p["bytes"] for p in tx],
            "host_sends_timed": tx,
            "host_received": rx,
            "peer_sent": psent,
            "wire_confirmed": wire_confirmed,
            "results": [e for e in st["events"] if e["event"] in RESULT_EVENTS][:60],
            "captured": {
                "how": "vendorhost (Tests/VendorInterop) running the vendor library unmodified against grokpeer, "
                       "in real time over FIFOs, s16le mono 44100 Hz; host_sends are the bytes grokpeer "
                       "demodulated off the host's audio",
                "vendorhost_steps": steps_line, "grokpeer_options": peer_opts, "library": library,
                "script": "Tests/VendorInterop/capture-fixtures.sh"},
        }
        if len(fixture["host_sends"]) > 400:
            for key in ("host_sends", "host_sends_timed", "host_received", "peer_sent"):
                fixture[key] = fixture[key][:400]
            fixture["truncated"] = True
        slug = st["step"] + ("-" + "-".join(os.path.basename(a)[-28:] for a in st["args"]) if st["args"] else "")
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", slug)
        with open(os.path.join(out, name, "%02d-%s.json" % (k, slug)), "w") as f:
            json.dump(fixture, f, indent=1)
            f.write("\n")
print("extract: fixtures written to %s (%d sessions not confirmed on the wire)" % (out, problems))
