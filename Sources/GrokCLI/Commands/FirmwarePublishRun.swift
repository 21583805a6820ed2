import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTUF

/// The facts of a firmware package, as `firmware pack` and `firmware verify` print them;
/// also their `--json` form.
struct PackageFacts: Encodable, Sendable {
    struct Segment: Encodable, Sendable {
        let kind: String
        let address: String
        let length: Int
        let crc32: String
    }
    struct Range: Encodable, Sendable {
        let min: String
        let max: String
    }
    let file: String
    let size: Int
    let sha256: String
    let version: String
    let hardwareType: Int
    let hardwareName: String
    let hardwareRevisions: [Int]
    let buildDate: String
    let readerProtocol: Int
    let appliesTo: [Range]
    let segments: [Segment]

    enum CodingKeys: String, CodingKey {
        case file, size, sha256, version, segments
        case hardwareType = "hardware_type"
        case hardwareName = "hardware_name"
        case hardwareRevisions = "hardware_revisions"
        case buildDate = "build_date"
        case readerProtocol = "reader_protocol"
        case appliesTo = "applies_to"
    }

    init(file: String, package: FirmwarePackage) {
        self.file = file
        size = package.size
        sha256 = package.sha256.hex
        let d = package.descriptor
        version = d.version.description
        hardwareType = Int(d.hardwareType.rawValue)
        hardwareName = d.hardwareType.vendorName
        hardwareRevisions = d.hardwareRevisions.map(Int.init)
        buildDate = FirmwareText.timestamp(d.buildDate)
        readerProtocol = Int(d.readerProtocolVersion)
        appliesTo = d.appliesTo.map { Range(min: $0.min.description, max: $0.max.description) }
        segments = package.segments.map {
            Segment(kind: $0.kind.description, address: FirmwareText.hex32($0.address), length: $0.bytes.count,
                    crc32: FirmwareText.hex32($0.crc32))
        }
    }

    /// The facts as labelled lines in `localizer`'s language.
    func lines(_ localizer: Localizer) -> [String] {
        var lines = [
            localizer.text(.packageFactFile, file),
            localizer.text(.packageFactSize, String(size)),
            localizer.text(.packageFactSHA256, sha256),
            localizer.text(.packageFactVersion, version),
            localizer.text(.packageFactHardware, hardwareName, hardwareRevisions.map(String.init).joined(separator: ", ")),
            localizer.text(.packageFactBuildDate, buildDate),
            localizer.text(.packageFactProtocol, String(readerProtocol)),
            localizer.text(.packageFactAppliesTo, appliesTo.map { "\($0.min)-\($0.max)" }.joined(separator: ", ")),
        ]
        for segment in segments {
            lines.append(localizer.text(
                .packageFactSegment, segment.kind, segment.address, String(segment.length), segment.crc32))
        }
        return lines
    }
}

/// Formatting shared by the firmware commands.
enum FirmwareText {
    /// `2025-01-31T12:00:00Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// `2025-01-31`.
    static func day(_ date: Date) -> String { String(timestamp(date).prefix(10)) }

    /// `0x08008000`.
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

/// What `firmware pack` made; its `--json` form (`custom` is what `repo add --custom` takes).
struct UgifFacts: Encodable {
    struct Section: Encodable {
        let kind: String
        let address: String
        let length: Int
        let crc32: String
    }
    let file: String
    let size: Int
    let sha256: String
    let version: String
    let hardwareName: String
    let sections: [Section]
    let custom: CustomReport

    enum CodingKeys: String, CodingKey {
        case file, size, sha256, version, sections, custom
        case hardwareName = "hardware_name"
    }
}

/// A firmware target's custom object (the description and `"kind": "firmware"`) in a report.
struct CustomReport: Encodable {
    let metadata: FirmwareReleaseMetadata
    enum Key: String, CodingKey { case kind }
    func encode(to encoder: any Encoder) throws {
        try metadata.encode(to: encoder)
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(FirmwareReleaseMetadata.kind, forKey: .kind)
    }
}

/// `grokctl firmware pack`: Intel HEX (application, optional loader) + description -> the
/// vendor's `.ugif` image, and the description as the TUF target's custom object that
/// `grokctl repo add --custom` lists beside it.
func runFirmwarePack(_ command: FirmwarePackCommand, _ context: CommandContext) throws -> ExitCode {
    func read(_ file: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw FirmwareError.io(path: file, operation: "read", detail: "cannot be read")
        }
        return Array(data)
    }
    let metadata = try FirmwareReleaseMetadata.decode(try read(command.descriptionFile), file: command.descriptionFile)
    var application = try IntelHex.parse(try read(command.hexFile), file: command.hexFile)
    if let limit = command.readerBytes, let flat = application.flattened(), flat.bytes.count > limit {
        application = try IntelHex(segments: [MemorySegment(address: flat.address, bytes: Array(flat.bytes.prefix(limit)))])
    }
    let loader = try command.loaderFile.map { file throws -> IntelHex in try IntelHex.parse(try read(file), file: file) }
    guard metadata.version.build <= UInt16(UInt8.max) else {
        throw FirmwareError.invalidInput(file: command.descriptionFile, detail: "version \(metadata.version): a .ugif build number is 0 to 255")
    }
    let name = URL(fileURLWithPath: command.outputFile).lastPathComponent
    let image: UgifImage
    do {
        image = try UgifImage.make(application: application, loader: loader, base: command.base,
                                   hardwareTypeName: FirmwareRelease.hardwareTypeName(metadata.hardwareType),
                                   version: UgifVersion(major: metadata.version.major, minor: metadata.version.minor,
                                                        build: UInt8(metadata.version.build)),
                                   date: FirmwareText.day(metadata.buildDate))
        let named = try UgifImage.parseFileName(name)
        guard named.hardwareTypeName == image.hardwareTypeName, named.version == image.version else {
            throw FirmwareError.invalidInput(file: command.outputFile,
                                             detail: "the vendor names this image \(image.fileName(name: "NAME")); the file name must say the same hardware and version")
        }
    } catch let error as UgifError {
        throw FirmwareError.invalidInput(file: command.outputFile, detail: error.description)
    }
    let bytes = Array(image.encoded(comments: command.comments).utf8)
    // Checked as a station will check it, before anything is written.
    let release = try FirmwareRelease.check(bytes, path: name, metadata: metadata)
    try FirmwarePublisher.write(bytes, to: command.outputFile)
    let custom = metadata.custom()
    if let customOutput = command.customOutput {
        try FirmwarePublisher.write(JSONWriter.encode(custom, indent: 2) + [0x0A], to: customOutput)
    }
    var sections: [UgifFacts.Section] = []
    for (kind, section) in [("loader", image.loader), ("reader", Optional(image.reader))] {
        guard let section else { continue }
        sections.append(.init(kind: kind, address: FirmwareText.hex32(UInt32(section.address)), length: section.bytes.count,
                              crc32: FirmwareText.hex32(section.crc32)))
    }
    let facts = UgifFacts(file: command.outputFile, size: release.length, sha256: release.sha256.hex, version: release.version.description,
                          hardwareName: image.hardwareTypeName, sections: sections, custom: CustomReport(metadata: metadata))
    let console = context.console
    if console.isJSON {
        console.json(facts)
    } else {
        console.say(.packWritten, command.outputFile)
        let l = context.localizer
        console.print(l.text(.packageFactFile, facts.file))
        console.print(l.text(.packageFactSize, String(facts.size)))
        console.print(l.text(.packageFactSHA256, facts.sha256))
        console.print(l.text(.packageFactVersion, facts.version))
        console.print(l.text(.packageFactHardware, facts.hardwareName, metadata.hardwareRevisions.map(String.init).joined(separator: ", ")))
        console.print(l.text(.packageFactBuildDate, FirmwareText.timestamp(metadata.buildDate)))
        console.print(l.text(.packageFactProtocol, String(metadata.readerProtocol)))
        console.print(l.text(.packageFactAppliesTo, metadata.appliesTo.map { "\($0.min)-\($0.max)" }.joined(separator: ", ")))
        for section in sections {
            console.print(l.text(.packageFactSegment, section.kind, section.address, String(section.length), section.crc32))
        }
        if let customOutput = command.customOutput {
            console.say(.packNextStep, command.outputFile, customOutput)
        } else {
            console.print(String(decoding: JSONWriter.encode(custom, indent: 2), as: UTF8.self))
        }
    }
    return .success
}

/// What `channel sign` did; its `--json` form.
struct SignReport: Encodable {
    let output: String
    let channel: String
    let version: UInt64
    let signatures: [String]
}

/// `grokctl channel sign`: adds each key holder's signature (the first run wraps plain
/// metadata JSON in an envelope).
func runChannelSign(_ command: ChannelSignCommand, _ context: CommandContext) throws -> ExitCode {
    let signed = try FirmwarePublisher.sign(envelopeFile: command.metadataFile, keyFiles: command.keyFiles,
                                            output: command.outputFile)
    let metadata = try ChannelMetadata.decode(signed.payload, file: command.outputFile)
    let report = SignReport(output: command.outputFile, channel: metadata.channel, version: metadata.version,
                            signatures: signed.signatures.map(\.keyID))
    let console = context.console
    if console.isJSON {
        console.json(report)
    } else {
        console.print(context.localizer.text(
            .signDone, command.outputFile, metadata.channel, String(metadata.version), String(signed.signatures.count)))
        for keyID in report.signatures { console.print("  " + keyID) }
    }
    return .success
}

/// What `channel publish` wrote; its `--json` form.
struct PublishReport: Encodable {
    let channel: String
    let version: UInt64
    let root: String
    let written: [String]
}

/// `grokctl channel publish`: checks the signed metadata against the trusted keys (naming
/// the real file in any error), then writes the server tree.
func runChannelPublish(_ command: ChannelPublishCommand, _ context: CommandContext) throws -> ExitCode {
    let keys = try TrustedKeys.parse(
        FirmwarePublisher.readInput(command.trustedKeysFile, limit: 1 << 20), file: command.trustedKeysFile)
    let bytes = try FirmwarePublisher.readInput(command.metadataFile, limit: ChannelMetadata.maxEnvelopeSize)
    let envelope = try SignedEnvelope.parse(bytes, file: command.metadataFile)
    let channel = try ChannelMetadata.decode(envelope.payload, file: command.metadataFile).channel
    let verified = try MetadataVerifier(trustedKeys: keys)
        .verify(bytes, channel: channel, highest: nil, file: command.metadataFile)
    let written = try FirmwarePublisher.publish(
        envelope: bytes, packageFiles: command.packageFiles, root: command.rootDirectory, trustedKeys: keys)
    let console = context.console
    if console.isJSON {
        console.json(PublishReport(channel: channel, version: verified.metadata.version, root: command.rootDirectory,
                                   written: written))
    } else {
        for path in written { console.print(context.localizer.text(.publishWrote, path)) }
        console.say(.publishDone, channel, String(verified.metadata.version), command.rootDirectory)
    }
    return .success
}
