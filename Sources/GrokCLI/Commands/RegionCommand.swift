import GrokCommandLine
import GrokFleet
import GrokFirmware
import UGrokIt

/// `grokctl region`: the regions of the world a Grokker can be set to.
struct RegionCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "region", abstract: .commandRegionAbstract,
            subcommands: [RegionListCommand.self, RegionSetCommand.self, RegionCatalogueCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// `grokctl region list`: the vendor's 22 regions, names in the user's language.
struct RegionListCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "list", abstract: .commandRegionListAbstract)
    }

    init(_ values: ParsedValues) {}

    struct Entry: Encodable {
        let number: Int
        let code: String
        let name: String
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let console = context.console
        if console.isJSON {
            for region in RegionCatalog.all {
                console.json(Entry(number: Int(region.number), code: region.code, name: region.name))
            }
            return .success
        }
        let localizer = context.localizer
        console.table(Table(
            headers: [localizer.text(.regionColumnNumber), localizer.text(.regionColumnCode), localizer.text(.regionColumnName)],
            rows: RegionCatalog.all.map { [String($0.number), $0.code, localizer.regionName($0)] }))
        return .success
    }
}

/// `grokctl region set REGION --device SPEC...`: set the region on each Grokker.
struct RegionSetCommand: Command {
    static let region = ArgumentDeclaration(name: .valueRegion, help: .argumentRegion, type: .region)
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionDevice, repeatable: true, required: true, type: .device)

    /// `--catalogue ours|vendor`: which region values SetRegion carries (``RegionTableChoice``).
    static let catalogue = OptionDeclaration.option(
        "catalogue", value: .valueCatalogue, help: .optionRegionCatalogue, defaultValue: RegionTableChoice.ours.rawValue,
        choices: RegionTableChoice.allCases.map(\.rawValue))

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "set", abstract: .commandRegionSetAbstract, discussion: .commandRegionSetDiscussion,
            options: [device, catalogue] + FirmwareOptions.declarations, arguments: [region])
    }

    /// The `--catalogue` choice.
    static func table(_ values: ParsedValues) throws(CLIError) -> RegionTableChoice {
        let text = values.value(catalogue) ?? RegionTableChoice.ours.rawValue
        guard let table = RegionTableChoice(rawValue: text) else { throw .invalidValue(value: text, option: catalogue.spelling) }
        return table
    }

    let region: VendorRegion
    let table: RegionTableChoice
    let devices: [DeviceSpec]
    /// With `--repository`, the channel whose signed region catalogue gives the values sent.
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        guard let text = values.argument(Self.region) else { throw .missingArgument(name: Self.region.name) }
        guard let region = RegionCatalog.find(text) else { throw .invalidRegion(text) }
        self.region = region
        table = try Self.table(values)
        devices = try DeviceSpec.parseOption(values.values(Self.device))
        firmware = try FirmwareOptions(values)
    }

    /// The `--json` line of one device.
    struct Report: Encodable {
        let device: String
        let status: String
        var regionCode: String?
        var regionName: String?
        var serial: String?
        var error: InfoReport.Problem?

        enum CodingKeys: String, CodingKey {
            case device, status, serial, error
            case regionCode = "region_code"
            case regionName = "region_name"
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        // The vendor's built-in region entry is sent, unless the channel's signed catalogue
        // (TUF target) has other values for the region: then the catalogue's.
        var catalogue: RegionCatalogue?
        if let channel = try firmware.openStationIfGiven() {
            catalogue = try Blocking.run { try await channel.regionCatalogue() }
        }
        let results = RegionJob(access: context.deviceAccess, region: region, catalogue: catalogue, table: table).run(devices)
        let console = context.console
        let localizer = context.localizer
        for result in results {
            let device = result.device.description
            if console.isJSON {
                console.json(result.error.map { Report(device: device, status: "error", error: InfoReport.Problem($0)) }
                    ?? Report(device: device, status: "ok", regionCode: region.code, regionName: region.name, serial: result.value))
            } else if let error = result.error {
                console.print(localizer.text(.infoDeviceFailed, device, localizer.message(for: error, about: device)))
            } else {
                console.print(localizer.text(.regionSetDone, device, localizer.regionName(region)))
            }
        }
        return results.allSatisfy { $0.error == nil } ? .success : .failure
    }
}

extension Localizer {
    /// A region's name in this language (the catalogue's `region.<code>`).
    func regionName(_ region: VendorRegion) -> String {
        MessageKey(rawValue: "region.\(region.code)").map { text($0) } ?? region.name
    }
}
