import Foundation
import GrokCommandLine
import GrokFleet
import UGrokIt

/// `grokctl inventory --device SPEC... [--duration S] [--type TYPE]`: read the tags around
/// each Grokker and list them.
struct InventoryCommand: Command {
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionDevice, repeatable: true, required: true, type: .device)
    static let duration = OptionDeclaration.option(
        "duration", value: .valueSeconds, help: .optionDuration, defaultValue: "5", type: .decimal(above: 0, upTo: 3600))
    static let type = OptionDeclaration.option(
        "type", value: .valueInventoryType, help: .optionInventoryType, defaultValue: UgiInventoryType.inventoryDistance.code,
        choices: UgiInventoryType.allCases.map(\.code))

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "inventory", abstract: .commandInventoryAbstract, discussion: .commandInventoryDiscussion,
            options: [device, duration, type])
    }

    let devices: [DeviceSpec]
    let seconds: Double
    let inventoryType: UgiInventoryType

    init(_ values: ParsedValues) throws(CLIError) {
        devices = try DeviceSpec.parseOption(values.values(Self.device))
        guard let seconds = try values.decimal(Self.duration) else { throw .missingOption(option: Self.duration.spelling) }
        self.seconds = seconds
        guard let type = values.value(Self.type).flatMap(UgiInventoryType.init(code:)) else {
            throw .missingOption(option: Self.type.spelling)
        }
        inventoryType = type
    }

    /// One tag of the listing; also its `--json` line.
    struct TagLine: Encodable, Sendable {
        let device: String
        let epc: String
        let uri: String
        let reads: Int
        /// nil (JSON null) when the reader sent no RSSI.
        let rssiDBm: Double?
        let firstSeenS: Double
        enum CodingKeys: String, CodingKey {
            case device, epc, uri, reads
            case rssiDBm = "rssi_dbm"
            case firstSeenS = "first_seen_s"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(device, forKey: .device)
            try c.encode(epc, forKey: .epc)
            try c.encode(uri, forKey: .uri)
            try c.encode(reads, forKey: .reads)
            try c.encode(rssiDBm, forKey: .rssiDBm)
            try c.encode(firstSeenS, forKey: .firstSeenS)
        }
    }

    struct Summary: Encodable {
        struct Body: Encodable {
            let device: String
            let status: String
            let tags: Int
            let reads: Int
            /// How long the inventory ran, in seconds of audio (the clock `first_seen_s` is on).
            let seconds: Double
            let error: InfoReport.Problem?
        }
        let summary: Body
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let localizer = context.localizer
        let job = InventoryJob(access: context.deviceAccess, configuration: InventoryJob.configuration(inventoryType: inventoryType),
                               seconds: seconds)
        let console = context.console
        let results: [DeviceResult<InventoryJob.Found>]
        // One Grokker at a terminal: a table redrawn in place as the tags come (docs: README).
        if devices.count == 1, LiveTable.wanted(standardOutputIsTerminal: LiveTable.standardOutputIsTerminal,
                                                json: console.isJSON, quiet: console.isQuiet) {
            let headers = [MessageKey.inventoryColumnEpc, .inventoryColumnReads, .inventoryColumnRssi, .inventoryColumnLastSeen,
                           .inventoryColumnVisible].map { localizer.text($0) }
            var drawn = 0
            var lastDraw = ContinuousClock.now - .seconds(1)
            results = [job.run(devices[0]) { tags in
                let now = ContinuousClock.now
                guard now - lastDraw >= .milliseconds(250) else { return }
                lastDraw = now
                let rows = tags.map { tag in
                    LiveTable.Row(epc: tag.epc.description, reads: tag.readState.totalReads,
                                  rssiDBm: tag.readState.mostRecentRssi, firstSeenS: tag.firstRead.timeIntervalSince1970,
                                  lastSeenS: tag.readState.mostRecentRead.timeIntervalSince1970, visible: tag.isVisible)
                }
                let size = LiveTable.terminalSize()
                let lines = LiveTable.render(rows: rows, headers: headers, more: { localizer.text(.inventoryLiveMore, String($0)) },
                                             width: size.width, height: size.height)
                console.write(LiveTable.frame(lines, previousLineCount: drawn))
                drawn = lines.count
            }]
            // The final listing replaces the live drawing, so the scrollback holds all of it.
            if drawn > 0 { console.write(LiveTable.frame([], previousLineCount: drawn)) }
        } else {
            results = job.run(devices)
        }
        let listed = results.map { result in
            (result.value?.tags ?? []).map { tag in
                TagLine(device: result.device.description, epc: tag.epc.description, uri: tag.epc.toTagURI(),
                        reads: tag.readState.totalReads, rssiDBm: tag.readState.mostRecentRssi.map { ($0 * 10).rounded() / 10 },
                        firstSeenS: (tag.firstRead.timeIntervalSince1970 * 1000).rounded() / 1000)
            }
        }
        if console.isJSON {
            for (result, tags) in zip(results, listed) {
                for tag in tags { console.json(tag) }
                console.json(Summary(summary: .init(device: result.device.description, status: result.error == nil ? "ok" : "error",
                                                    tags: tags.count, reads: result.value?.reads ?? 0,
                                                    seconds: ((result.value?.seconds ?? 0) * 1000).rounded() / 1000,
                                                    error: result.error.map(InfoReport.Problem.init))))
            }
        } else {
            let rows = listed.joined().map { [$0.device, $0.epc, String($0.reads), $0.rssiDBm.map { localizer.localizedNumber(format($0)) } ?? "-",
                                              localizer.localizedNumber(format($0.firstSeenS)), $0.uri] }
            if !rows.isEmpty {
                console.table(Table(
                    headers: [.infoColumnDevice, .inventoryColumnEpc, .inventoryColumnReads, .inventoryColumnRssi,
                              .inventoryColumnSeen, .inventoryColumnUri].map { localizer.text($0) },
                    rows: rows))
            }
            for (result, tags) in zip(results, listed) {
                if let error = result.error {
                    console.print(localizer.text(.infoDeviceFailed, result.device.description,
                                                         localizer.message(for: error, about: result.device.description)))
                } else {
                    console.print(localizer.text(.inventorySummary, result.device.description, String(tags.count),
                                                 String(result.value?.reads ?? 0), format(result.value?.seconds ?? 0)))
                }
            }
        }
        return results.allSatisfy { $0.error == nil } ? .success : .failure
    }
}

/// `value` to a tenth, without a needless `.0`, in English form (the catalog and
/// ``Localizer/localizedNumber(_:)`` give it the language's decimal separator).
private func format(_ value: Double) -> String {
    let tenths = (value * 10).rounded() / 10
    return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
}
