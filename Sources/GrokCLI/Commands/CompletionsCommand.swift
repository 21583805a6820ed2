import GrokCommandLine
/// `grokctl completions bash|zsh|fish`: prints the shell's completion script, generated
/// from the same declarations as the parser and help (scripts/setup.sh installs them).
struct CompletionsCommand: Command {
    static let shell = ArgumentDeclaration(
        name: .valueShell, help: .argumentShell, type: .choice(CompletionScripts.Shell.allCases.map(\.rawValue)))

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "completions", abstract: .commandCompletionsAbstract,
                             discussion: .commandCompletionsDiscussion, arguments: [shell])
    }

    let shell: CompletionScripts.Shell

    init(_ values: ParsedValues) throws(CLIError) {
        guard let text = values.argument(Self.shell) else { throw .missingArgument(name: Self.shell.name) }
        // The declaration's type: the parser refused any other word, saying the choices.
        guard let shell = CompletionScripts.Shell(rawValue: text) else {
            throw .badArgument(value: text, name: Self.shell.name, rule: .choice(CompletionScripts.Shell.allCases.map(\.rawValue)))
        }
        self.shell = shell
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let scripts = CompletionScripts(root: Grokctl.root, globals: GlobalOptions.declarations)
        context.console.write(scripts.script(for: shell))
        return .success
    }
}
