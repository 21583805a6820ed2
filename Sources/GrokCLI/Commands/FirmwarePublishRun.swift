import Foundation
import GrokBasics
import GrokCommandLine
import GrokFirmware
import GrokPublish
import UGrokIt

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
}

/// `grokctl firmware pack`: reads the inputs (any of them may be standard input) and shows
/// what GrokPublish's ``FirmwarePack`` made.
func runFirmwarePack(_ command: FirmwarePackCommand, _ context: CommandContext) throws -> ExitCode {
    // Intel HEX of a whole 64 KiB address space is under 200 KB; a description, far less.
    // Each is read once, at its size.
    let l = context.localizer
    func read(_ file: InputFile) throws -> FirmwarePack.Input {
        FirmwarePack.Input(bytes: try file.readAll(limit: 16 << 20, localizer: l), name: file.name(l))
    }
    let description = try read(command.descriptionFile)
    let application = try read(command.hexFile)
    var pack = FirmwarePack(application: application, loader: try command.loaderFile.map(read), description: description,
                            output: command.outputFile, customOutput: command.customOutput)
    pack.base = command.base
    pack.readerBytes = command.readerBytes
    pack.comments = command.comments
    let made = try pack.make()
    let console = context.console
    if console.isJSON {
        console.json(made)
        return .success
    }
    let (facts, metadata) = (made.image, made.metadata)
    console.say(.packWritten, command.outputFile)
    console.print(l.text(.packageFactFile, facts.file))
    console.print(l.text(.packageFactSize, String(facts.size)))
    console.print(l.text(.packageFactSHA256, facts.sha256))
    console.print(l.text(.packageFactVersion, facts.version))
    console.print(l.text(.packageFactHardware, facts.hardwareName, metadata.hardwareRevisions.map(String.init).joined(separator: ", "),
                         String(metadata.hardwareRevisions.count)))
    console.print(l.text(.packageFactBuildDate, FirmwareText.timestamp(metadata.buildDate)))
    console.print(l.text(.packageFactProtocol, String(metadata.readerProtocol)))
    console.print(l.text(.packageFactAppliesTo, metadata.appliesTo.map { "\($0.min)-\($0.max)" }.joined(separator: ", ")))
    for section in facts.sections {
        console.print(l.text(.packageFactSegment, section.kind, section.address, String(section.length), section.crc32))
    }
    if let customOutput = command.customOutput {
        console.say(.packNextStep, command.outputFile, customOutput)
    } else {
        console.print(made.customJSON)
    }
    return .success
}
