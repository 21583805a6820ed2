import GrokCommandLine
import GrokFleet

/// `grokctl bench`: plugging emulated Grokkers into the bench's ports and pulling them out,
/// as a technician does with real ones on a hub of sound cards (``Bench/plug(port:unit:)``).
struct BenchCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "bench", abstract: .commandBenchAbstract, discussion: .commandBenchDiscussion,
                             subcommands: [BenchPlugCommand.self, BenchUnplugCommand.self])
    }

    init(_ values: ParsedValues) {}

    /// The ports of `--device` values: only `sim:N` (and ranges) name ports of the bench.
    static func ports(_ values: [String]) throws(CLIError) -> [Int] {
        try DeviceSpec.parseOption(values).map { spec throws(CLIError) in
            guard case .emulated(let index) = spec else { throw .coded(code: "usage_bench_not_emulated", arguments: [spec.description]) }
            return index
        }
    }

    /// `--json`'s answer: each port and the Grokker it now holds (`null`: empty).
    struct PortState: Encodable {
        let port: String
        let unit: Int?
    }
}

/// `grokctl bench plug --device sim:N [--unit K]`: plugs emulated Grokker K (by default N)
/// into port sim:N; refused when the port holds one or the Grokker sits in another port.
struct BenchPlugCommand: Command {
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionBenchPort, required: true, type: .device)
    static let unit = OptionDeclaration.option("unit", value: .valueNumber, help: .optionBenchUnit,
                                               type: .integer(DeviceSpec.emulatedRange))

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "plug", abstract: .commandBenchPlugAbstract, discussion: .commandBenchPlugDiscussion,
                             options: [device, unit])
    }

    let port: Int
    let unit: Int

    init(_ values: ParsedValues) throws(CLIError) {
        let ports = try BenchCommand.ports(values.values(Self.device))
        guard ports.count == 1 else { throw .coded(code: "usage_bench_one_port", arguments: [values.values(Self.device).joined(separator: ",")]) }
        port = ports[0]
        unit = try values.integer(Self.unit) ?? port
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try context.bench.plug(port: port, unit: unit)
        let name = DeviceSpec.emulated(index: port).description
        if context.console.isJSON {
            context.console.json([BenchCommand.PortState(port: name, unit: unit)])
        } else {
            context.console.say(.benchPlugged, name, String(unit))
        }
        return .success
    }
}

/// `grokctl bench unplug --device sim:N...`: empties the ports (a run talking to a Grokker
/// there loses it at once, as with a real cable pulled out).
struct BenchUnplugCommand: Command {
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionBenchPorts, repeatable: true, required: true, type: .device)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "unplug", abstract: .commandBenchUnplugAbstract, discussion: .commandBenchUnplugDiscussion,
                             options: [device])
    }

    let ports: [Int]

    init(_ values: ParsedValues) throws(CLIError) {
        ports = try BenchCommand.ports(values.values(Self.device))
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        for port in ports { try context.bench.unplug(port: port) }
        let names = ports.map { DeviceSpec.emulated(index: $0).description }
        if context.console.isJSON {
            context.console.json(names.map { BenchCommand.PortState(port: $0, unit: nil) })
        } else {
            for name in names { context.console.say(.benchUnplugged, name) }
        }
        return .success
    }
}
