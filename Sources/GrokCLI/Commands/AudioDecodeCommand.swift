/// `grokctl audio decode FILE.wav`: the packets in a recording of the audio link.
struct AudioDecodeCommand: Command {
    /// `<file>`: the WAV recording.
    static let file = ArgumentDeclaration(name: .valueFile, help: .argumentWAVFile)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "decode", abstract: .commandAudioDecodeAbstract, discussion: .commandAudioDecodeDiscussion,
            arguments: [file])
    }

    /// The WAV file to decode, as given.
    let file: String

    init(_ values: ParsedValues) throws(CLIError) {
        guard let file = values.argument(Self.file) else { throw .missingArgument(name: Self.file.name) }
        self.file = file
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try runAudioDecode(self, context)
    }
}
