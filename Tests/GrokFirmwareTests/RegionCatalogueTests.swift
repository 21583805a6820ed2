import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import Testing

@Suite("Region catalogue")
struct RegionCatalogueTests {
    /// Revision 3 in 10000000...49999999: FCC and ETSI only; revision 3 in 50000000...: all;
    /// revision 2: FCC.
    static let eligibility = [
        RegionEligibility(hardwareRevisions: [3], serials: Cohort(ranges: [.init(from: 10_000_000, through: 49_999_999)]),
                          regions: ["fcc", "etsi"]),
        RegionEligibility(hardwareRevisions: [3], serials: Cohort(ranges: [.init(from: 50_000_000, through: 99_999_999)]),
                          regions: RegionCatalog.entries.map(\.code)),
        RegionEligibility(hardwareRevisions: [2], regions: ["fcc"]),
    ]

    static func catalogue(version: UInt64 = 1, expires: Date = january2026) throws -> RegionCatalogue {
        try RegionPublisher.catalogue(version: version, expires: expires, eligibility: eligibility)
    }

    @Test("published with all 22 regions; each unit gets the regions its revision and serial may choose")
    func eligibilityByRevisionAndSerial() throws {
        let catalogue = try Self.catalogue()
        #expect(catalogue.regions == RegionCatalog.entries)
        #expect(catalogue.regions(hardwareRevision: 3, serial: 12_345_678).map(\.code) == ["fcc", "etsi"])
        #expect(catalogue.regions(hardwareRevision: 3, serial: 55_555_555).count == 22)
        #expect(catalogue.regions(hardwareRevision: 2, serial: 55_555_555).map(\.code) == ["fcc"])
        #expect(catalogue.regions(hardwareRevision: 1, serial: 55_555_555).isEmpty)
        // The payload decodes to the same catalogue, byte-stable.
        let back = try RegionCatalogue.decode(catalogue.payload(), file: "p")
        #expect(back == catalogue && back.payload() == catalogue.payload())
    }

    @Test("signed k of n and cached as regions.json; verified again offline; rollback, expiry and too few signers refused")
    func signedLikeChannels() throws {
        let ring = try KeyRing(count: 3, threshold: 2)
        let directory = try scratchDirectory("regions")
        defer { cleanup(directory) }
        let cache = try FirmwareCache(directory: directory, verifier: MetadataVerifier(trustedKeys: ring.trusted, clock: { june2025 }))
        let v2 = try RegionPublisher.envelope(for: Self.catalogue(version: 2)).signed(by: Array(ring.keys.prefix(2))).encoded()
        let stored = try cache.storeRegions(v2, source: "https://updates.example/regions.json")
        #expect(stored.document.version == 2 && stored.signers.count == 2)
        #expect(FileManager.default.fileExists(atPath: directory + "/regions.json"))
        #expect(try cache.regions().document.regions(hardwareRevision: 2, serial: 1).map(\.code) == ["fcc"])
        #expect(try cache.highestAccepted(document: "regions")?.version == 2)
        #expect(cache.regionValidators()?.source == "https://updates.example/regions.json")
        let before = try readFile(directory + "/regions.json")

        // One signature of the two required.
        let single = try RegionPublisher.envelope(for: Self.catalogue(version: 3)).signed(by: [ring.keys[0]]).encoded()
        #expect(throws: FirmwareError.belowThreshold(file: "s", valid: 1, required: 2)) { try cache.storeRegions(single, source: "s") }
        // An older version (rollback).
        let v1 = try RegionPublisher.envelope(for: Self.catalogue(version: 1)).signed(by: ring.keys).encoded()
        #expect(throws: FirmwareError.metadataRollback(file: "r", channel: "regions", found: 1, highest: 2)) {
            try cache.storeRegions(v1, source: "r")
        }
        // Expired (freeze).
        let stale = try RegionPublisher.envelope(for: Self.catalogue(version: 4, expires: january2025)).signed(by: ring.keys).encoded()
        #expect(throws: FirmwareError.self) { try cache.storeRegions(stale, source: "e") }
        // Channel metadata served as the region catalogue.
        let channel = try signedEnvelope(metadata(version: 5, packages: [makePackage()]), by: ring.keys)
        #expect(throws: FirmwareError.typeMismatch(file: "c", expected: RegionCatalogue.typeMarker, found: ChannelMetadata.typeMarker)) {
            try cache.storeRegions(channel, source: "c")
        }
        #expect(try readFile(directory + "/regions.json") == before)
        #expect(try cache.regions().document.version == 2)
        // The region catalogue's rollback state does not touch any channel's.
        #expect(try cache.highestAccepted(channel: "regions") == nil)
        #expect(cache.verify().contains { $0.path == "regions.json" && $0.status == .ok })
        // Once expired, the cached copy is refused too.
        let later = try FirmwareCache(directory: directory, verifier: MetadataVerifier(trustedKeys: ring.trusted, clock: { january2026 }))
        #expect(throws: FirmwareError.self) { try later.regions() }
    }

    @Test("a signed catalogue with an entry looser than the firmware's limits is refused, naming region, field, expected, found")
    func looserEntriesAreRefused() throws {
        let ring = try KeyRing(count: 1, threshold: 1)
        var loud = RegionCatalog.entries
        loud[1].maxPowerDBm = 36  // ETSI's lower band allows 2 W ERP, not 4.
        var offBand = RegionCatalog.entries
        offBand[0].channelsKHz[49] = 928_250
        for (regions, region, field) in [(loud, "ETSI (EU)", "max_power_dbm"), (offBand, "FCC (US), IC (Canada)", "channels_khz[49]")] {
            let bad = RegionCatalogue(version: 9, expires: january2026, regions: regions, eligibility: Self.eligibility)
            #expect(throws: FirmwareError.self) { try RegionPublisher.catalogue(version: 9, expires: january2026, eligibility: Self.eligibility, regions: regions) }
            // Signed anyway (the publisher's check bypassed): the client still refuses it.
            let envelope = try SignedEnvelope(payload: bad.payload()).signed(by: ring.keys).encoded()
            let verifier = MetadataVerifier(trustedKeys: ring.trusted, clock: { june2025 })
            do {
                _ = try verifier.verify(envelope, as: RegionCatalogue.self, name: "regions", highest: nil, file: "x")
                Issue.record("accepted \(field)")
            } catch {
                guard case .regionInvalid(let file, let r, let f, let expected, let found) = error else { Issue.record("\(error)"); continue }
                #expect(file == "x" && r == region && f == field && !expected.isEmpty && !found.isEmpty)
                #expect(error.code == "firmware_region_invalid" && error.arguments.count == 5)
            }
        }
        // Eligibility naming a region the catalogue does not list.
        let unknown = [RegionEligibility(hardwareRevisions: [3], regions: ["atlantis"])]
        #expect(throws: FirmwareError.self) { try RegionPublisher.catalogue(version: 1, expires: january2026, eligibility: unknown) }
    }

    @Test("the publisher signs with key files and writes regions.json only when it verifies")
    func publisherFiles() throws {
        let directory = try scratchDirectory("regions-pub")
        defer { cleanup(directory) }
        // Key holders make their keys with openssl; only the public halves reach the client.
        var keyFiles: [String] = []
        var publicKeys: [TrustedKeys.Key] = []
        for name in ["alice", "bob"] {
            try runOpenSSL(["genpkey", "-algorithm", "ed25519", "-out", "\(directory)/\(name).pem"])
            try runOpenSSL(["pkey", "-in", "\(directory)/\(name).pem", "-pubout", "-out", "\(directory)/\(name).pub.pem"])
            keyFiles.append("\(directory)/\(name).pem")
            publicKeys.append(.init(name: name, publicKey: try Ed25519PublicKey(pem: String(decoding: readFile("\(directory)/\(name).pub.pem"), as: UTF8.self))))
        }
        let ring = (trusted: try TrustedKeys(keys: publicKeys, threshold: 2), ())
        let plain = directory + "/catalogue.json"
        try writeFile(plain, Self.catalogue(version: 7).payload())
        let half = try RegionPublisher.sign(envelopeFile: plain, keyFiles: [keyFiles[0]], output: directory + "/signed.json")
        #expect(half.signatures.count == 1)
        #expect(throws: FirmwareError.self) {
            try RegionPublisher.publish(envelope: half.encoded(), root: directory + "/www", trustedKeys: ring.trusted, now: june2025)
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/www/regions.json"))
        let full = try RegionPublisher.sign(envelopeFile: directory + "/signed.json", keyFiles: [keyFiles[1]], output: directory + "/signed.json")
        #expect(full.signatures.count == 2)
        let path = try RegionPublisher.publish(envelope: full.encoded(), root: directory + "/www", trustedKeys: ring.trusted, now: june2025)
        #expect(path == directory + "/www/regions.json")
        #expect(try readFile(path) == full.encoded())
    }
}
