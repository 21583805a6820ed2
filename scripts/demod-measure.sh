#!/usr/bin/env bash
# Builds and runs demod-measure (scripts/demod-measure/main.swift): the vendor modem's host
# demodulator alone, compiled with the modem's sources by swiftc -O (no package target, no
# tests), so its CPU per audio second can be set beside `vendorhost demod`'s.
#
#   scripts/demod-measure.sh synth SPB [RATE] [SECONDS] [REPEATS]
#   scripts/demod-measure.sh rec FILE SPB [RATE] [REPEATS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${DEMOD_MEASURE_DIR:-$here/.build/demod-measure}"
v="$here/Sources/GrokLink/Vendor"
srcs=("$here/scripts/demod-measure/main.swift" "$v/VendorFSKDemodulator.swift" "$v/VendorFSKModulator.swift"
      "$v/VendorModemSetting.swift" "$v/VendorModemError.swift" "$v/VendorMath.swift")
mkdir -p "$out"
if [[ ! -x "$out/demod-measure" ]] || [[ -n "$(find "${srcs[@]}" -newer "$out/demod-measure")" ]]; then
    swiftc -O -parse-as-library -module-name DemodMeasure "${srcs[@]}" -o "$out/demod-measure"
fi
exec "$out/demod-measure" "$@"
