import Foundation
import GrokFleet
import GrokProtocol
import UGrokIt

/// `grokctl inventory --device SPEC... [--duration S] [--type TYPE]`: read the tags around
/// each Grokker and list them.
struct InventoryCommand: Command {
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionDevice, repeatable: true, required: true)
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
        let rssiDBm: Double
        let firstSeenS: Double
        enum CodingKeys: String, CodingKey {
            case device, epc, uri, reads
            case rssiDBm = "rssi_dbm"
            case firstSeenS = "first_seen_s"
        }
    }

    /// What one Grokker found.
    struct DeviceResult: Sendable {
        let device: String
        var tags: [TagLine] = []
        var reads = 0
        var error: InfoReport.Problem?
        var localizedError: String?
    }

    struct Summary: Encodable {
        struct Body: Encodable {
            let device: String
            let status: String
            let tags: Int
            let reads: Int
            let seconds: Double
            let error: InfoReport.Problem?
        }
        let summary: Body
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let ports = context.ports
        var readerOptions = ReaderOptions()
        readerOptions.realtime = context.globals.realtime
        let options = readerOptions
        let localizer = context.localizer
        let configuration = UgiRfidConfiguration.config(inventoryType: inventoryType)
        let seconds = self.seconds
        let console = context.console
        let results: [DeviceResult]
        // One Grokker at a terminal: a table redrawn in place as the tags come (docs: README).
        if devices.count == 1, LiveTable.wanted(standardOutputIsTerminal: LiveTable.standardOutputIsTerminal,
                                                json: console.isJSON, quiet: console.isQuiet) {
            let headers = [MessageKey.inventoryColumnEpc, .inventoryColumnReads, .inventoryColumnRssi, .inventoryColumnLastSeen,
                           .inventoryColumnVisible].map { localizer.text($0) }
            var drawn = 0
            var lastDraw = ContinuousClock.now - .seconds(1)
            results = [Self.inventory(devices[0], ports: ports, options: options, configuration: configuration,
                                      seconds: seconds, localizer: localizer) { rows in
                let now = ContinuousClock.now
                guard now - lastDraw >= .milliseconds(250) else { return }
                lastDraw = now
                let size = LiveTable.terminalSize()
                let lines = LiveTable.render(rows: rows, headers: headers, more: { localizer.text(.inventoryLiveMore, String($0)) },
                                             width: size.width, height: size.height)
                console.write(LiveTable.frame(lines, previousLineCount: drawn))
                drawn = lines.count
            }]
            // The final listing replaces the live drawing, so the scrollback holds all of it.
            if drawn > 0 { console.write(LiveTable.frame([], previousLineCount: drawn)) }
        } else {
            results = DeviceThreads.each(devices) { spec in
                Self.inventory(spec, ports: ports, options: options, configuration: configuration, seconds: seconds,
                               localizer: localizer)
            }
        }
        if console.isJSON {
            for result in results {
                for tag in result.tags { console.json(tag) }
                console.json(Summary(summary: .init(device: result.device, status: result.error == nil ? "ok" : "error",
                                                    tags: result.tags.count, reads: result.reads, seconds: seconds,
                                                    error: result.error)))
            }
        } else {
            let rows = results.flatMap { r in
                r.tags.map { [r.device, $0.epc, String($0.reads), localizer.localizedNumber(format($0.rssiDBm)),
                             localizer.localizedNumber(format($0.firstSeenS))] }
            }
            if !rows.isEmpty {
                console.table(Table(
                    headers: [.infoColumnDevice, .inventoryColumnEpc, .inventoryColumnReads, .inventoryColumnRssi,
                              .inventoryColumnSeen].map { localizer.text($0) },
                    rows: rows))
            }
            for r in results {
                if let message = r.localizedError {
                    console.print(localizer.text(.infoDeviceFailed, r.device, message))
                } else {
                    console.print(localizer.text(.inventorySummary, r.device, String(r.tags.count), String(r.reads),
                                                 format(seconds)))
                }
            }
        }
        return results.allSatisfy { $0.error == nil } ? .success : .failure
    }

    static func inventory(_ spec: DeviceSpec, ports: DevicePortContext, options: ReaderOptions,
                          configuration: UgiRfidConfiguration, seconds: Double, localizer: Localizer,
                          progress: (([LiveTable.Row]) -> Void)? = nil) -> DeviceResult {
        var result = DeviceResult(device: spec.description)
        do {
            let session = try ReaderSession(port: try DevicePorts.open(spec, context: ports), options: options)
            defer { session.close() }
            try session.connect()
            let tracker = InventoryTracker(start: Date(timeIntervalSince1970: 0), configuration: configuration)
            try session.startInventory(configuration)
            if let progress {
                // A quarter second of audio at a time, the table following what was read.
                var elapsed = 0.0
                while elapsed < seconds {
                    let step = min(0.25, seconds - elapsed)
                    try session.collect(forAtMost: step)
                    elapsed += step
                    for report in session.takeReports() { tracker.take(report) }
                    tracker.advance(toMilliseconds: Int(elapsed * 1000))
                    progress(tracker.tags.map { tag in
                        LiveTable.Row(epc: tag.epc.description, reads: tag.readState.totalReads,
                                      rssiDBm: tag.readState.mostRecentRssi, firstSeenS: tag.firstRead.timeIntervalSince1970,
                                      lastSeenS: tag.readState.mostRecentRead.timeIntervalSince1970, visible: tag.isVisible)
                    })
                }
            } else {
                try session.collect(forAtMost: seconds)
            }
            try session.stopInventory()
            for report in session.takeReports() { tracker.take(report) }
            result.reads = tracker.readsTaken
            result.tags = tracker.tags.map { tag in
                TagLine(device: spec.description, epc: tag.epc.description, uri: tag.epc.toTagURI(),
                        reads: tag.readState.totalReads, rssiDBm: (tag.readState.mostRecentRssi * 10).rounded() / 10,
                        firstSeenS: (tag.firstRead.timeIntervalSince1970 * 1000).rounded() / 1000)
            }
        } catch {
            result.error = .init(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
            result.localizedError = localizer.message(for: error)
        }
        return result
    }
}

/// `value` to a tenth, without a needless `.0`, in English form (the catalog and
/// ``Localizer/localizedNumber(_:)`` give it the language's decimal separator).
private func format(_ value: Double) -> String {
    let tenths = (value * 10).rounded() / 10
    return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
}
