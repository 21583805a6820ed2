import Foundation
import GrokCommandLine
import GrokFleet
import UGrokIt

/// `grokctl locate EPC --device SPEC`: a proximity bar for one tag, from its read history,
/// like the vendor's Geiger counter: stronger and more frequent reads mean closer.
struct LocateCommand: Command {
    static let epc = ArgumentDeclaration(name: .valueHex, help: .optionEpc, type: .epc)
    static let device = OptionDeclaration.option("device", value: .valueDevice, help: .optionDevice, required: true, type: .device)
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

    func run(_ context: CommandContext) throws -> ExitCode {
        let console = context.console
        let localizer = context.localizer
        let job = LocateJob(access: context.deviceAccess, epc: target, seconds: seconds)
        let heard = try job.run(on: device) { reading in
            if console.isJSON {
                console.json(reading)
                return
            }
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
        if !heard { console.say(.locateNeverHeard, target.description) }
        return heard ? .success : .failure
    }
}
