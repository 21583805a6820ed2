import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol

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

/// `grokctl firmware pack`: Intel HEX + description -> package; prints its facts and the
/// `size` / `sha256` the channel metadata must list.
func runFirmwarePack(_ command: FirmwarePackCommand, _ context: CommandContext) throws -> ExitCode {
    let package = try FirmwarePublisher.pack(
        applicationHexFile: command.hexFile, loaderHexFile: command.loaderFile,
        descriptionFile: command.descriptionFile, output: command.outputFile)
    let facts = PackageFacts(file: command.outputFile, package: package)
    let console = context.console
    if console.isJSON {
        console.json(facts)
    } else {
        console.say(.packWritten, command.outputFile)
        for line in facts.lines(context.localizer) { console.print(line) }
        console.say(.packNextStep, String(package.size), package.sha256.hex)
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
