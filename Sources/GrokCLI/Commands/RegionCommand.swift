import GrokFleet
import GrokFirmware
import GrokProtocol
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
    static let region = ArgumentDeclaration(name: .valueRegion, help: .argumentRegion)
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionDevice, repeatable: true, required: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "set", abstract: .commandRegionSetAbstract, discussion: .commandRegionSetDiscussion,
            options: [device] + FirmwareOptions.declarations, arguments: [region])
    }

    let region: VendorRegion
    let devices: [DeviceSpec]
    /// With `--repository`, the channel whose signed region catalogue gives the values sent.
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        guard let text = values.argument(Self.region) else { throw .missingArgument(name: Self.region.name) }
        guard let region = RegionCatalog.find(text) else { throw .invalidRegion(text) }
        self.region = region
        devices = try DeviceSpec.parseOption(values.values(Self.device))
        firmware = try FirmwareOptions(values)
    }

    struct Report: Encodable, Sendable {
        let device: String
        let status: String
        var regionCode: String?
        var regionName: String?
        var serial: String?
        var error: InfoReport.Problem?
        var localizedError: String?

        enum CodingKeys: String, CodingKey {
            case device, status, serial, error
            case regionCode = "region_code"
            case regionName = "region_name"
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let ports = context.ports
        var readerOptions = ReaderOptions()
        readerOptions.realtime = context.globals.realtime
        let options = readerOptions
        let localizer = context.localizer
        let region = self.region
        // The vendor's built-in region entry is sent, unless the channel's signed catalogue
        // (TUF target) has other values for the region: then the catalogue's.
        var catalogue: RegionCatalogue?
        if let channel = try firmware.openStationIfGiven() {
            catalogue = try Blocking.run { try await channel.regionCatalogue() }
        }
        let chosen = catalogue
        let reports = DeviceThreads.each(devices) { spec -> Report in
            do {
                let session = try ReaderSession(port: try DevicePorts.open(spec, context: ports), options: options)
                defer { session.close() }
                try session.connect()
                let info = try session.setRegion(region.code, catalogue: chosen)
                return Report(device: spec.description, status: "ok", regionCode: region.code, regionName: region.name,
                              serial: info.serialNumberText)
            } catch {
                return Report(device: spec.description, status: "error",
                              error: .init(code: Localizer.code(for: error), message: Localizer.english.message(for: error)),
                              localizedError: localizer.message(for: error))
            }
        }
        let console = context.console
        for report in reports {
            if console.isJSON {
                console.json(report)
            } else if report.status == "ok" {
                console.print(localizer.text(.regionSetDone, report.device, localizer.regionName(region)))
            } else {
                console.print(localizer.text(.infoDeviceFailed, report.device, report.localizedError ?? ""))
            }
        }
        return reports.allSatisfy { $0.status == "ok" } ? .success : .failure
    }
}

extension Localizer {
    /// A region's name in this language (the catalogue's `region.<code>`).
    func regionName(_ region: VendorRegion) -> String {
        MessageKey(rawValue: "region.\(region.code)").map { text($0) } ?? region.name
    }
}
