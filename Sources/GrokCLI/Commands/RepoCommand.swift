import Foundation
import GrokBasics
import GrokCommandLine
import GrokPublish

/// `grokctl repo`: the fleet owner's TUF repository of firmware and region catalogues
/// (docs/firmware-format.md): made, signed by each key holder in turn, timestamped from a
/// timer, rotated after a leak, published to a directory a static web server serves.
struct RepoCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "repo", abstract: .commandRepoAbstract,
            subcommands: [RepoInitCommand.self, RepoAddCommand.self, RepoSignCommand.self, RepoTimestampCommand.self,
                          RepoRotateCommand.self, RepoPublishCommand.self, RepoStatusCommand.self])
    }

    init(_ values: ParsedValues) {}
}

enum RepoOptions {
    static let repo = OptionDeclaration.option("repo", value: .valueDirectory, help: .optionRepoDirectory, required: true)
    static let key = OptionDeclaration.option("key", value: .valueFile, help: .optionRepoKey, repeatable: true, required: true)
    static let role = OptionDeclaration.option("role", value: .valueName, help: .optionRepoRole, required: true)
    static let threshold = OptionDeclaration.option("threshold", value: .valueNumber, help: .optionRepoThreshold, defaultValue: "1",
                                                    type: .integer(1...255))

    static func directory(_ values: ParsedValues) throws(CLIError) -> String {
        let text = values.value(repo) ?? ""
        guard !text.isEmpty else { throw .invalidValue(value: text, option: repo.spelling) }
        return text
    }

    static func threshold(_ values: ParsedValues, _ option: OptionDeclaration = threshold) throws(CLIError) -> Int {
        guard let n = try values.integer(option) else { throw .missingOption(option: option.spelling) }
        return n
    }

    /// `365d`, `12h`, `30m`, `90s`: seconds.
    static func duration(_ text: String) -> Int64? {
        guard let unit = text.last, let n = Int64(text.dropLast()), n > 0 else { return nil }
        switch unit {
        case "d": return n * 86_400
        case "h": return n * 3_600
        case "m": return n * 60
        case "s": return n
        default: return nil
        }
    }
}

/// `grokctl repo init --repo DIR --root-key PEM... [--root-threshold N] --timestamp-key PEM
/// --snapshot-key PEM --targets-key PEM --channel-key release=PEM --channel-key
/// development=PEM [--expires ROLE=DURATION...]`.
struct RepoInitCommand: Command {
    static let rootKey = OptionDeclaration.option("root-key", value: .valueFile, help: .optionRepoRootKey, repeatable: true, required: true)
    static let rootThreshold = OptionDeclaration.option("root-threshold", value: .valueNumber, help: .optionRepoThreshold, defaultValue: "1",
                                                        type: .integer(1...255))
    static let timestampKey = OptionDeclaration.option("timestamp-key", value: .valueFile, help: .optionRepoTimestampKey, repeatable: true, required: true)
    static let snapshotKey = OptionDeclaration.option("snapshot-key", value: .valueFile, help: .optionRepoSnapshotKey, repeatable: true, required: true)
    static let targetsKey = OptionDeclaration.option("targets-key", value: .valueFile, help: .optionRepoTargetsKey, repeatable: true, required: true)
    static let channelKey = OptionDeclaration.option("channel-key", value: .valueAssignment, help: .optionRepoChannelKey, repeatable: true, required: true)
    static let expires = OptionDeclaration.option("expires", value: .valueAssignment, help: .optionRepoExpires, repeatable: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "init", abstract: .commandRepoInitAbstract, discussion: .commandRepoInitDiscussion,
                             options: [RepoOptions.repo, rootKey, rootThreshold, timestampKey, snapshotKey, targetsKey, channelKey, expires])
    }

    let directory: String
    let values: ParsedValues
    let rootThresholdValue: Int
    var channels: [(String, [String])] = []
    var expiry: [String: Int64] = [:]

    init(_ values: ParsedValues) throws(CLIError) {
        directory = try RepoOptions.directory(values)
        self.values = values
        rootThresholdValue = try RepoOptions.threshold(values, Self.rootThreshold)
        for item in values.values(Self.channelKey) {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw .invalidValue(value: item, option: Self.channelKey.spelling) }
            if let at = channels.firstIndex(where: { $0.0 == parts[0] }) { channels[at].1.append(parts[1]) } else { channels.append((parts[0], [parts[1]])) }
        }
        for item in values.values(Self.expires) {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let seconds = RepoOptions.duration(parts[1]) else { throw .invalidValue(value: item, option: Self.expires.spelling) }
            expiry[parts[0]] = seconds
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let repository = try PublisherRepository.create(
            at: directory, root: .init(files: values.values(Self.rootKey), threshold: rootThresholdValue),
            timestamp: .init(files: values.values(Self.timestampKey)), snapshot: .init(files: values.values(Self.snapshotKey)),
            targets: .init(files: values.values(Self.targetsKey)), channels: channels.map { (name: $0.0, keys: .init(files: $0.1)) },
            expiry: expiry)
        try repository.status().say(.repoInitialized, context, directory)
        return .success
    }
}

/// `grokctl repo add --repo DIR --channel NAME FILE [--name NAME] [--custom JSON]`.
struct RepoAddCommand: Command {
    static let file = ArgumentDeclaration(name: .valueFile, help: .argumentRepoTarget, type: .file)
    static let channel = OptionDeclaration.option("channel", value: .valueChannel, help: .optionRepoChannel, required: true)
    static let name = OptionDeclaration.option("name", value: .valueName, help: .optionRepoTargetName)
    static let custom = OptionDeclaration.option("custom", value: .valueFile, help: .optionRepoCustom)
    static let notes = OptionDeclaration.option("notes", value: .valueAssignment, help: .optionRepoNotes, repeatable: true)
    static let serial = OptionDeclaration.option("serial", value: .valueSerial, help: .optionRepoSerial, repeatable: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "add", abstract: .commandRepoAddAbstract, discussion: .commandRepoAddDiscussion,
                             options: [RepoOptions.repo, channel, name, notes, serial, custom], arguments: [file])
    }

    let directory: String
    let file: String
    let channel: String
    let name: String?
    let customFile: String?
    var notes: [String: String] = [:]
    var serials: [UInt32] = []

    init(_ values: ParsedValues) throws(CLIError) {
        directory = try RepoOptions.directory(values)
        file = values.argument(Self.file) ?? ""
        channel = values.value(Self.channel) ?? ""
        name = values.value(Self.name)
        customFile = values.value(Self.custom)
        for item in values.values(Self.notes) {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, ["en", "de", "fr", "es"].contains(parts[0]) else { throw .invalidValue(value: item, option: Self.notes.spelling) }
            notes[parts[0]] = parts[1]
        }
        for item in values.values(Self.serial) {
            guard let serial = UInt32(item) else { throw .invalidValue(value: item, option: Self.serial.spelling) }
            serials.append(serial)
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let repository = try PublisherRepository(directory: directory)
        let path = try repository.add(file, channel: channel, name: name, customFile: customFile, notes: notes, serials: serials)
        try repository.status().say(.repoTargetAdded, context, path)
        return .success
    }
}

/// `grokctl repo sign --repo DIR --role ROLE --key PEM...`: run by each key holder in turn.
struct RepoSignCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "sign", abstract: .commandRepoSignAbstract, options: [RepoOptions.repo, RepoOptions.role, RepoOptions.key])
    }

    let directory: String
    let role: String
    let keys: [String]

    init(_ values: ParsedValues) throws(CLIError) {
        directory = try RepoOptions.directory(values)
        role = values.value(RepoOptions.role) ?? ""
        keys = values.values(RepoOptions.key)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let repository = try PublisherRepository(directory: directory)
        try repository.sign(role: role, keyFiles: keys)
        try repository.status().say(.repoSigned, context, role)
        return .success
    }
}

/// `grokctl repo timestamp --repo DIR --key PEM [--snapshot-key PEM] [--publish DIR]`: the
/// online step a timer runs (daily at least, as the timestamp expires after a day).
struct RepoTimestampCommand: Command {
    static let snapshotKey = OptionDeclaration.option("snapshot-key", value: .valueFile, help: .optionRepoSnapshotKey, repeatable: true)
    static let publish = OptionDeclaration.option("publish", value: .valueDirectory, help: .optionRepoOutput)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "timestamp", abstract: .commandRepoTimestampAbstract,
                             options: [RepoOptions.repo, RepoOptions.key, snapshotKey, publish])
    }

    let directory: String
    let keys: [String]
    let snapshotKeys: [String]
    let output: String?

    init(_ values: ParsedValues) throws(CLIError) {
        directory = try RepoOptions.directory(values)
        keys = values.values(RepoOptions.key)
        snapshotKeys = values.values(Self.snapshotKey)
        output = values.value(Self.publish)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let repository = try PublisherRepository(directory: directory)
        try repository.timestamp(keyFiles: keys, snapshotKeyFiles: snapshotKeys, publishTo: output)
        try repository.status().say(.repoTimestamped, context, output ?? "")
        return .success
    }
}

/// `grokctl repo rotate --repo DIR --role ROLE --key PEM... [--threshold N]`.
struct RepoRotateCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "rotate", abstract: .commandRepoRotateAbstract, discussion: .commandRepoRotateDiscussion,
                             options: [RepoOptions.repo, RepoOptions.role, RepoOptions.key, RepoOptions.threshold])
    }

    let directory: String
    let role: String
    let keys: [String]
    let threshold: Int

    init(_ values: ParsedValues) throws(CLIError) {
        directory = try RepoOptions.directory(values)
        role = values.value(RepoOptions.role) ?? ""
        keys = values.values(RepoOptions.key)
        threshold = try RepoOptions.threshold(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let repository = try PublisherRepository(directory: directory)
        try repository.rotate(role: role, to: .init(files: keys, threshold: threshold))
        try repository.status().say(.repoRotated, context, role)
        return .success
    }
}

/// `grokctl repo publish --repo DIR --output DIR`.
struct RepoPublishCommand: Command {
    static let output = OptionDeclaration.option("output", short: "o", value: .valueDirectory, help: .optionRepoOutput, required: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "publish", abstract: .commandRepoPublishAbstract, options: [RepoOptions.repo, output])
    }

    let directory: String
    let output: String

    init(_ values: ParsedValues) throws(CLIError) {
        directory = try RepoOptions.directory(values)
        output = values.value(Self.output) ?? ""
        guard !output.isEmpty else { throw .invalidValue(value: output, option: Self.output.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let written = try PublisherRepository(directory: directory).publish(to: output)
        if context.console.isJSON {
            context.console.json(RepoPublished(output: output, files: written))
        } else {
            context.console.say(.repoPublished, output, String(written.count))
        }
        return .success
    }
}

/// `grokctl repo status --repo DIR`: each role's version, expiry and signatures.
struct RepoStatusCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "status", abstract: .commandRepoStatusAbstract, options: [RepoOptions.repo])
    }

    let directory: String

    init(_ values: ParsedValues) throws(CLIError) { directory = try RepoOptions.directory(values) }

    func run(_ context: CommandContext) throws -> ExitCode {
        try PublisherRepository(directory: directory).status().say(nil, context, "")
        return .success
    }
}

struct RepoPublished: Encodable {
    let output: String
    let files: [String]
}

extension RepositoryStatus {
    func say(_ key: MessageKey?, _ context: CommandContext, _ argument: String) {
        if context.console.isJSON {
            context.console.json(self)
            return
        }
        if let key { context.console.say(key, argument) }
        for role in roles {
            let state = role.signed ? context.localizer.text(.repoRoleSigned) : context.localizer.text(.repoRoleUnsigned, String(role.signatures), String(role.threshold))
            context.console.say(.repoRoleLine, role.role, role.version.map(String.init) ?? "-", role.expires ?? "-", state)
        }
    }
}
