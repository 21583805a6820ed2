import GrokCommandLine
/// `grokctl audio decode FILE.wav...`: the packets in recordings of the audio link, one
/// file after the other (`-`: a recording on standard input, at most once).
struct AudioDecodeCommand: Command {
    /// `<file> ...`: the WAV recordings; `-` reads one from standard input.
    static let file = ArgumentDeclaration(name: .valueFile, help: .argumentWAVFile, repeating: true, type: .inputFile)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "decode", abstract: .commandAudioDecodeAbstract, discussion: .commandAudioDecodeDiscussion,
            arguments: [file])
    }

    /// The WAV files to decode, in order (standard input among them at most once).
    let files: [InputFile]

    init(_ values: ParsedValues) throws(CLIError) {
        files = values.inputs(Self.file)
        guard !files.isEmpty else { throw .missingArgument(name: Self.file.name) }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try runAudioDecode(self, context)
    }
}
