import GrokCommandLine
/// `grokctl audio`: a group of commands for recorded link audio.
struct AudioCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "audio", abstract: .commandAudioAbstract, subcommands: [AudioDecodeCommand.self])
    }

    init(_ values: ParsedValues) {}
}
