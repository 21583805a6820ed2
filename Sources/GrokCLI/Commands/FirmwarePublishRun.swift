import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTUF

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

/// What `firmware pack` made; its `--json` form: the image's facts (as `firmware verify`
/// reports them) and `custom`, what `repo add --custom` takes.
struct PackReport: Encodable {
    let image: UgifFileFacts
    let custom: CustomReport

    enum Key: String, CodingKey { case custom }

    func encode(to encoder: any Encoder) throws {
        try image.encode(to: encoder)
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(custom, forKey: .custom)
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
    // Intel HEX of a whole 64 KiB address space is under 200 KB; a description, far less.
    // Each is read once, at its size (one of them may be standard input).
    let localizer = context.localizer
    func read(_ file: InputFile) throws -> [UInt8] { try file.readAll(limit: 16 << 20, localizer: localizer) }
    let metadata = try FirmwareReleaseMetadata.decode(try read(command.descriptionFile), file: command.descriptionFile.name(localizer))
    var application = try IntelHex.parse(try read(command.hexFile), file: command.hexFile.name(localizer))
    if let limit = command.readerBytes, let flat = application.flattened(), flat.bytes.count > limit {
        application = try IntelHex(segments: [MemorySegment(address: flat.address, bytes: Array(flat.bytes.prefix(limit)))])
    }
    let loader = try command.loaderFile.map { file throws -> IntelHex in try IntelHex.parse(try read(file), file: file.name(localizer)) }
    guard metadata.version.build <= UInt16(UInt8.max) else {
        throw FirmwareError.invalidInput(file: command.descriptionFile.name(localizer), detail: ErrorDetail("build_too_large", ["\(metadata.version)"]))
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
                                             detail: ErrorDetail("name_disagrees", [image.fileName(name: "NAME")]))
        }
    } catch let error as UgifError {
        throw FirmwareError.invalidInput(file: command.outputFile, detail: .ugif(error))
    }
    let bytes = Array(image.encoded(comments: command.comments).utf8)
    // Checked as a station will check it, before anything is written.
    _ = try FirmwareRelease.check(bytes, path: name, metadata: metadata)
    try FirmwareFiles.write(bytes, to: command.outputFile)
    let custom = metadata.custom()
    if let customOutput = command.customOutput {
        try FirmwareFiles.write(JSONWriter.encode(custom, indent: 2) + [0x0A], to: customOutput)
    }
    let written = UgifFileFacts(file: command.outputFile, bytes: bytes, image: image)
    let facts = PackReport(image: written, custom: CustomReport(metadata: metadata))
    let console = context.console
    if console.isJSON {
        console.json(facts)
    } else {
        console.say(.packWritten, command.outputFile)
        let l = context.localizer
        console.print(l.text(.packageFactFile, written.file))
        console.print(l.text(.packageFactSize, String(written.size)))
        console.print(l.text(.packageFactSHA256, written.sha256))
        console.print(l.text(.packageFactVersion, written.version))
        console.print(l.text(.packageFactHardware, written.hardwareName, metadata.hardwareRevisions.map(String.init).joined(separator: ", ")))
        console.print(l.text(.packageFactBuildDate, FirmwareText.timestamp(metadata.buildDate)))
        console.print(l.text(.packageFactProtocol, String(metadata.readerProtocol)))
        console.print(l.text(.packageFactAppliesTo, metadata.appliesTo.map { "\($0.min)-\($0.max)" }.joined(separator: ", ")))
        for section in written.sections {
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
