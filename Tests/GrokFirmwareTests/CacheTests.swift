import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import Testing

/// A cache in a fresh directory, a 2-of-3 key ring, and two packages.
struct CacheFixture {
    let dir: String
    let ring: KeyRing
    let old: FirmwarePackage
    let new: FirmwarePackage

    init() throws {
        dir = try scratchDirectory("cache")
        ring = try KeyRing(count: 3, threshold: 2)
        old = try makePackage(version: "1.7.0", seed: 10)
        new = try makePackage(version: "1.8.0", seed: 20)
    }

    func cache(now: Date = june2025) throws -> FirmwareCache {
        try FirmwareCache(directory: dir + "/cache", verifier: MetadataVerifier(trustedKeys: ring.trusted, clock: { now }))
    }

    func envelope(version: UInt64, packages: [FirmwarePackage], channel: String = "release") throws -> [UInt8] {
        try signedEnvelope(metadata(channel: channel, version: version, packages: packages), by: [ring.keys[0], ring.keys[2]])
    }

    /// Writes `bytes` as the partial download for `entry` and returns its path.
    func partial(_ cache: FirmwareCache, _ entry: UpdateEntry, _ bytes: [UInt8]) throws -> String {
        let path = cache.partialPath(for: entry)
        try writeFile(path, bytes)
        return path
    }
}

@Suite("Image binding and the firmware cache")
struct CacheTests {
    @Test("A verified image is cached, listed and read offline; the partial is gone")
    func addAndRead() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        let cache = try f.cache()
        let channel = try cache.store(metadata: f.envelope(version: 1, packages: [f.new]), channel: "release", source: "https://fw.example/release/channel.json",
                                      validators: MetadataValidators(etag: "\"abc\"", lastModified: "Sat, 01 Feb 2025 00:00:00 GMT"))
        let entry = channel.metadata.updates[0]
        let partial = try f.partial(cache, entry, f.new.encoded())
        let stored = try cache.addImage(partialFile: partial, name: entry.name, in: channel)
        #expect(stored == cache.imagePath(f.new.sha256))
        #expect(!FileManager.default.fileExists(atPath: partial))
        #expect(cache.validators(channel: "release")?.etag == "\"abc\"")

        // Offline: a new cache object on the same directory, nothing but files.
        let reopened = try f.cache()
        let offline = try reopened.channel("release")
        let device = DeviceIdentity(hardwareType: .grokker1, hardwareRevision: 1, firmwareVersion: v("1.2.0"), readerProtocolVersion: 20, serialNumber: 9)
        let updates = reopened.updates(in: offline, for: device)
        #expect(updates.map(\.entry.name) == ["grokker-1.8.0"])
        #expect(updates[0].compatibility == .upgrade)
        #expect(updates[0].cached)
        #expect(try reopened.image(named: "grokker-1.8.0", in: offline) == f.new)
    }

    @Test("A partial file with the wrong hash, size or header is refused, deleted, and the cache is unchanged")
    func refusedPartials() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        let cache = try f.cache()
        let channel = try cache.store(metadata: f.envelope(version: 1, packages: [f.new]), channel: "release", source: "c")
        let entry = channel.metadata.updates[0]
        let before = snapshot(f.dir + "/cache")

        var tampered = f.new.encoded()
        tampered[tampered.count / 2] ^= 1
        let longer = f.new.encoded() + [0]
        for (bytes, expectedCode) in [(tampered, "firmware_image_hash_mismatch"), (longer, "firmware_image_size_mismatch"),
                                      (Array(f.new.encoded().dropLast()), "firmware_image_size_mismatch")] {
            let path = try f.partial(cache, entry, bytes)
            do {
                try cache.addImage(partialFile: path, name: entry.name, in: channel)
                Issue.record("a bad partial was accepted")
            } catch {
                #expect(error.code == expectedCode)
            }
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(snapshot(f.dir + "/cache") == before)
        }
        #expect(throws: FirmwareError.imageNotCached(name: entry.name, sha256: entry.sha256.hex)) {
            try cache.image(named: entry.name, in: channel)
        }
    }

    @Test("Mix-and-match: an image listed by metadata version 1 does not bind to version 2's listing")
    func mixAndMatch() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        let cache = try f.cache()
        // Both versions list the update under the same name; the images differ.
        var v1 = metadata(version: 1, packages: [f.old])
        v1.updates[0].name = "grokker-latest"
        var v2 = metadata(version: 2, packages: [f.new])
        v2.updates[0].name = "grokker-latest"
        _ = try cache.store(metadata: signedEnvelope(v1, by: f.ring.keys), channel: "release", source: "c")
        let current = try cache.store(metadata: signedEnvelope(v2, by: f.ring.keys), channel: "release", source: "c")
        #expect(throws: FirmwareError.imageHashMismatch(file: "img", expected: f.new.sha256.hex, found: f.old.sha256.hex)) {
            try current.bind(image: f.old.encoded(), to: "grokker-latest", file: "img")
        }
        #expect(try current.bind(image: f.new.encoded(), to: "grokker-latest", file: "img") == f.new)
    }

    @Test("Wrong software: an image whose header disagrees with its entry, or built for other hardware, is refused")
    func wrongSoftware() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        let cache = try f.cache()
        // The entry claims revisions 1 and 2, size and hash of the real file; the header says revision 3.
        let otherHardware = try makePackage(version: "1.8.0", revisions: [3], seed: 30)
        var meta = metadata(version: 1, packages: [otherHardware])
        meta.updates[0].hardwareRevisions = [1, 2]
        let channel = try cache.store(metadata: signedEnvelope(meta, by: f.ring.keys), channel: "release", source: "c")
        #expect(throws: FirmwareError.imageHeaderMismatch(file: "img", field: "hardware revisions", expected: "1,2", found: "3")) {
            try channel.bind(image: otherHardware.encoded(), to: meta.updates[0].name, file: "img")
        }
        // An image listed (honestly) for other hardware binds, but is INCOMPATIBLE with this device.
        let honest = try cache.store(metadata: signedEnvelope(metadata(version: 2, packages: [otherHardware]), by: f.ring.keys), channel: "release", source: "c")
        let package = try honest.bind(image: otherHardware.encoded(), to: honest.metadata.updates[0].name, file: "img")
        let device = DeviceIdentity(hardwareType: .grokker1, hardwareRevision: 1, firmwareVersion: v("1.2.0"), readerProtocolVersion: 20, serialNumber: 9)
        #expect(Compatibility.check(package.descriptor, against: device) == .incompatible)
        #expect(throws: FirmwareError.updateNotListed(channel: "release", name: "nope")) {
            try honest.bind(image: otherHardware.encoded(), to: "nope", file: "img")
        }
    }

    @Test("Rollback across a re-opened cache: older metadata is refused and not stored")
    func rollbackPersisted() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        _ = try f.cache().store(metadata: f.envelope(version: 3, packages: [f.new]), channel: "release", source: "c")
        let reopened = try f.cache()
        #expect(try reopened.highestAccepted(channel: "release")?.version == 3)
        let before = snapshot(f.dir + "/cache")
        #expect(throws: FirmwareError.metadataRollback(file: "old", channel: "release", found: 2, highest: 3)) {
            try reopened.store(metadata: f.envelope(version: 2, packages: [f.old]), channel: "release", source: "old")
        }
        #expect(snapshot(f.dir + "/cache") == before)
        #expect(try reopened.channel("release").metadata.version == 3)
        // Newer is accepted and raises the state.
        _ = try reopened.store(metadata: f.envelope(version: 4, packages: [f.old, f.new]), channel: "release", source: "c")
        #expect(try f.cache().highestAccepted(channel: "release")?.version == 4)
    }

    @Test("Nothing unverified is stored: bad signatures, threshold, expiry and channel mismatch leave the cache unchanged")
    func metadataRefusalsLeaveCacheUnchanged() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        let cache = try f.cache()
        let before = snapshot(f.dir + "/cache")
        let meta = metadata(version: 1, packages: [f.new])
        let cases: [([UInt8], String)] = [
            (try signedEnvelope(meta, by: [f.ring.keys[0]]), "firmware_below_threshold"),
            (try signedEnvelope(meta, by: [Ed25519PrivateKey.generate()]), "firmware_untrusted_keys"),
            (try signedEnvelope(metadata(version: 1, expires: january2025, packages: [f.new]), by: f.ring.keys), "firmware_metadata_expired"),
            (try signedEnvelope(metadata(channel: "development", version: 1, packages: [f.new]), by: f.ring.keys), "firmware_channel_mismatch"),
        ]
        for (bytes, code) in cases {
            do {
                try cache.store(metadata: bytes, channel: "release", source: "c")
                Issue.record("accepted metadata that should fail with \(code)")
            } catch {
                #expect(error.code == code)
            }
            #expect(snapshot(f.dir + "/cache") == before)
        }
        #expect(throws: FirmwareError.noCachedMetadata(channel: "release")) { try cache.channel("release") }
    }

    @Test("Cached metadata that has since expired is refused offline (freeze)")
    func offlineExpiry() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        _ = try f.cache(now: june2025).store(metadata: f.envelope(version: 1, packages: [f.new]), channel: "release", source: "c")
        #expect(try f.cache(now: june2025).channel("release").metadata.version == 1)
        #expect(throws: FirmwareError.self) { try f.cache(now: january2026).channel("release") }
        let reports = try f.cache(now: january2026).verify()
        #expect(reports.first { $0.path == "metadata/release.json" }?.status == .expired)
    }

    @Test("verify finds a corrupted cached image; reading it is refused; prune removes it and orphans")
    func verifyAndPrune() throws {
        let f = try CacheFixture()
        defer { cleanup(f.dir) }
        let cache = try f.cache()
        let v1 = try cache.store(metadata: f.envelope(version: 1, packages: [f.old, f.new]), channel: "release", source: "c")
        for entry in v1.metadata.updates {
            let bytes = entry.sha256 == f.old.sha256 ? f.old.encoded() : f.new.encoded()
            try cache.addImage(partialFile: f.partial(cache, entry, bytes), name: entry.name, in: v1)
        }
        #expect(cache.verify().allSatisfy { $0.status == .ok })

        // Corrupt the new image on disk.
        let newPath = cache.imagePath(f.new.sha256)
        var bytes = try readFile(newPath)
        bytes[20] ^= 0x80
        try writeFile(newPath, bytes)
        let reports = cache.verify()
        #expect(reports.first { $0.path == "images/\(f.new.sha256.hex).grokfw" }?.status == .corrupt)
        #expect(throws: FirmwareError.self) { try cache.image(named: "grokker-1.8.0", in: v1) }

        // Version 2 no longer lists the old image; a stray temp file and an unlisted partial appear.
        let v2 = try cache.store(metadata: f.envelope(version: 2, packages: [f.new]), channel: "release", source: "c")
        try writeFile(f.dir + "/cache/images/x.grokfw.tmp-1-2", [1])
        try writeFile(f.dir + "/cache/downloads/\(String(repeating: "ab", count: 32)).partial", [1])
        let orphans = cache.verify().filter { $0.status == .orphan }.map(\.path).sorted()
        #expect(orphans == ["downloads/\(String(repeating: "ab", count: 32)).partial", "images/\(f.old.sha256.hex).grokfw", "images/x.grokfw.tmp-1-2"])
        let removed = try cache.prune()
        #expect(Set(removed) == Set(orphans + ["images/\(f.new.sha256.hex).grokfw"]))
        #expect(listing(f.dir + "/cache/images").isEmpty)
        #expect(cache.verify().allSatisfy { $0.status == .ok })
        #expect(try cache.channel("release") == v2)
        #expect(cache.updates(in: v2).map(\.cached) == [false])
    }
}

@Suite("Publishing a channel")
struct PublisherTests {
    @Test("pack, sign by two holders in turn (openssl keys), publish a tree a cache accepts")
    func endToEnd() throws {
        let dir = try scratchDirectory("publish")
        defer { cleanup(dir) }
        // Two key holders make their keys with openssl, as docs/firmware-format.md says.
        var publicKeys: [TrustedKeys.Key] = []
        for name in ["alice", "bob", "carol"] {
            try runOpenSSL(["genpkey", "-algorithm", "ed25519", "-out", "\(dir)/\(name).pem"])
            try runOpenSSL(["pkey", "-in", "\(dir)/\(name).pem", "-pubout", "-out", "\(dir)/\(name).pub.pem"])
            publicKeys.append(.init(name: name, publicKey: try Ed25519PublicKey(pem: String(decoding: readFile("\(dir)/\(name).pub.pem"), as: UTF8.self))))
        }
        let trusted = try TrustedKeys(keys: publicKeys, threshold: 2)
        try FirmwarePublisher.write(trusted.encoded(), to: dir + "/trusted-keys.json")

        let package = try makePackage(seed: 99)
        try FirmwarePublisher.write(package.encoded(), to: dir + "/fw.grokfw")
        let meta = metadata(version: 7, packages: [package])
        try FirmwarePublisher.write(meta.payload(), to: dir + "/release.json")

        // alice signs the plain metadata; bob adds his signature to alice's envelope.
        let afterAlice = try FirmwarePublisher.sign(envelopeFile: dir + "/release.json", keyFiles: [dir + "/alice.pem"], output: dir + "/release.signed.json")
        #expect(afterAlice.signatures.count == 1)
        #expect(throws: FirmwareError.belowThreshold(file: "<envelope>", valid: 1, required: 2)) {
            try FirmwarePublisher.publish(envelope: readFile(dir + "/release.signed.json"), packageFiles: [dir + "/fw.grokfw"],
                                          root: dir + "/server", trustedKeys: trusted, now: june2025)
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/server"))
        try FirmwarePublisher.sign(envelopeFile: dir + "/release.signed.json", keyFiles: [dir + "/bob.pem"], output: dir + "/release.signed.json")

        // A listed image missing from the inputs is refused before anything is written.
        #expect(throws: FirmwareError.self) {
            try FirmwarePublisher.publish(envelope: readFile(dir + "/release.signed.json"), packageFiles: [],
                                          root: dir + "/server", trustedKeys: trusted, now: june2025)
        }
        let written = try FirmwarePublisher.publish(envelope: readFile(dir + "/release.signed.json"), packageFiles: [dir + "/fw.grokfw"],
                                                    root: dir + "/server", trustedKeys: trusted, now: june2025)
        #expect(written == [dir + "/server/release/images/fw-1.8.0.grokfw", dir + "/server/release/channel.json"])
        #expect(listing(dir + "/server") == ["release", "release/channel.json", "release/images", "release/images/fw-1.8.0.grokfw"])

        // A client with the trusted-keys file accepts the published tree (as file://).
        let clientKeys = try TrustedKeys.parse(readFile(dir + "/trusted-keys.json"), file: "trusted-keys.json")
        let cache = try FirmwareCache(directory: dir + "/client", verifier: MetadataVerifier(trustedKeys: clientKeys, clock: { june2025 }))
        let channel = try cache.store(metadata: readFile(dir + "/server/release/channel.json"), channel: "release", source: "file://\(dir)/server/release/channel.json")
        #expect(channel.signers.count == 2)
        let entry = channel.metadata.updates[0]
        try FileManager.default.copyItem(atPath: dir + "/server/release/" + entry.file, toPath: cache.partialPath(for: entry))
        try cache.addImage(partialFile: cache.partialPath(for: entry), name: entry.name, in: channel)
        #expect(try cache.image(named: entry.name, in: channel) == package)
    }
}

/// Runs `openssl` with `arguments`, failing the test on a non-zero exit.
func runOpenSSL(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl"] + arguments
    process.standardError = Pipe()
    try process.run()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " ")) failed")
}
