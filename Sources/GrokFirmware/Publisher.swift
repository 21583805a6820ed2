import Foundation
import GrokCrypto
import GrokProtocol

/// What `grokctl firmware pack` needs besides the Intel HEX files: the package header.
/// JSON (see docs/firmware-format.md):
///
/// ```json
/// {"hardware_type": 5, "hardware_revisions": [1, 2], "version": "1.8.0",
///  "build_date": "2025-01-31T12:00:00Z", "reader_protocol": 20,
///  "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}]}
/// ```
public struct PackDescription: Sendable, Hashable, Codable {
    /// The descriptor the package header will carry.
    public var descriptor: FirmwareDescriptor

    /// Creates a description.
    public init(descriptor: FirmwareDescriptor) { self.descriptor = descriptor }

    enum CodingKeys: String, CodingKey {
        case version
        case hardwareType = "hardware_type"
        case hardwareRevisions = "hardware_revisions"
        case buildDate = "build_date"
        case readerProtocol = "reader_protocol"
        case appliesTo = "applies_to"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let raw = try c.decode(UInt8.self, forKey: .hardwareType)
        guard let type = HardwareType(rawValue: raw), type != .unknown else {
            throw DecodingError.dataCorruptedError(forKey: .hardwareType, in: c, debugDescription: "\(raw) is not a known hardware type (5 = GROKKER_1)")
        }
        let text = try c.decode(String.self, forKey: .buildDate)
        guard let date = UTCTime.date(text) else {
            throw DecodingError.dataCorruptedError(forKey: .buildDate, in: c, debugDescription: "'\(text)' is not YYYY-MM-DDTHH:MM:SSZ")
        }
        descriptor = FirmwareDescriptor(
            hardwareType: type, hardwareRevisions: try c.decode([UInt8].self, forKey: .hardwareRevisions),
            version: try c.decode(FirmwareVersion.self, forKey: .version), buildDate: date,
            readerProtocolVersion: try c.decode(UInt16.self, forKey: .readerProtocol),
            appliesTo: try c.decode([VersionRange].self, forKey: .appliesTo))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(descriptor.hardwareType.rawValue, forKey: .hardwareType)
        try c.encode(descriptor.hardwareRevisions, forKey: .hardwareRevisions)
        try c.encode(descriptor.version, forKey: .version)
        try c.encode(UTCTime.format(descriptor.buildDate), forKey: .buildDate)
        try c.encode(descriptor.readerProtocolVersion, forKey: .readerProtocol)
        try c.encode(descriptor.appliesTo, forKey: .appliesTo)
    }

    /// Parses a description file.
    public static func parse(_ bytes: [UInt8], file: String) throws(FirmwareError) -> PackDescription {
        do {
            return try JSONDecoder().decode(PackDescription.self, from: Data(bytes))
        } catch {
            let (field, detail) = describe(error)
            throw .invalidInput(file: file, detail: "\(field) \(detail)")
        }
    }
}

/// The library half of the publisher commands: `grokctl firmware pack`, `grokctl channel
/// sign`, `grokctl channel publish`. Every file is written by temp file, fsync and rename.
public enum FirmwarePublisher {
    // MARK: pack

    /// Builds a package from Intel HEX images and a description. Each image's data is laid
    /// out from its lowest to its highest address, gaps filled with 0xFF (erased flash).
    public static func pack(application: IntelHex, loader: IntelHex? = nil, description: PackDescription) throws(FirmwareError) -> FirmwarePackage {
        func segment(_ hex: IntelHex, _ kind: SegmentKind) throws(FirmwareError) -> FirmwareSegment {
            guard let flat = hex.flattened(limit: FirmwarePackage.maxSegmentLength) else {
                throw .invalidInput(file: "<\(kind) hex>", detail: "the \(kind) image is empty or spans more than \(FirmwarePackage.maxSegmentLength) bytes")
            }
            return try FirmwareSegment(kind: kind, address: flat.address, bytes: flat.bytes)
        }
        return try FirmwarePackage(descriptor: description.descriptor, loader: loader.map { hex throws(FirmwareError) in try segment(hex, .loader) },
                                   application: segment(application, .application))
    }

    /// `grokctl firmware pack`: reads the Intel HEX files and the description, builds the
    /// package and writes it to `output`.
    /// - Returns: the package written.
    @discardableResult
    public static func pack(applicationHexFile: String, loaderHexFile: String?, descriptionFile: String,
                            output: String) throws(FirmwareError) -> FirmwarePackage {
        let application = try IntelHex.parse(readInput(applicationHexFile, limit: 64 << 20), file: applicationHexFile)
        var loader: IntelHex?
        if let loaderHexFile {
            loader = try IntelHex.parse(readInput(loaderHexFile, limit: 64 << 20), file: loaderHexFile)
        }
        let description = try PackDescription.parse(readInput(descriptionFile, limit: 1 << 20), file: descriptionFile)
        let package = try pack(application: application, loader: loader, description: description)
        try write(package.encoded(), to: output)
        return package
    }

    /// The update entry listing `package` as `file` on the server.
    public static func entry(for package: FirmwarePackage, name: String, file: String, notes: [String: String],
                             targets: Targeting? = nil) -> UpdateEntry {
        UpdateEntry(name: name, file: file, descriptor: package.descriptor, size: package.size,
                    sha256: package.sha256, notes: notes, targets: targets)
    }

    // MARK: sign

    /// An unsigned envelope holding `metadata`'s payload; check it first with
    /// ``ChannelMetadata/decode(_:file:)`` rules.
    public static func envelope(for metadata: ChannelMetadata) throws(FirmwareError) -> SignedEnvelope {
        let payload = metadata.payload()
        _ = try ChannelMetadata.decode(payload, file: "<metadata>")
        return SignedEnvelope(payload: payload)
    }

    /// `grokctl channel sign`: adds a signature by each PEM private key in `keyFiles` to the
    /// envelope `envelopeFile` (replacing earlier ones by the same keys) and writes it back
    /// to `output` (which may be the same file). A file holding plain metadata JSON (not an
    /// envelope) is wrapped first, so the first signer can start from the metadata.
    /// - Returns: the signed envelope.
    @discardableResult
    public static func sign(envelopeFile: String, keyFiles: [String], output: String) throws(FirmwareError) -> SignedEnvelope {
        try sign(envelopeFile: envelopeFile, keyFiles: keyFiles, output: output, as: ChannelMetadata.self)
    }

    /// ``sign(envelopeFile:keyFiles:output:)`` for any kind of signed document.
    @discardableResult
    public static func sign<D: SignedDocument>(envelopeFile: String, keyFiles: [String], output: String,
                                               as type: D.Type) throws(FirmwareError) -> SignedEnvelope {
        let bytes = try readInput(envelopeFile, limit: ChannelMetadata.maxEnvelopeSize)
        let envelope: SignedEnvelope
        if (try? D.decode(bytes, file: envelopeFile)) != nil {
            envelope = SignedEnvelope(payload: bytes)
        } else {
            envelope = try SignedEnvelope.parse(bytes, file: envelopeFile)
            _ = try D.decode(envelope.payload, file: envelopeFile)
        }
        var keys: [Ed25519PrivateKey] = []
        for path in keyFiles {
            let pem = try readInput(path, limit: 1 << 16)
            do { keys.append(try Ed25519PrivateKey(pem: String(decoding: pem, as: UTF8.self))) } catch {
                throw .invalidKey(file: path, detail: error.description)
            }
        }
        let signed = try envelope.signed(by: keys)
        try write(signed.encoded(), to: output)
        return signed
    }

    // MARK: publish

    /// `grokctl channel publish`: writes a server directory tree,
    /// `<root>/<channel>/<entry.file>` for every listed image and then
    /// `<root>/<channel>/channel.json`, each atomically (images first, so a client never
    /// sees metadata listing a missing image). Before writing anything it checks that the
    /// envelope verifies against `trustedKeys` at `now` (threshold, expiry) and that every
    /// listed image is among `packageFiles` (matched by SHA-256) with the listed size and header.
    /// - Returns: the paths written.
    @discardableResult
    public static func publish(envelope bytes: [UInt8], packageFiles: [String], root: String,
                               trustedKeys: TrustedKeys, now: Date = Date()) throws(FirmwareError) -> [String] {
        let envelope = try SignedEnvelope.parse(bytes, file: "<envelope>")
        let channelName = try ChannelMetadata.decode(envelope.payload, file: "<envelope>").channel
        let verified = try MetadataVerifier(trustedKeys: trustedKeys, clock: { now })
            .verify(bytes, channel: channelName, highest: nil, file: "<envelope>")
        var byDigest: [SHA256Digest: (path: String, bytes: [UInt8])] = [:]
        for path in packageFiles {
            let image = try readInput(path, limit: 64 << 20)
            byDigest[SHA256.hash(image)] = (path, image)
        }
        var images: [(file: String, bytes: [UInt8])] = []
        for entry in verified.metadata.updates {
            guard let found = byDigest[entry.sha256] else {
                throw .invalidInput(file: entry.file, detail: "no package file given has the SHA-256 \(entry.sha256.hex) that update '\(entry.name)' lists")
            }
            _ = try verified.bind(image: found.bytes, to: entry.name, file: found.path)
            images.append((entry.file, found.bytes))
        }
        let channelDirectory = root + "/" + channelName
        var written: [String] = []
        for image in images {
            let path = channelDirectory + "/" + image.file
            try Files.makeDirectories(Files.parent(of: path))
            try Files.replace(path, with: image.bytes)
            written.append(path)
        }
        try Files.makeDirectories(channelDirectory)
        let channelFile = channelDirectory + "/channel.json"
        try Files.replace(channelFile, with: bytes)
        written.append(channelFile)
        return written
    }

    // MARK: Files

    /// Reads an input file (at most `limit` bytes).
    public static func readInput(_ path: String, limit: Int) throws(FirmwareError) -> [UInt8] {
        try Files.readExisting(path, limit: limit) { .invalidInput(file: path, detail: "\($0) bytes is larger than \(limit)") }
    }

    /// Writes `bytes` to `path` by temp file, fsync and rename.
    public static func write(_ bytes: [UInt8], to path: String) throws(FirmwareError) {
        try Files.replace(path, with: bytes)
    }
}
