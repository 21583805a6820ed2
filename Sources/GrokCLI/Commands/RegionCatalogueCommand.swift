import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet
import UGrokIt

/// `grokctl region catalogue`: the region catalogue (docs/regions.md) — made by a fleet
/// owner, listed as a target of the TUF repository (`grokctl repo add`), fetched and
/// verified by a station.
struct RegionCatalogueCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "catalogue", abstract: .commandRegionCatalogueAbstract,
            subcommands: [RegionCatalogueListCommand.self, RegionCatalogueMakeCommand.self, RegionCatalogueUpdateCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// `grokctl region catalogue list [--catalogue ours|vendor]`: the entries SetRegion carries
/// with either catalogue (``RegionTableChoice``), one row per allocation, as sent.
struct RegionCatalogueListCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "list", abstract: .commandRegionCatalogueListAbstract, options: [RegionSetCommand.catalogue])
    }

    let table: RegionTableChoice

    init(_ values: ParsedValues) throws(CLIError) {
        table = try RegionSetCommand.table(values)
    }

    /// One entry as `--json` gives it.
    struct Entry: Encodable {
        let number: Int
        let code: String
        let bandMHz: Int
        let revision: Int
        let channelsKHz: [Int]
        let maxDwellMs: Int
        let minRoundMs: Int
        let lbtDefault: Bool
        let lbtOverrideAllowed: Bool
        let lbtListenMs: Int
        let lbtThresholdDBm: Int
        let maxPowerDBm: Double

        enum CodingKeys: String, CodingKey {
            case number, code, revision
            case bandMHz = "band_mhz"
            case channelsKHz = "channels_khz"
            case maxDwellMs = "max_dwell_ms"
            case minRoundMs = "min_round_ms"
            case lbtDefault = "lbt_default"
            case lbtOverrideAllowed = "lbt_override_allowed"
            case lbtListenMs = "lbt_listen_ms"
            case lbtThresholdDBm = "lbt_threshold_dbm"
            case maxPowerDBm = "max_power_dbm"
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let entries = try RegionJob.entries(table)
        let console = context.console
        if console.isJSON {
            for e in entries { console.json(Self.entry(e)) }
            return .success
        }
        let l = context.localizer
        let headers: [MessageKey] = [.regionColumnNumber, .regionColumnCode, .regionColumnBand, .regionColumnChannels, .regionColumnRange,
                                     .regionColumnDwell, .regionColumnRound, .regionColumnLbt, .regionColumnPower]
        console.table(Table(headers: headers.map { l.text($0) }, rows: entries.map { Self.row($0, l) }))
        return .success
    }

    static func bandText(_ e: VendorRegionEntry) -> String { e.band == .band860 ? "860 MHz" : "900 MHz" }

    static func entry(_ e: VendorRegionEntry) -> Entry {
        Entry(number: Int(e.index) + 1, code: RegionCatalog.named(vendorIndex: e.index)?.code ?? "",
              bandMHz: e.band == .band860 ? 860 : 900, revision: Int(e.revision), channelsKHz: e.channelsKHz.sorted(),
              maxDwellMs: Int(e.maxMillisecondsPerChannel), minRoundMs: Int(e.minMillisecondsPerRound),
              lbtDefault: e.listenBeforeTalkByDefault, lbtOverrideAllowed: e.listenBeforeTalkOverrideAllowed,
              lbtListenMs: Int(e.listenMilliseconds), lbtThresholdDBm: Int(e.listenThresholdDBm), maxPowerDBm: e.maxPowerDBm)
    }

    static func row(_ e: VendorRegionEntry, _ l: Localizer) -> [String] {
        let listen = [String(e.listenMilliseconds), String(e.listenThresholdDBm)]
        let lbt: String
        switch (e.listenBeforeTalkByDefault, e.listenBeforeTalkOverrideAllowed) {
        case (false, false): lbt = l.text(.regionLbtOffFixed)
        case (false, true): lbt = l.text(.regionLbtOffSwitchable, arguments: listen)
        case (true, false): lbt = l.text(.regionLbtOnFixed, arguments: listen)
        case (true, true): lbt = l.text(.regionLbtOnSwitchable, arguments: listen)
        }
        let number = String(Int(e.index) + 1)
        let code = RegionCatalog.named(vendorIndex: e.index)?.code ?? ""
        let power = "\(e.maxPowerDBm) dBm"
        return [number, code, bandText(e), String(e.channelsKHz.count), RegionEntry.mhzRange(e.channelsKHz),
                String(e.maxMillisecondsPerChannel), String(e.minMillisecondsPerRound), lbt, power]
    }
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
