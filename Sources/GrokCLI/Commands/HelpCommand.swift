import GrokCommandLine
/// `grokctl help [<subcommand> ...]`: the same text as `grokctl <subcommand> ... --help`.
struct HelpCommand: Command {
    static let subcommands = ArgumentDeclaration(
        name: .valueSubcommand, help: .argumentHelpSubcommand, required: false, repeating: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "help", abstract: .commandHelpAbstract, arguments: [subcommands])
    }

    /// The command to show help for, root first.
    let path: [any ParsableCommand.Type]

    init(_ values: ParsedValues) throws(CLIError) {
        path = try Self.resolve(values.arguments(Self.subcommands), from: Grokctl.root)
    }

    /// The commands named by `names` below `root`.
    ///
    /// - Throws: ``CLIError/unknownSubcommand(_:suggestion:)`` for a name that is not there.
    static func resolve(_ names: [String], from root: any ParsableCommand.Type) throws(CLIError) -> [any ParsableCommand.Type] {
        var path = [root]
        for name in names {
            let subcommands = path.last!.configuration.subcommands
            guard let next = subcommands.first(where: { $0.configuration.name == name }) else {
                let suggestion = Suggestions.closest(to: name, among: subcommands.map { $0.configuration.name })
                throw .unknownSubcommand(name, suggestion: suggestion)
            }
            path.append(next)
        }
        return path
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        context.console.write(context.helpFormatter.help(path))
        return .success
    }
}
