#!/usr/bin/env bash
# Makes the signed demo firmware channel that ships in firmware-cache/ (so the main job runs
# offline) and its public key, profiles/firmware-keys.json. The signing key is made here
# and thrown away at the end: nobody can sign for the demo channel again, and re-running
# this script replaces both the key and the channel.
#
#   bash scripts/make-demo-channel.sh [path/to/grokctl]
set -euo pipefail
cd "$(dirname "$0")/.."
G=${1:-.build/release/grokctl}
[ -x "$G" ] || { echo "make-demo-channel: build grokctl first (swift build -c release --product grokctl)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The key; its public half, raw, into the trusted-keys file (threshold 1 of 1).
openssl genpkey -algorithm ed25519 -out "$tmp/demo.pem"
raw=$(openssl pkey -in "$tmp/demo.pem" -pubout -outform DER | tail -c 32 | od -An -tx1 | tr -d ' \n')
cat > profiles/firmware-keys.json <<JSON
{
  "type": "grokctl-trusted-keys",
  "threshold": 1,
  "keys": [
    {"name": "grokctl demo channel (private key discarded)", "public_key": "$raw"}
  ]
}
JSON

# 2. The package: 64 KiB of real x86-64 code (docs/flashing.md) as firmware 1.8.0 for
#    Grokker boards of revision 3, on 1.0.0 to 1.7.x.
cat > "$tmp/desc.json" <<JSON
{"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-11-01T12:00:00Z",
 "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}]}
JSON
"$G" firmware pack --hex firmware/demo/grokker-app-1.8.0.hex --description "$tmp/desc.json" \
    --output "$tmp/grokker-1.8.0.grokfw" >/dev/null
size=$(stat -c %s "$tmp/grokker-1.8.0.grokfw")
sha=$(sha256sum "$tmp/grokker-1.8.0.grokfw" | cut -d' ' -f1)

# 3. The release channel, version 1, valid until 2031.
cat > "$tmp/release.json" <<JSON
{
  "type": "grokctl-firmware-channel",
  "channel": "release",
  "version": 1,
  "expires": "2031-01-01T00:00:00Z",
  "updates": [
    {
      "name": "grokker-1.8.0",
      "file": "grokker-1.8.0.grokfw",
      "version": "1.8.0",
      "build_date": "2026-11-01T12:00:00Z",
      "reader_protocol": 20,
      "hardware_type": 5,
      "hardware_revisions": [3],
      "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}],
      "size": $size,
      "sha256": "$sha",
      "notes": {
        "en": "Demo release: faster uploads and the region rules of the signed catalogue.",
        "es": "Versión de demostración: cargas más rápidas y las reglas de región del catálogo firmado.",
        "fr": "Version de démonstration : envois plus rapides et règles de région du catalogue signé.",
        "de": "Demo-Version: schnellere Uploads und die Regionsregeln des signierten Katalogs."
      }
    }
  ]
}
JSON
"$G" channel sign --metadata "$tmp/release.json" --key "$tmp/demo.pem" --output "$tmp/release.signed.json" >/dev/null
"$G" channel publish --metadata "$tmp/release.signed.json" --package "$tmp/grokker-1.8.0.grokfw" \
    --root "$tmp/server" --trusted-keys profiles/firmware-keys.json >/dev/null

# 4. The region catalogue: the 22 regions with this build's regulatory values
#    (docs/regions.md), open to board revision 3, valid until 2031.
"$G" region catalogue make --version 1 --expires 2031-01-01T00:00:00Z --revisions 3 --output "$tmp/regions.json" >/dev/null
"$G" region catalogue sign --catalogue "$tmp/regions.json" --key "$tmp/demo.pem" --output "$tmp/regions.signed.json" >/dev/null
"$G" region catalogue publish --catalogue "$tmp/regions.signed.json" --root "$tmp/server" \
    --trusted-keys profiles/firmware-keys.json >/dev/null

# 5. Into the shipped cache, through the same verified downloads a station does.
rm -rf firmware-cache/metadata firmware-cache/images firmware-cache/downloads firmware-cache/state.json \
    firmware-cache/regions*.json
"$G" firmware download --cache firmware-cache --trusted-keys profiles/firmware-keys.json \
    --server "file://$tmp/server" --all
"$G" region catalogue update --cache firmware-cache --trusted-keys profiles/firmware-keys.json --server "file://$tmp/server"
# A fresh clone starts from no accepted versions; the first verified read records them.
rm -f firmware-cache/state.json
rm -rf firmware-cache/downloads
echo "make-demo-channel: firmware-cache/ and profiles/firmware-keys.json written"
