import Foundation
import GrokCommandLine
import GrokFleet

/// grokctl's entry point: parses the command line, runs the command, reports errors,
/// and returns the exit code (0 success, 1 failure, 64 usage error).
public enum Grokctl {
    /// The top of the command tree.
    static var root: any ParsableCommand.Type { GrokctlCommand.self }

    /// Runs grokctl with this process's arguments, environment and standard streams.
    public static func main() -> Int32 {
        run(
            arguments: Array(CommandLine.arguments.dropFirst()),
            environment: ProcessInfo.processInfo.environment)
    }

    /// Runs grokctl.
    ///
    /// - Parameters:
    ///   - arguments: The arguments, without the program name.
    ///   - environment: For the language and default directories.
    ///   - standardOutput: Where results and help go.
    ///   - standardError: Where errors go.
    /// - Returns: the exit code; 1 when standard output could not be written, whatever the
    ///   command did (``OutputCheck``).
    public static func run(
        arguments: [String], environment: [String: String],
        standardOutput: any OutputSink = FileDescriptorSink.standardOutput,
        standardError: any OutputSink = FileDescriptorSink.standardError
    ) -> Int32 {
        let code = runCommand(arguments: arguments, environment: environment, standardOutput: standardOutput,
                              standardError: standardError)
        let early = GlobalOptions.prescan(arguments)
        let console = Console(localizer: Localizer(language: Language.resolve(option: early.language, environment: environment)),
                              json: early.json, quiet: false, standardOutput: standardOutput, standardError: standardError)
        return OutputCheck.finish(code, standardOutput: standardOutput, console: console)
    }

    private static func runCommand(
        arguments: [String], environment: [String: String], standardOutput: any OutputSink, standardError: any OutputSink
    ) -> Int32 {
        let early = GlobalOptions.prescan(arguments)
        let localizer = Localizer(language: Language.resolve(option: early.language, environment: environment))
        let help = HelpFormatter(localizer: localizer, globals: GlobalOptions.declarations)
        var console = Console(
            localizer: localizer, json: early.json, quiet: false,
            standardOutput: standardOutput, standardError: standardError)

        if arguments.first == CompletionSource.command {
            return CompletionCandidates.run(Array(arguments.dropFirst()), environment: environment, console: console).rawValue
        }
        let parser = ArgumentParser(root: root, globals: GlobalOptions.declarations)
        switch parser.parse(arguments) {
        case .help(let path):
            console.write(help.help(path))
            return ExitCode.success.rawValue
        case .version:
            console.print(GrokVersion.current)
            return ExitCode.success.rawValue
        case .failure(let error, let path):
            return console.reportUsage(error, usage: help.usage(path), helpCommand: help.helpCommand(path)).rawValue
        case .run(let path, var values):
            values.environment = environment
            let globals = GlobalOptions(values, environment: environment)
            console = Console(
                localizer: localizer, json: globals.json, quiet: globals.quiet,
                standardOutput: standardOutput, standardError: standardError)
            do {
                guard let type = path.last as? any Command.Type else {
                    preconditionFailure("every command in grokctl's tree is a Command")
                }
                let command = try type.init(values)
                let context = CommandContext(
                    console: console, globals: globals, environment: environment, path: path,
                    helpFormatter: help)
                // Levels a grokctl that ended (a crash, kill -9) left raised go back first.
                context.restoredLevels = CardLevels.restoreAbandoned(directory: StateDirectory.levels(environment: environment))
                return try command.run(context).rawValue
            } catch let error as CLIError where error.isUsageError {
                return console.reportUsage(error, usage: help.usage(path), helpCommand: help.helpCommand(path)).rawValue
            } catch {
                return console.report(error).rawValue
            }
        }
    }
}
