import Foundation
import GrokCommandLine

/// `grokctl fleet stage`: the rollout stages the ledger keeps (docs/fleet.md, "Rollout
/// stages across stations"): show them, pause, resume, advance.
struct FleetStageCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "stage", abstract: .commandFleetStageAbstract, discussion: .commandFleetStageDiscussion,
            subcommands: [FleetStageShowCommand.self, FleetStagePauseCommand.self, FleetStageResumeCommand.self,
                          FleetStageAdvanceCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// The options every `fleet stage` command takes.
enum FleetStageOptions {
    static let rollout = ArgumentDeclaration(name: .valueRollout, help: .argumentFleetStageRollout)
    static let optionalRollout = ArgumentDeclaration(name: .valueRollout, help: .argumentFleetStageRolloutOptional, required: false)
    static let operatorName = OptionDeclaration.option("operator", value: .valueName, help: .optionStageOperator)
    static let note = OptionDeclaration.option("note", value: .valueText, help: .optionStageNote)
    /// Upward only, so above 0; fractions allowed (a profile's percentage may be 12.5).
    static let to = OptionDeclaration.option("to", value: .valuePercent, help: .optionStageTo, required: true,
                                             type: .decimal(above: 0, upTo: 100))

    /// The rollout id as given: not empty.
    static func rolloutID(_ values: ParsedValues, _ declaration: ArgumentDeclaration) throws(CLIError) -> String? {
        guard let id = values.argument(declaration) else { return nil }
        guard !id.trimmingCharacters(in: .whitespaces).isEmpty else { throw .invalidValue(value: id, option: "ROLLOUT") }
        return id
    }

    static func ledger(_ values: ParsedValues) throws(CLIError) -> String? {
        guard let ledger = values.value(FleetOptions.ledger) else { return nil }
        guard !ledger.isEmpty else { throw .invalidValue(value: ledger, option: FleetOptions.ledger.spelling) }
        return ledger
    }
}

/// `grokctl fleet stage show [ROLLOUT] [--ledger L] [--json]`.
struct FleetStageShowCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "show", abstract: .commandFleetStageShowAbstract, options: [FleetOptions.ledger],
                             arguments: [FleetStageOptions.optionalRollout])
    }

    let rolloutID: String?
    let ledgerFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        rolloutID = try FleetStageOptions.rolloutID(values, FleetStageOptions.optionalRollout)
        ledgerFile = try FleetStageOptions.ledger(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode { try FleetStageRun(context: context, ledgerFile: ledgerFile).show(rolloutID) }
}

/// What `pause`, `resume` and `advance` share: the rollout, who makes the change, a note.
struct FleetStageChangeOptions {
    static let declarations = [FleetStageOptions.operatorName, FleetStageOptions.note, FleetOptions.ledger]

    let rolloutID: String
    let operatorName: String?
    let note: String
    let ledgerFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        guard let id = try FleetStageOptions.rolloutID(values, FleetStageOptions.rollout) else { throw .missingOption(option: "ROLLOUT") }
        rolloutID = id
        operatorName = values.value(FleetStageOptions.operatorName)
        if let operatorName, operatorName.trimmingCharacters(in: .whitespaces).isEmpty {
            throw .invalidValue(value: operatorName, option: FleetStageOptions.operatorName.spelling)
        }
        note = values.value(FleetStageOptions.note) ?? ""
        ledgerFile = try FleetStageOptions.ledger(values)
    }
}

/// `grokctl fleet stage pause ROLLOUT [--operator NAME] [--note TEXT] [--ledger L]`.
struct FleetStagePauseCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "pause", abstract: .commandFleetStagePauseAbstract, options: FleetStageChangeOptions.declarations,
                             arguments: [FleetStageOptions.rollout])
    }

    let options: FleetStageChangeOptions

    init(_ values: ParsedValues) throws(CLIError) { options = try FleetStageChangeOptions(values) }

    func run(_ context: CommandContext) throws -> ExitCode { try FleetStageRun(context: context, ledgerFile: options.ledgerFile).pause(options) }
}

/// `grokctl fleet stage resume ROLLOUT [--operator NAME] [--note TEXT] [--ledger L]`: also clears a halt.
struct FleetStageResumeCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "resume", abstract: .commandFleetStageResumeAbstract, options: FleetStageChangeOptions.declarations,
                             arguments: [FleetStageOptions.rollout])
    }

    let options: FleetStageChangeOptions

    init(_ values: ParsedValues) throws(CLIError) { options = try FleetStageChangeOptions(values) }

    func run(_ context: CommandContext) throws -> ExitCode { try FleetStageRun(context: context, ledgerFile: options.ledgerFile).resume(options) }
}

/// `grokctl fleet stage advance ROLLOUT --to PCT [--operator NAME] [--note TEXT] [--ledger L]`.
struct FleetStageAdvanceCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "advance", abstract: .commandFleetStageAdvanceAbstract,
                             options: [FleetStageOptions.to] + FleetStageChangeOptions.declarations,
                             arguments: [FleetStageOptions.rollout])
    }

    let options: FleetStageChangeOptions
    let percentage: Double

    init(_ values: ParsedValues) throws(CLIError) {
        options = try FleetStageChangeOptions(values)
        guard let percentage = try values.decimal(FleetStageOptions.to) else { throw .missingOption(option: FleetStageOptions.to.spelling) }
        self.percentage = percentage
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        try FleetStageRun(context: context, ledgerFile: options.ledgerFile).advance(options, to: percentage)
    }
}
