/// `grokctl completions bash|zsh|fish`: prints the shell's completion script, generated
/// from the same declarations as the parser and help (scripts/setup.sh installs them).
struct CompletionsCommand: Command {
    static let shell = ArgumentDeclaration(name: .valueShell, help: .argumentShell)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "completions", abstract: .commandCompletionsAbstract,
                             discussion: .commandCompletionsDiscussion, arguments: [shell])
    }

    let shell: CompletionScripts.Shell

    init(_ values: ParsedValues) throws(CLIError) {
        guard let text = values.argument(Self.shell) else { throw .missingArgument(name: Self.shell.name) }
        guard let shell = CompletionScripts.Shell(rawValue: text) else {
            throw .invalidChoice(value: text, option: "<" + Localizer.english.text(.valueShell) + ">",
                                 choices: CompletionScripts.Shell.allCases.map(\.rawValue))
        }
        self.shell = shell
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let scripts = CompletionScripts(root: GrokCommandLine.root, globals: GlobalOptions.declarations)
        context.console.write(scripts.script(for: shell))
        return .success
    }
}
