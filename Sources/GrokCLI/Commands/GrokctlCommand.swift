import GrokCommandLine
/// `grokctl`: the root of the command tree. Add new commands to ``configuration``'s
/// subcommands, in the order help should list them.
struct GrokctlCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "grokctl", abstract: .commandRootAbstract, discussion: .commandRootDiscussion,
            subcommands: [
                DevicesCommand.self, BenchCommand.self, InfoCommand.self, RegionCommand.self, InventoryCommand.self, LocateCommand.self, TagCommand.self, FirmwareCommand.self, RepoCommand.self,
                ProvisionCommand.self, RolloutCommand.self, VerifyCommand.self, LedgerCommand.self, FleetCommand.self, AudioCommand.self, EmulateCommand.self,
                StationCommand.self, PathsCommand.self, CompletionsCommand.self, ManCommand.self, HelpCommand.self,
            ])
    }

    init(_ values: ParsedValues) {}
}
