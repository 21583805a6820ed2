#!/usr/bin/env bash
# Makes the demo firmware channel that ships in firmware/demo-channel/: a TUF repository made
# with `grokctl repo` only, served as files (file://), so the demo runs with no network.
#
#   firmware/demo-channel/metadata/   1.root.json, 1.targets.json, 1.release.json,
#                                     1.snapshot.json, timestamp.json (as `repo publish` writes them)
#   firmware/demo-channel/targets/release/SHA256.GR-1_1-8-0_demo.ugif   the demo image 1.8.0
#   firmware/demo-channel/targets/release/SHA256.regions.json            the region catalogue
#   firmware/demo-channel/root.json   the trust root a station pins (--trusted-root): 1.root.json
#
# Every key (root, timestamp, snapshot, targets, release; Ed25519) is made here and thrown
# away at the end: nobody can sign for the demo channel again, and re-running this script
# replaces the keys, the root and every file. The expiries are long (5 years, until about
# 2031-12) because a demo must keep working offline; a real deployment uses the short ones
# of docs/firmware-format.md (a 1-day timestamp is the freeze window).
#
#   bash scripts/make-demo-channel.sh [path/to/grokctl]
set -euo pipefail
cd "$(dirname "$0")/.."
G=${1:-.build/release/grokctl}
[ -x "$G" ] || { echo "make-demo-channel: build grokctl first (swift build -c release --product grokctl)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=firmware/demo-channel
life=1826d

# 1. The keys, one per role.
for role in root timestamp snapshot targets release; do
    openssl genpkey -algorithm ed25519 -out "$tmp/$role.pem"
done
"$G" repo init --repo "$tmp/repo" --root-key "$tmp/root.pem" --timestamp-key "$tmp/timestamp.pem" \
    --snapshot-key "$tmp/snapshot.pem" --targets-key "$tmp/targets.pem" --channel-key "release=$tmp/release.pem" \
    --expires "root=$life" --expires "targets=$life" --expires "snapshot=$life" --expires "timestamp=$life" \
    --expires "release=$life" >/dev/null

# 2. The image: the demo loader and the first 61440 bytes of the 64 KiB application (what
#    fits the vendor's 16-bit address space beside the loader), as firmware 1.8.0 for Grokker
#    boards of revision 3 running 1.0.0 to 1.7.x. It must be the committed
#    firmware/demo/GR-1_1-8-0_demo.ugif byte for byte.
cat > "$tmp/desc.json" <<JSON
{"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
 "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}],
 "notes": {
   "en": "Demo release: faster uploads and the region rules of the signed catalogue.",
   "es": "Versión de demostración: cargas más rápidas y las reglas de región del catálogo firmado.",
   "fr": "Version de démonstration : envois plus rapides et règles de région du catalogue signé.",
   "de": "Demo-Version: schnellere Uploads und die Regionsregeln des signierten Katalogs."
 }}
JSON
"$G" firmware pack --hex firmware/demo/grokker-app-1.8.0.hex --loader firmware/demo/grokker-loader-1.0.0.hex \
    --base 0x08007000 --reader-bytes 61440 \
    --comment "demo channel image. LOADER: grokker-loader-1.0.0.hex; READER: the first 61440 bytes" \
    --comment "of grokker-app-1.8.0.hex (base 0x08007000: the 64 KiB application does not fit" \
    --comment "the vendor format's 16-bit address space beside a loader)" \
    --description "$tmp/desc.json" --output "$tmp/GR-1_1-8-0_demo.ugif" --custom-output "$tmp/custom.json" >/dev/null
cmp "$tmp/GR-1_1-8-0_demo.ugif" firmware/demo/GR-1_1-8-0_demo.ugif
"$G" repo add --repo "$tmp/repo" --channel release "$tmp/GR-1_1-8-0_demo.ugif" --custom "$tmp/custom.json" >/dev/null

# 3. The region catalogue: the 22 regions with this build's regulatory values
#    (docs/regions.md), open to board revision 3.
"$G" region catalogue make --version 1 --expires 2031-12-01T00:00:00Z --revisions 3 --output "$tmp/regions.json" >/dev/null
"$G" repo add --repo "$tmp/repo" --channel release "$tmp/regions.json" >/dev/null

# 4. Sign, timestamp, publish; the trust root beside it.
for role in root targets release; do
    "$G" repo sign --repo "$tmp/repo" --role "$role" --key "$tmp/$role.pem" >/dev/null
done
rm -rf "$out"
"$G" repo timestamp --repo "$tmp/repo" --key "$tmp/timestamp.pem" --snapshot-key "$tmp/snapshot.pem" --publish "$out" >/dev/null
cp "$out/metadata/1.root.json" "$out/root.json"

# 5. Check it as a station does, from a fresh state directory.
"$G" firmware list --repository "file://$PWD/$out" --trusted-root "$out/root.json" --state "$tmp/state" >/dev/null
"$G" region catalogue update --repository "file://$PWD/$out" --trusted-root "$out/root.json" --state "$tmp/state" >/dev/null
echo "make-demo-channel: $out written (trust root $out/root.json)"
