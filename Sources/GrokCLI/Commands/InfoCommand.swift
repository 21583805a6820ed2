import GrokCommandLine
import GrokFleet
/// `grokctl info --device SPEC...`: identity, firmware and region of each Grokker.
struct InfoCommand: Command {
    /// `--device <device>`, repeatable, comma lists allowed.
    static let device = OptionDeclaration.option(
        "device", value: .valueDevice, help: .optionDevice, repeatable: true, required: true, type: .device)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "info", abstract: .commandInfoAbstract, discussion: .commandInfoDiscussion,
            options: [device])
    }

    /// The Grokkers to query, in the order given, without duplicates.
    let devices: [DeviceSpec]

    init(_ values: ParsedValues) throws(CLIError) {
        devices = try DeviceSpec.parseOption(values.values(Self.device))
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try runInfo(self, context)
    }
}
