import GrokCommandLine
import GrokFleet

/// `grokctl emulate --state DIR --input IN --output OUT [--rate 44100]`: one emulated
/// Grokker as its own process, speaking the vendor's audio protocol in raw s16le mono
/// samples over two files or FIFOs, standard input and output (`-`), or sound devices
/// (`alsa:NAME`, `usb:PATH`: it captures from the input and plays to the output).
struct EmulateCommand: Command {
    /// `--state <dir>`: the emulated Grokker's state directory.
    static let state = OptionDeclaration.option(
        "state", value: .valueDirectory, help: .optionState, required: true)
    /// `--input <path>`: where the host's audio comes from (a file, a FIFO, `-`, or a sound device).
    static let input = OptionDeclaration.option("input", value: .valuePath, help: .optionInput, required: true)
    /// `--output <path>`: where the Grokker's audio goes (the same kinds).
    static let output = OptionDeclaration.option("output", value: .valuePath, help: .optionOutput, required: true)
    /// `--rate <rate>`: frames per second on both paths.
    static let rate = OptionDeclaration.option(
        "rate", value: .valueRate, help: .optionRate, defaultValue: "44100", choices: ["44100", "48000"])

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "emulate", abstract: .commandEmulateAbstract, discussion: .commandEmulateDiscussion,
            options: [state, input, output, rate])
    }

    /// The state directory, as given.
    let stateDirectory: String
    /// The input as given.
    let inputPath: String
    /// The output as given.
    let outputPath: String
    /// The two ends, parsed by the library.
    let ends: EmulatorJob.Ends
    /// Frames per second: 44100 or 48000.
    let sampleRate: Int

    init(_ values: ParsedValues) throws(CLIError) {
        guard let state = values.value(Self.state) else { throw .missingOption(option: Self.state.spelling) }
        guard let input = values.value(Self.input) else { throw .missingOption(option: Self.input.spelling) }
        guard let output = values.value(Self.output) else { throw .missingOption(option: Self.output.spelling) }
        guard let rateText = values.value(Self.rate), let rate = Int(rateText) else {
            throw .missingOption(option: Self.rate.spelling)
        }
        do throws(FleetError) {
            ends = try EmulatorJob.Ends.parse(input: input, output: output)
        } catch {
            throw .devices(error)
        }
        stateDirectory = state
        inputPath = input
        outputPath = output
        sampleRate = rate
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try runEmulate(self, context)
    }
}
