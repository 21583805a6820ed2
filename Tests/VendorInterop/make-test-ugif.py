#!/usr/bin/env python3
"""Writes a synthetic .ugif firmware image for the interop harness: the vendor's text
layout (header keys, LOADER and READER sections of "AAAA <decimal length>" then hex
lines) filled with seeded random bytes. It is not firmware; the test peer only counts
and checksums what it is sent."""
import random
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "GR-1_1-9-0_harness.ugif"
rng = random.Random(7)


def section(addr, n):
    data = bytes(rng.randrange(256) for _ in range(n))
    hexed = data.hex().upper()
    return ["%04X %d" % (addr, n)] + [hexed[i:i + 64] for i in range(0, len(hexed), 64)]


lines = ["# synthetic test image for the vendor-library interop harness (random bytes, not firmware)",
         "READER_HARDWARE_TYPE = GR-1", "SOFTWARE_VERSION_MAJOR = 1", "SOFTWARE_VERSION_MINOR = 9",
         "SOFTWARE_VERSION_BUILD = 0", "SOFTWARE_VERSION_DATE = 2026-12-01", "LOADER"]
lines += section(0x0000, 200) + ["READER"] + section(0x1000, 600)
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
