import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol

/// Fuzz targets for the firmware parsers: Intel HEX, packages and signed channel metadata.
enum FirmwareFuzz {
    static let targets: [FuzzTarget] = [
        FuzzTarget(name: "hex", summary: "Intel HEX parser (IntelHex.parse)", seeds: seedHex) { bytes in
            guard let hex = try? IntelHex.parse(bytes, file: "fuzz", limit: 1 << 20) else { return }
            let again = try? IntelHex.parse(hex.encoded(), file: "fuzz", limit: 1 << 20)
            FuzzTarget.check(again == hex, "Intel HEX re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "package", summary: "firmware package parser (FirmwarePackage.parse)", seeds: seedPackages) { bytes in
            guard let package = try? FirmwarePackage.parse(bytes, file: "fuzz") else { return }
            FuzzTarget.check(package.encoded() == bytes, "a package that parses is not byte-for-byte canonical", bytes)
            FuzzTarget.check(package.sha256 == SHA256.hash(bytes), "package digest differs from its bytes", bytes)
        },
        FuzzTarget(name: "envelope", summary: "signed channel metadata (envelope, signatures, metadata JSON)", seeds: seedEnvelopes) { bytes in
            runEnvelope(bytes)
        },
    ]

    /// A fixed signer (RFC 8032 test vector 1's seed) and the trusted keys that accept it.
    static let signerSeed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
    static let trusted: TrustedKeys = {
        let key = try! Ed25519PrivateKey(rawRepresentation: signerSeed)
        return try! TrustedKeys(keys: [.init(name: "fuzz", publicKey: key.publicKey)], threshold: 1)
    }()

    static func runEnvelope(_ bytes: [UInt8]) {
        // The whole path a client runs: parse, signatures, metadata, freshness.
        let verifier = MetadataVerifier(trustedKeys: trusted, clock: { Date(timeIntervalSince1970: 1_748_736_000) })
        _ = try? verifier.verify(bytes, channel: "release", highest: nil, file: "fuzz")
        guard let envelope = try? SignedEnvelope.parse(bytes, file: "fuzz") else { return }
        let again = try? SignedEnvelope.parse(envelope.encoded(), file: "fuzz")
        FuzzTarget.check(again == envelope, "envelope re-encoding changed its value", bytes)
        // The payload is fuzzed as metadata JSON too (signatures aside).
        guard let metadata = try? ChannelMetadata.decode(envelope.payload, file: "fuzz") else { return }
        let decoded = try? ChannelMetadata.decode(metadata.payload(), file: "fuzz")
        FuzzTarget.check(decoded == metadata, "metadata re-encoding changed its value", bytes)
    }

    static let package: FirmwarePackage = {
        let descriptor = FirmwareDescriptor(
            hardwareType: .grokker1, hardwareRevisions: [1, 2], version: FirmwareVersion(major: 1, minor: 8, build: 0),
            buildDate: Date(timeIntervalSince1970: 1_735_689_600), readerProtocolVersion: 20,
            appliesTo: [try! VersionRange(min: FirmwareVersion(major: 1, minor: 0, build: 0), max: FirmwareVersion(major: 1, minor: 7, build: 9))])
        return try! FirmwarePackage(
            descriptor: descriptor,
            loader: FirmwareSegment(kind: .loader, address: 0x0800_0000, bytes: Array(0..<24)),
            application: FirmwareSegment(kind: .application, address: 0x0800_4000, bytes: Array(UInt8(100)..<UInt8(180))))
    }()

    @Sendable static func seedHex() -> [[UInt8]] {
        let image = try! IntelHex(segments: [MemorySegment(address: 0x0800_FFF8, bytes: Array(0..<40)),
                                             MemorySegment(address: 0x100, bytes: [1, 2, 3])], startAddress: 0x0800_0101)
        return [Array(image.encoded().utf8),
                Array(":020000021000EC\n:03001000010203E7\n:0400000300120034B3\n:00000001FF\n".utf8)]
    }

    @Sendable static func seedPackages() -> [[UInt8]] {
        let bare = try! FirmwarePackage(descriptor: package.descriptor, loader: nil, application: package.application)
        return [package.encoded(), bare.encoded()]
    }

    @Sendable static func seedEnvelopes() -> [[UInt8]] {
        let entry = FirmwarePublisher.entry(for: package, name: "grokker-1.8.0", file: "images/fw-1.8.0.grokfw",
                                            notes: ["en": "Faster.", "de": "Schneller."], targets: Targeting(serials: [7], cohorts: ["pilot"]))
        let metadata = ChannelMetadata(channel: "release", version: 3, expires: Date(timeIntervalSince1970: 1_767_225_600),
                                       cohorts: ["pilot": Cohort(serials: [1], ranges: [.init(from: 10, through: 20)])], updates: [entry])
        let key = try! Ed25519PrivateKey(rawRepresentation: signerSeed)
        let signed = try! FirmwarePublisher.envelope(for: metadata).signed(by: [key])
        return [signed.encoded(), SignedEnvelope(payload: metadata.payload()).encoded()]
    }
}
