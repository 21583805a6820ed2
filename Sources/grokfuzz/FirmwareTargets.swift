import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTUF

/// Fuzz targets for the firmware channel's parsers: Intel HEX, the vendor's `.ugif` image,
/// TUF metadata (strict JSON, then each role's shape) and a firmware target's description.
enum FirmwareFuzz {
    static let targets: [FuzzTarget] = [
        FuzzTarget(name: "hex", summary: "Intel HEX parser (IntelHex.parse)", seeds: seedHex) { bytes in
            guard let hex = try? IntelHex.parse(bytes, file: "fuzz", limit: 1 << 20) else { return }
            let again = try? IntelHex.parse(hex.encoded(), file: "fuzz", limit: 1 << 20)
            FuzzTarget.check(again == hex, "Intel HEX re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "ugif", summary: "vendor .ugif image parser (UgifImage.parse)", seeds: seedUgif) { bytes in
            guard let text = String(validating: bytes, as: UTF8.self),
                  let image = try? UgifImage.parse(text, fileName: "GR-1_1-8-0_fuzz.ugif") else { return }
            let again = try? UgifImage.parse(image.encoded(), fileName: "GR-1_1-8-0_fuzz.ugif")
            FuzzTarget.check(again == image, ".ugif re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "tuf-metadata", summary: "TUF metadata (JSONParser, then root / timestamp / snapshot / targets)",
                   seeds: seedMetadata) { bytes in
            guard let json = try? JSONParser.parse(bytes) else { return }
            // Canonical JSON of a parsed value parses back to the same value (control
            // characters aside, which canonical JSON writes raw).
            if let canonical = try? CanonicalJSON.encode(json, role: "targets"), let again = try? JSONParser.parse(canonical) {
                FuzzTarget.check(again == json, "canonical JSON changed the value", bytes)
            }
            _ = try? RootMetadata(bytes)
            _ = try? TimestampMetadata(bytes)
            _ = try? SnapshotMetadata(bytes)
            if let targets = try? TargetsMetadata(bytes, role: "release") {
                for target in targets.targets.values { _ = try? FirmwareListing(target) }
            }
        },
        FuzzTarget(name: "release", summary: "a firmware target's description (FirmwareReleaseMetadata.decode)", seeds: seedRelease) { bytes in
            guard let metadata = try? FirmwareReleaseMetadata.decode(bytes, file: "fuzz") else { return }
            let again = try? FirmwareReleaseMetadata.decode(JSONWriter.encode(metadata.custom()), file: "fuzz")
            FuzzTarget.check(again == metadata, "a description's custom object changed its value", bytes)
        },
    ]

    static let metadata = FirmwareReleaseMetadata(
        version: FirmwareVersion(major: 1, minor: 8, build: 0), hardwareType: .grokker1, hardwareRevisions: [1, 3],
        appliesTo: [try! VersionRange(min: FirmwareVersion(major: 1, minor: 0, build: 0), max: FirmwareVersion(major: 1, minor: 7, build: 9))],
        buildDate: Date(timeIntervalSince1970: 1_735_689_600), readerProtocol: 20, notes: ["en": "Faster.", "de": "Schneller."],
        serials: Cohort(serials: [7], ranges: [.init(from: 10, through: 20)]))

    @Sendable static func seedHex() -> [[UInt8]] {
        let image = try! IntelHex(segments: [MemorySegment(address: 0x0800_FFF8, bytes: Array(0..<40)),
                                             MemorySegment(address: 0x100, bytes: [1, 2, 3])], startAddress: 0x0800_0101)
        return [Array(image.encoded().utf8),
                Array(":020000021000EC\n:03001000010203E7\n:0400000300120034B3\n:00000001FF\n".utf8)]
    }

    @Sendable static func seedUgif() -> [[UInt8]] {
        let image = try! UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 8, build: 0), date: "2026-12-01",
                                   loader: UgifSection(address: 0, bytes: Array(0..<48)),
                                   reader: UgifSection(address: 0x400, bytes: Array(UInt8(100)..<UInt8(180))))
        let bare = try! UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 8, build: 0), date: "x",
                                  loader: nil, reader: UgifSection(address: 0x10, bytes: [1, 2, 3]))
        return [Array(image.encoded(comments: ["seed"]).utf8), Array(bare.encoded().utf8)]
    }

    @Sendable static func seedMetadata() -> [[UInt8]] {
        // A validly signed channel (targets) role listing one firmware target, and a root.
        let key = try! TUFSigningKey.ed25519()
        let image = seedUgif()[0]
        let target = JSON.object(JSONObject([
            ("length", .integer(Int64(image.count))), ("hashes", .object(JSONObject([("sha256", .string(SHA256.hash(image).hex))])!)),
            ("custom", metadata.custom()),
        ])!)
        let targets = JSONObject([
            ("_type", .string("targets")), ("spec_version", .string("1.0.31")), ("version", .integer(2)),
            ("expires", .string("2030-01-01T00:00:00Z")),
            ("targets", .object(JSONObject([("release/GR-1_1-8-0_fuzz.ugif", target)])!)),
        ])!
        let root = JSONObject([
            ("_type", .string("root")), ("spec_version", .string("1.0.31")), ("version", .integer(1)),
            ("expires", .string("2030-01-01T00:00:00Z")), ("consistent_snapshot", .bool(true)),
            ("keys", .object(JSONObject([(key.keyID, .object(key.publicKeyJSON))])!)),
            ("roles", .object(JSONObject(["root", "timestamp", "snapshot", "targets"].map { role in
                (role, JSON.object(JSONObject([("keyids", .array([.string(key.keyID)])), ("threshold", .integer(1))])!))
            })!)),
        ])!
        return [try! signMetadata(targets, with: [key]), try! signMetadata(root, with: [key])]
    }

    @Sendable static func seedRelease() -> [[UInt8]] {
        [JSONWriter.encode(metadata.custom()), Array(#"{"version":"1.8.0","hardware_type":5,"hardware_revisions":[3],"applies_to":[{"min":"1.0.0","max":"1.7.9"}],"build_date":"2026-12-01T00:00:00Z","reader_protocol":20,"notes":{"en":"x"}}"#.utf8)]
    }
}
