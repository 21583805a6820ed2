#!/usr/bin/env bash
# Builds the vendor-library interop harness (Tests/VendorInterop): the stand-in Android
# libraries the vendor's libugrokitapi.so needs on Linux, the vendorhost driver and the
# grokpeer device-side test peer.
#
#   scripts/vendor-harness.sh [OUTDIR]        (default .build/vendor-harness)
#
# Needs only gcc. The vendor library itself is never built or copied: it is named by
# GROKCTL_VENDOR_SDK at run time. When that is unset or not a readable library, this
# prints why and exits 0 with "skipped" (CI without the library passes).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$here/Tests/VendorInterop/src"
out="${1:-$here/.build/vendor-harness}"

if [[ -z "${GROKCTL_VENDOR_SDK:-}" ]]; then
    echo "vendor-harness: skipped: GROKCTL_VENDOR_SDK is not set (point it at the vendor's x86_64 libugrokitapi.so to build and run the interop harness)"
    exit 0
fi
if [[ ! -r "$GROKCTL_VENDOR_SDK" ]] || ! head -c 4 "$GROKCTL_VENDOR_SDK" | grep -q 'ELF'; then
    echo "vendor-harness: skipped: GROKCTL_VENDOR_SDK=$GROKCTL_VENDOR_SDK is not a readable ELF library"
    exit 0
fi
command -v gcc >/dev/null || { echo "vendor-harness: gcc is required" >&2; exit 1; }

mkdir -p "$out"
cflags=(-O2 -g -Wall -Wextra -std=gnu11 -fPIC)
lib() { # lib NAME SOURCE [extra...]
    local name="$1" file="$2"; shift 2
    gcc "${cflags[@]}" -shared -Wl,-soname,"$name" -o "$out/$name" "$src/$file" -Wl,--no-as-needed "$@"
}
lib libc.so standin_libc.c
lib libm.so standin_empty.c -lm
lib libdl.so standin_empty.c -ldl
lib libstdc++.so standin_empty.c
lib liblog.so standin_log.c
lib libOpenSLES.so fake_opensles.c -lpthread

# vendorhost links the stand-ins by soname, so that when it dlopens the vendor library
# its dependencies are found already loaded; the rpath finds them beside the binary.
gcc "${cflags[@]}" -o "$out/vendorhost" "$src/vendorhost.c" "$src/fake_jni.c" "$src/demod.c" \
    -Wl,--no-as-needed "$out/libOpenSLES.so" "$out/liblog.so" "$out/libc.so" "$out/libm.so" \
    "$out/libdl.so" "$out/libstdc++.so" -Wl,--as-needed \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN' -ldl -lpthread -lm
gcc "${cflags[@]}" -o "$out/grokpeer" "$src/grokpeer.c" -lm
gcc "${cflags[@]}" -o "$out/tonemeter" "$src/tonemeter.c" -lm
echo "vendor-harness: built $out/vendorhost and $out/grokpeer (vendor library: $GROKCTL_VENDOR_SDK)"
