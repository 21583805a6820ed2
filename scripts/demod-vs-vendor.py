#!/usr/bin/env python3
"""Our host demodulator and the vendor library's receive path side by side, on the same
recordings: CPU per audio second (demod_cpu_vs_vendor) and the lowest SNR at which each still
decodes 99 % of the packets (snr_margin_db_vs_vendor).

  demod-vs-vendor.py HARNESS_DIR REC.raw PEER.jsonl [--spb 12] [--ppm 0] [--snr 30,20,...]
                     [--seeds 1,2,3] [--seconds 10] [--cpu-repeats 5] [--only vendor|ours]

Like for like: both sides are the bare receiver on the same file, read into memory first,
CPU read once around each whole loop (ours: scripts/demod-measure.sh; the vendor's:
`vendorhost demod --bare`, its byte layer with no packet layer above it, so nothing is
asked of the recording and nothing retried). A side that fails (exits with no result, or
decodes fewer than 99 % of the clean recording's packets) fails the whole comparison: the
script prints {"failed": SIDE, "why": ...} and exits 1.

HARNESS_DIR is scripts/vendor-harness.sh's output (vendorhost, tonemeter); REC.raw what a
reader sent (vendorhost --record-rx while grokpeer ran), PEER.jsonl grokpeer's events (the
packets it sent are the reference). The noisy copies are made exactly as
Tests/VendorInterop/vendor-snr.py makes them (tonemeter noise: white Gaussian noise against
the recording's mean power, then optionally tonemeter clock), and both receivers decode the
same file. Ours runs through scripts/demod-measure.sh. Needs GROKCTL_VENDOR_SDK."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("rec")
ap.add_argument("peer")
ap.add_argument("--spb", default="12")
ap.add_argument("--ppm", type=float, default=0)
ap.add_argument("--snr", default="30,20,15,14,13.5,13,12.5,12,11,10,9,8,7,6.5,6,5.5,5,4")
ap.add_argument("--seeds", default="1,2,3")
ap.add_argument("--seconds", type=float, default=10)
ap.add_argument("--cpu-repeats", type=int, default=5)
ap.add_argument("--only", choices=["vendor", "ours"])
a = ap.parse_args()
who_runs = [w for w in ("vendor", "ours") if a.only in (None, w)]
sdk = os.environ.get("GROKCTL_VENDOR_SDK")
if not sdk:
    print("demod-vs-vendor: skipped: GROKCTL_VENDOR_SDK is not set")
    sys.exit(0)
tone = os.path.join(a.build, "tonemeter")
host = os.path.join(a.build, "vendorhost")
measure = os.path.join(here, "demod-measure.sh")
work = tempfile.mkdtemp(prefix="demod-vs-vendor-")


def fail(side, why):
    """A side of the comparison that did not run ends the whole comparison, loudly: a figure
    with one side missing is never printed."""
    print(json.dumps({"summary": "demod vs vendor", "failed": side, "why": why}), flush=True)
    sys.exit(1)


def vendor(path, extra=()):
    """The vendor's bare receive path (`vendorhost demod --bare`: its byte layer alone, the
    file in memory, the thread's CPU clock read once around the whole loop)."""
    run = subprocess.run([host, "demod", "--bare", "--sdk", sdk, "--pcm-in", path, "--spb", a.spb, *extra],
                         capture_output=True, text=True)
    lines = run.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, ValueError):
        fail("vendor", f"vendorhost demod --bare exited {run.returncode} on {path} with no result: {run.stderr.strip()[-300:]}")
    if run.returncode != 0 or "error" in result:
        fail("vendor", f"vendorhost demod --bare exited {run.returncode} on {path}: {result.get('error', '')}")
    return result


def ours(path, repeats=1):
    """Our demodulator (scripts/demod-measure.sh: the file in memory, the thread's CPU clock
    read once around the whole loop, `repeats` loops)."""
    run = subprocess.run([measure, "rec", path, a.spb, "44100", str(repeats)], capture_output=True, text=True)
    try:
        return json.loads(run.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        fail("ours", f"demod-measure exited {run.returncode} on {path}: {run.stderr.strip()[-300:]}")


def found(got, plist):
    """The packets of plist found whole, on byte boundaries and in order, in got."""
    pos, hits = 0, []
    for p in plist:
        k = got.find(p, pos)
        while k >= 0 and k % 2:
            k = got.find(p, k + 1)
        if k >= 0:
            hits.append(p)
            pos = k + len(p)
    return hits



def receive(who, path):
    return (vendor(path, ["--trace"]).get("received") or "") if who == "vendor" else ours(path)["received"]


cpu = {}
if a.only is None:
    # CPU on the whole recording.
    # CPU on the whole recording: each side's loop over the file in memory, its thread's CPU
    # clock read once around the loop, one loop per process (a cold start on both sides),
    # the two sides taking turns so a busy moment of the machine falls on both; medians.
    v, o = [], []
    for _ in range(a.cpu_repeats):
        v.append(vendor(a.rec))
        o.append(ours(a.rec, 1))
    vcpu = sorted(x["receive_cpu_per_audio_second"] for x in v)
    ocpu = sorted(x["cpu_per_audio_second_min"] for x in o)
    median = lambda xs: xs[len(xs) // 2]
    cpu = {"figure": "cpu", "spb": int(a.spb), "audio_seconds": o[0]["audio_seconds"], "loops_each": a.cpu_repeats,
           "vendor_receive_cpu_per_audio_second": vcpu, "vendor_bytes": v[0].get("bytes_received"),
           "ours_cpu_per_audio_second": ocpu, "ours_bytes": o[0]["bytes_received"],
           "demod_cpu_vs_vendor": round(median(ocpu) / median(vcpu), 4)}
    print(json.dumps(cpu), flush=True)

packets = [e["bytes"] for e in (json.loads(l) for l in open(a.peer)) if e.get("dir") == "tx"
           and e["t"] < a.seconds - 0.3 and len(e["bytes"]) >= 6]
clean = os.path.join(work, "clean.raw")
with open(a.rec, "rb") as f, open(clean, "wb") as g:
    g.write(f.read(int(a.seconds * 44100) * 2))
# The reference: the packets every receiver run decodes from the recording without noise
# (a packet the recording itself lost, e.g. to a real-time glitch, is not counted).
sent = len(packets)
for who in who_runs:
    packets = found(receive(who, clean), packets)
    # A receiver that loses packets of the clean recording is not measured on noise: its
    # losses would shrink the reference the other side is measured against.
    if len(packets) < 0.99 * sent:
        fail(who, f"decoded only {len(packets)} of the {sent} packets in the clean recording")
results = []
for snr in [float(x) for x in a.snr.split(",")]:
    tally = {who: [0, 0] for who in who_runs}
    for seed in a.seeds.split(","):
        noisy = os.path.join(work, "n.raw")
        subprocess.run([tone, "noise", a.rec, noisy, str(snr), seed], check=True)
        with open(noisy, "r+b") as f:
            f.truncate(int(a.seconds * 44100) * 2)
        if a.ppm:
            subprocess.run([tone, "clock", noisy, noisy + ".c", str(a.ppm)], check=True)
            noisy += ".c"
        for who in who_runs:
            tally[who][0] += len(found(receive(who, noisy), packets))
            tally[who][1] += len(packets)
    r = {"snr_db": snr, "ppm": a.ppm, "packets": len(packets) * len(a.seeds.split(","))}
    for who in who_runs:
        r[who + "_fraction"] = round(tally[who][0] / tally[who][1], 4) if tally[who][1] else 0
    results.append(r)
    print(json.dumps(r), flush=True)


def lowest(key):
    """The lowest tested SNR from which every higher tested SNR decodes >= 99 %."""
    low = None
    for s in sorted((r["snr_db"] for r in results), reverse=True):
        if next(r for r in results if r["snr_db"] == s)[key] >= 0.99:
            low = s
        else:
            break
    return low


lv = lowest("vendor_fraction") if "vendor" in who_runs else None
lo = lowest("ours_fraction") if "ours" in who_runs else None
for who, low in (("vendor", lv), ("ours", lo)):
    if who in who_runs and low is None:
        fail(who, f"found fewer than 99 % of the packets even at {max(r['snr_db'] for r in results)} dB")
print(json.dumps({"summary": "demod vs vendor", "spb": int(a.spb), "ppm": a.ppm, "seconds": a.seconds,
                  "seeds": a.seeds, "packets": len(packets), "vendor_lowest_snr_db_99": lv, "ours_lowest_snr_db_99": lo,
                  "snr_margin_db_vs_vendor": (lv - lo) if lv is not None and lo is not None else None,
                  "demod_cpu_vs_vendor": cpu.get("demod_cpu_vs_vendor")}))
