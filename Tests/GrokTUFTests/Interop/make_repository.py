#!/usr/bin/env python3
"""Makes a TUF repository with python-tuf's metadata API, for GrokTUF's interop test.

    make_repository.py DIR MODE

DIR receives metadata/ and targets/. The repository has keys of three types (root: ed25519
then RSA after a rotation, timestamp: ECDSA P-256, snapshot: RSA-PSS, targets: ed25519),
a root rotation (1.root.json -> 2.root.json, signed by the old and the new root key),
and a delegation "release" (ECDSA, paths firmware/*) listing firmware/grokker-1.9.9.bin
with a custom field. MODE changes one thing after signing, as an attacker would:

    good      as described
    tampered  the target file's bytes changed after signing
    expired   the timestamp expired on 2026-11-01 (the test's clock reads 2026-12-01)
    badsig    release.json's target length changed after signing (signature no longer valid)
    rollback  writes the good repository, then (in DIR/rollback/) a timestamp of a lower version
    canonical reads JSON on stdin and writes securesystemslib's canonical encoding to stdout

    make_repository.py DIR client TARGET

runs python-tuf's own client (ngclient, with a file:// fetcher) on the repository in
DIR/metadata and DIR/targets (made by GrokTUF's signer), trusting DIR/metadata/1.root.json:
refresh, find TARGET, download it into DIR/python-client/targets. Exit 0 when all of that
succeeds, 1 (with python-tuf's error on stderr) when python-tuf refuses.
"""
import json
import os
import sys
from datetime import datetime, timezone

from securesystemslib.formats import encode_canonical
from securesystemslib.signer import CryptoSigner
from tuf.api.metadata import (
    DelegatedRole,
    Delegations,
    Metadata,
    MetaFile,
    Root,
    Snapshot,
    TargetFile,
    Targets,
    Timestamp,
)
from tuf.api.serialization.json import JSONSerializer

VALID = datetime(2030, 1, 1, tzinfo=timezone.utc)
EXPIRED = datetime(2026, 11, 1, tzinfo=timezone.utc)
TARGET = "firmware/grokker-1.9.9.bin"
CONTENT = b"grokker firmware 1.9.9\n"


def write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def run_client(repo: str, target_path: str) -> None:
    from urllib.parse import unquote, urlparse

    from tuf.api.exceptions import DownloadHTTPError
    from tuf.ngclient import FetcherInterface, Updater

    class FileFetcher(FetcherInterface):
        def _fetch(self, url: str):  # noqa: ANN202
            path = unquote(urlparse(url).path)
            try:
                with open(path, "rb") as f:
                    return iter([f.read()])
            except FileNotFoundError:
                raise DownloadHTTPError(f"{path} not found", 404) from None

    client = os.path.join(repo, "python-client")
    os.makedirs(os.path.join(client, "metadata"), exist_ok=True)
    os.makedirs(os.path.join(client, "targets"), exist_ok=True)
    with open(os.path.join(repo, "metadata", "1.root.json"), "rb") as f:
        bootstrap = f.read()
    updater = Updater(
        metadata_dir=os.path.join(client, "metadata"),
        metadata_base_url="file://" + os.path.join(repo, "metadata") + "/",
        target_dir=os.path.join(client, "targets"),
        target_base_url="file://" + os.path.join(repo, "targets") + "/",
        fetcher=FileFetcher(),
        bootstrap=bootstrap,
    )
    try:
        updater.refresh()
        info = updater.get_targetinfo(target_path)
        if info is None:
            raise RuntimeError(f"no target {target_path}")
        updater.download_target(info)
    except Exception as e:  # noqa: BLE001
        print(f"python-tuf refused: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


def main() -> None:
    out, mode = sys.argv[1], sys.argv[2]
    if mode == "client":
        run_client(out, sys.argv[3])
        return
    if mode == "canonical":
        sys.stdout.buffer.write(encode_canonical(json.load(sys.stdin)).encode("utf-8"))
        return
    meta_dir = os.path.join(out, "metadata")
    serializer = JSONSerializer(compact=False)
    root_key = CryptoSigner.generate_ed25519()
    new_root_key = CryptoSigner.generate_rsa()
    ts_key = CryptoSigner.generate_ecdsa()
    snap_key = CryptoSigner.generate_rsa()
    targets_key = CryptoSigner.generate_ed25519()
    release_key = CryptoSigner.generate_ecdsa()

    root = Metadata(Root(expires=VALID, consistent_snapshot=False))
    for role, signer in (("root", root_key), ("timestamp", ts_key), ("snapshot", snap_key), ("targets", targets_key)):
        root.signed.add_key(signer.public_key, role)
    root.sign(root_key)
    write(os.path.join(meta_dir, "1.root.json"), root.to_bytes(serializer))

    # Root rotation: version 2 replaces the root key; signed by the old and the new key.
    root.signed.version = 2
    root.signed.revoke_key(root_key.public_key.keyid, "root")
    root.signed.add_key(new_root_key.public_key, "root")
    root.signatures.clear()
    root.sign(root_key, append=True)
    root.sign(new_root_key, append=True)
    write(os.path.join(meta_dir, "2.root.json"), root.to_bytes(serializer))

    release = Metadata(Targets(expires=VALID))
    target = TargetFile.from_data(TARGET, CONTENT, ["sha256", "sha512"])
    target.unrecognized_fields["custom"] = {"version": "1.9.9", "hardware": ["G1"], "notes": {"en": "fixes", "de": "Korrekturen"}}
    release.signed.targets[TARGET] = target
    release.sign(release_key)

    targets = Metadata(Targets(expires=VALID))
    targets.signed.delegations = Delegations(
        keys={release_key.public_key.keyid: release_key.public_key},
        roles={"release": DelegatedRole("release", [release_key.public_key.keyid], 1, True, paths=["firmware/*"])},
    )
    targets.sign(targets_key)

    snapshot = Metadata(Snapshot(expires=VALID))
    snapshot.signed.meta["targets.json"] = MetaFile(version=1)
    snapshot.signed.meta["release.json"] = MetaFile(version=1)
    snapshot.sign(snap_key)
    snapshot_bytes = snapshot.to_bytes(serializer)

    timestamp = Metadata(Timestamp(expires=EXPIRED if mode == "expired" else VALID))
    timestamp.signed.version = 3
    timestamp.signed.snapshot_meta = MetaFile(version=1, length=len(snapshot_bytes), hashes={"sha256": __import__("hashlib").sha256(snapshot_bytes).hexdigest()})
    timestamp.sign(ts_key)

    release_bytes = release.to_bytes(serializer)
    if mode == "badsig":
        release_json = json.loads(release_bytes)
        release_json["signed"]["targets"][TARGET]["length"] += 1
        release_bytes = json.dumps(release_json).encode()

    write(os.path.join(meta_dir, "timestamp.json"), timestamp.to_bytes(serializer))
    write(os.path.join(meta_dir, "snapshot.json"), snapshot_bytes)
    write(os.path.join(meta_dir, "targets.json"), targets.to_bytes(serializer))
    write(os.path.join(meta_dir, "release.json"), release_bytes)
    write(os.path.join(out, "targets", TARGET), CONTENT + (b"!" if mode == "tampered" else b""))

    if mode == "rollback":
        timestamp.signed.version = 2
        timestamp.signatures.clear()
        timestamp.sign(ts_key)
        write(os.path.join(out, "rollback", "timestamp.json"), timestamp.to_bytes(serializer))


if __name__ == "__main__":
    main()
