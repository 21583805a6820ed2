import GrokCommandLine

/// A grokctl command: what it accepts (``ParsableCommand/configuration``), how it turns
/// parsed values into typed, validated fields (``ParsableCommand/init(_:)``), and what it
/// does (``run(_:)``).
///
/// A command group (subcommands, nothing to run itself) keeps the default ``run(_:)``,
/// which prints its help.
public protocol Command: ParsableCommand {
    /// Does the work.
    ///
    /// - Returns: the exit code; throw instead to report a failure (exit 1, or 64 for a
    ///   usage ``CLIError``).
    func run(_ context: CommandContext) throws -> ExitCode
}

extension Command {
    /// A command group has nothing to run: it shows its help (exit 0), as
    /// swift-argument-parser does.
    public func run(_ context: CommandContext) throws -> ExitCode {
        context.printHelp()
        return .success
    }
}
