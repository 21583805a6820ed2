import GrokCommandLine
/// `grokctl fleet`: the fleet as many stations share it (a PostgreSQL ledger, docs/fleet.md):
/// its rollout stages, its status and its report.
struct FleetCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "fleet", abstract: .commandFleetAbstract, discussion: .commandFleetDiscussion,
            subcommands: [
                // Seeing the fleet: status, report.
                FleetStatusCommand.self, FleetReportCommand.self,

                // Rollout stages: stage show, pause, resume, advance.
                FleetStageCommand.self,

            ])
    }

    init(_ values: ParsedValues) {}
}
