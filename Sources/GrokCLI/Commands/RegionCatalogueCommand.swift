import Foundation
import GrokCommandLine
import GrokFirmware
import UGrokIt

/// `grokctl region catalogue`: the region catalogue (docs/regions.md) — made by a fleet
/// owner, listed as a target of the TUF repository (`grokctl repo add`), fetched and
/// verified by a station.
struct RegionCatalogueCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "catalogue", abstract: .commandRegionCatalogueAbstract,
            subcommands: [RegionCatalogueMakeCommand.self, RegionCatalogueUpdateCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// `grokctl region catalogue make --version N --expires DATE --revisions 1,2,3 --output FILE`:
/// an unsigned catalogue of the firmware's 22 regions, every one open to the given board revisions.
struct RegionCatalogueMakeCommand: Command {
    static let version = OptionDeclaration.option("version", value: .valueNumber, help: .optionCatalogueVersion, required: true,
                                                  type: .integer(1...Int.max))
    static let expires = OptionDeclaration.option("expires", value: .valueDate, help: .optionCatalogueExpires, required: true)
    static let revisions = OptionDeclaration.option("revisions", value: .valueList, help: .optionCatalogueRevisions, defaultValue: "3")
    static let output = OptionDeclaration.option("output", short: "o", value: .valueFile, help: .optionCatalogueOutput, required: true, type: .file)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "make", abstract: .commandRegionCatalogueMakeAbstract, options: [version, expires, revisions, output])
    }

    let version: UInt64
    let expires: Date
    let revisions: [UInt8]
    let outputFile: String

    init(_ values: ParsedValues) throws(CLIError) {
        guard let version = try values.integer(Self.version) else { throw .missingOption(option: Self.version.spelling) }
        self.version = UInt64(version)
        let date = values.value(Self.expires) ?? ""
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let expires = formatter.date(from: date) else { throw .invalidValue(value: date, option: Self.expires.spelling) }
        self.expires = expires
        guard let list = values.value(Self.revisions) else { throw .missingOption(option: Self.revisions.spelling) }
        let parsed = list.split(separator: ",").map { UInt8($0.trimmingCharacters(in: .whitespaces)) }
        guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil }) else { throw .invalidValue(value: list, option: Self.revisions.spelling) }
        revisions = parsed.compactMap { $0 }
        guard let output = values.value(Self.output) else { throw .missingOption(option: Self.output.spelling) }
        outputFile = output
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let catalogue = try RegionPublisher.catalogue(
            version: version, expires: expires, eligibility: RegionPublisher.everywhere(hardwareRevisions: revisions))
        try FirmwareFiles.write(catalogue.payload(), to: outputFile)
        let report = CatalogueReport(file: outputFile, version: version, regions: catalogue.regions.count,
                                     expires: FirmwareText.timestamp(expires), signatures: 0)
        report.say(.catalogueMade, context)
        return .success
    }
}

/// `grokctl region catalogue update --repository URL [--channel NAME]`: the catalogue the
/// channel lists as a TUF target, verified by TUF and by the catalogue's rules, kept in the
/// station's state directory.
struct RegionCatalogueUpdateCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "update", abstract: .commandRegionCatalogueUpdateAbstract,
                             options: FirmwareOptions.declarations)
    }

    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let channel = try firmware.openStation()
        let catalogue = try Blocking.run { try await channel.regionCatalogue() }
        let report = CatalogueReport(file: channel.repository.stateDirectory + "/images", version: catalogue.version,
                                     regions: catalogue.regions.count, expires: FirmwareText.timestamp(catalogue.expires), signatures: nil)
        report.say(.catalogueCached, context)
        return .success
    }
}

/// What a catalogue command did; its `--json` form.
struct CatalogueReport: Encodable {
    let file: String
    let version: UInt64
    let regions: Int
    let expires: String
    let signatures: Int?

    func say(_ key: MessageKey, _ context: CommandContext) {
        if context.console.isJSON {
            context.console.json(self)
        } else {
            context.console.say(key, file, String(version), String(regions), expires, String(signatures ?? 0))
        }
    }
}
