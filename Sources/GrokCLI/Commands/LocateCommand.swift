import Foundation
import GrokFleet
import GrokProtocol
import UGrokIt

/// `grokctl locate EPC --device SPEC`: a proximity bar for one tag, from its read history,
/// like the vendor's Geiger counter: stronger and more frequent reads mean closer.
struct LocateCommand: Command {
    static let epc = ArgumentDeclaration(name: .valueHex, help: .optionEpc, type: .epc)
    static let device = OptionDeclaration.option("device", value: .valueDevice, help: .optionDevice, required: true)
    static let duration = OptionDeclaration.option("duration", value: .valueSeconds, help: .optionDuration, defaultValue: "5",
                                                  type: .decimal(above: 0, upTo: 3600))

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "locate", abstract: .commandLocateAbstract, discussion: .commandLocateDiscussion,
                             options: [device, duration], arguments: [epc])
    }

    let target: UgiEpc
    let device: DeviceSpec
    let seconds: Double

    init(_ values: ParsedValues) throws(CLIError) {
        guard let text = values.argument(Self.epc) else { throw .missingArgument(name: Self.epc.name) }
        target = try TagCommand.epcValue(text, option: Self.epc.spelling)
        let devices = try DeviceSpec.parseOption(values.values(Self.device))
        guard devices.count == 1 else { throw .invalidValue(value: devices.map(\.description).joined(separator: ","), option: "--device") }
        device = devices[0]
        guard let seconds = try values.decimal(Self.duration) else { throw .missingOption(option: Self.duration.spelling) }
        self.seconds = seconds
    }

    /// One interval of the locate display; also its `--json` line.
    struct Reading: Encodable {
        let timeS: Double
        let reads: Int
        /// The strongest RSSI of the interval on the reader's own scale: the vendor's read
        /// records carry RSSI as two 4-bit values (I and Q, 0 to 15, units unknown).
        let rssi: Double?
        let proximity: Double
        enum CodingKeys: String, CodingKey {
            case reads, proximity, rssi
            case timeS = "time_s"
        }
    }

    /// 0 (not heard) to 1 (the top of the reader's 4-bit RSSI scale).
    static func proximity(rssi: Double?) -> Double {
        guard let rssi else { return 0 }
        return min(1, max(0, rssi / 15))
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let ports = context.ports
        var options = ReaderOptions()
        options.realtime = context.globals.realtime
        let session = try ReaderSession(port: try DevicePorts.open(device, context: ports), options: options)
        defer { session.close() }
        try session.connect()
        var configuration = UgiRfidConfiguration.config(inventoryType: .locateDistance)
        // The bar is the tag's RSSI, read round after round: the vendor's locate preset neither
        // reports RSSI nor toggles A/B (an S0 tag kept powered stays inventoried), so ask for both.
        configuration.reportRssi = true
        configuration.roundsWithNoFindsToToggleAB = 1
        configuration.selectBank = .epc
        configuration.selectOffset = 32
        configuration.selectMask = target.bytes
        configuration.selectMaskBitLength = target.bytes.count * 8
        try configuration.validate()
        try session.startInventory(configuration)
        let console = context.console
        let localizer = context.localizer
        let interval = Double(configuration.historyIntervalMSec) / 1000
        var elapsed = 0.0
        var heard = false
        while elapsed < seconds - 1e-9 {
            let step = min(interval, seconds - elapsed)
            try session.collect(forAtMost: step)
            elapsed += step
            let reads = session.takeReports().filter { $0.epc == target.bytes }
            // TagReport carries each 4-bit RSSI value times ten (UGrokIt's VendorInventoryHost).
            let rssi = reads.map { Double(max($0.rssiITenthsDBm, $0.rssiQTenthsDBm)) / 10 }.max()
            let reading = Reading(timeS: (elapsed * 10).rounded() / 10, reads: reads.count,
                                  rssi: rssi, proximity: Self.proximity(rssi: rssi))
            heard = heard || !reads.isEmpty
            if console.isJSON {
                console.json(reading)
            } else {
                let width = 30
                let filled = Int((reading.proximity * Double(width)).rounded())
                let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
                if let rssi = reading.rssi {
                    console.print(localizer.text(.locateLine, String(format: "%5.1f", reading.timeS), bar,
                                                 String(format: "%.1f", rssi), String(reading.reads)))
                } else {
                    console.print(localizer.text(.locateNotHeard, String(format: "%5.1f", reading.timeS), bar))
                }
            }
        }
        try session.stopInventory()
        if !heard { console.say(.locateNeverHeard, target.description) }
        return heard ? .success : .failure
    }
}
