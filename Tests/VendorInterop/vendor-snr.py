#!/usr/bin/env python3
"""The vendor receive path's robustness: the lowest SNR at which it still decodes 99 % of
the packets of a recording (the vendor side of snr_margin_db_vs_vendor).

  vendor-snr.py BUILD_DIR REC.raw PEER.jsonl [--spb 12] [--ppm 0] [--snr 30,25,...] [--seeds 1,2]

REC.raw is what a reader sent (vendorhost --record-rx while grokpeer ran), PEER.jsonl
grokpeer's events of that session: the packets it sent ("dir":"tx") are the reference.
One implementation of the noise, the clock and the packet counting: this is
scripts/demod-vs-vendor.py with `--only vendor` (its defaults: one seed, a coarser grid)."""
import os
import sys

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "demod-vs-vendor.py")
defaults = ["--only", "vendor", "--seeds", "1", "--snr", "30,25,20,18,16,14,12,10,8,6"]
os.execv(sys.executable, [sys.executable, script, *defaults, *sys.argv[1:]])
