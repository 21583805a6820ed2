#!/usr/bin/env bash
# Runs the vendor host (vendorhost) against the device-side test peer (grokpeer) over two
# FIFOs, in real time, and leaves both event streams in OUTDIR.
#
#   run-pair.sh BUILD_DIR OUTDIR "PEER OPTIONS" STEP...
#
# OUTDIR/host.jsonl: the vendor library's callbacks, its packet trace (--trace);
# OUTDIR/peer.jsonl: every packet the peer received and sent, with its sample clock.
set -euo pipefail
build="$1" outdir="$2" peer_opts="$3"; shift 3
: "${GROKCTL_VENDOR_SDK:?GROKCTL_VENDOR_SDK must name the vendor library}"
mkdir -p "$outdir"
fifo="$(mktemp -d)"
trap 'rm -rf "$fifo"' EXIT
mkfifo "$fifo/h2p" "$fifo/p2h"
# shellcheck disable=SC2086
"$build/grokpeer" --in "$fifo/h2p" --out "$fifo/p2h" --events "$outdir/peer.jsonl" $peer_opts &
peer=$!
rc=0
"$build/vendorhost" --sdk "$GROKCTL_VENDOR_SDK" --pcm-out "$fifo/h2p" --pcm-in "$fifo/p2h" \
    --events "$outdir/host.jsonl" --trace ${VENDORHOST_OPTS:-} "$@" || rc=$?
wait "$peer" || true
exit "$rc"
