import Foundation
import GrokBasics
import GrokFirmware
import GrokTUF

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

    /// The text of a key file (at most 64 KiB).
    static func read(_ file: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: file), data.count <= 1 << 16 else {
            throw TUFError.publisher(detail: ErrorDetail("unreadable_file", [file]))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A private key file (for signing).
    static func signingKey(_ file: String) throws -> TUFSigningKey { try TUFSigningKey.load(pem: read(file)) }

    /// Public keys from files holding a public or a private PEM key.
    static func keySet(_ files: [String], threshold: Int) throws -> TUFRepository.RoleKeySet {
        TUFRepository.RoleKeySet(keys: try files.map { file in try TUFSigningKey.publicKey(pem: read(file)) }, threshold: threshold)
    }

    static var now: UTCTime { systemUTCClock() }

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
        let repository = try TUFRepository.create(
            at: directory,
            root: RepoOptions.keySet(values.values(Self.rootKey), threshold: rootThresholdValue),
            timestamp: RepoOptions.keySet(values.values(Self.timestampKey), threshold: 1),
            snapshot: RepoOptions.keySet(values.values(Self.snapshotKey), threshold: 1),
            targets: RepoOptions.keySet(values.values(Self.targetsKey), threshold: 1),
            channels: try channels.map { (name: $0.0, keys: try RepoOptions.keySet($0.1, threshold: 1)) },
            expiry: expiry, now: RepoOptions.now)
        try RepoStatus(repository).say(.repoInitialized, context, directory)
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
        let repository = try TUFRepository(directory: directory)
        guard let data = FileManager.default.contents(atPath: file) else { throw TUFError.publisher(detail: ErrorDetail("unreadable_file", [file])) }
        var custom: JSON?
        if let customFile {
            guard let text = FileManager.default.contents(atPath: customFile) else { throw TUFError.publisher(detail: ErrorDetail("unreadable_file", [customFile])) }
            custom = try JSONParser.parse(Array(text))
            guard custom?.object != nil else { throw TUFError.publisher(detail: ErrorDetail("not_json_object_file", [customFile])) }
        }
        let targetName = name ?? URL(fileURLWithPath: file).lastPathComponent
        if let object = custom?.object, object["kind"]?.string == FirmwareTarget.firmwareKind {
            // A firmware target: the .ugif must be what its description says (version,
            // hardware type) before anyone signs it; --notes and --serial amend the description.
            var metadata = try FirmwareReleaseMetadata.decode(JSONWriter.encode(.object(object)), file: customFile ?? file)
            for (language, text) in notes { metadata.notes[language] = text }
            if !serials.isEmpty { metadata.serials = Cohort(serials: serials) }
            _ = try FirmwareRelease.check(Array(data), path: channel + "/" + targetName, metadata: metadata)
            custom = metadata.custom()
        } else if custom == nil {
            // A region catalogue carries its version; a firmware image needs its description.
            if let catalogue = try? RegionCatalogue.decode(Array(data), file: file) {
                custom = FirmwareTarget.custom(for: catalogue)
            } else if targetName.hasSuffix(".ugif") {
                throw FirmwareError.invalidInput(file: file, detail: ErrorDetail("needs_custom"))
            }
        }
        let path = try repository.addTarget(channel: channel, name: targetName, bytes: Array(data), custom: custom, now: RepoOptions.now)
        try RepoStatus(repository).say(.repoTargetAdded, context, path)
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
        let repository = try TUFRepository(directory: directory)
        for file in keys { try repository.sign(role: role, with: RepoOptions.signingKey(file)) }
        try RepoStatus(repository).say(.repoSigned, context, role)
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
        let repository = try TUFRepository(directory: directory)
        let now = RepoOptions.now
        try repository.timestamp(with: keys.map(RepoOptions.signingKey), snapshotKeys: snapshotKeys.map(RepoOptions.signingKey), now: now)
        if let output { try repository.publish(to: output, now: now) }
        try RepoStatus(repository).say(.repoTimestamped, context, output ?? "")
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
        let repository = try TUFRepository(directory: directory)
        try repository.rotate(role: role, to: RepoOptions.keySet(keys, threshold: threshold), now: RepoOptions.now)
        try RepoStatus(repository).say(.repoRotated, context, role)
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
        let repository = try TUFRepository(directory: directory)
        let written = try repository.publish(to: output, now: RepoOptions.now)
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
        try RepoStatus(TUFRepository(directory: directory)).say(nil, context, "")
        return .success
    }
}

struct RepoPublished: Encodable {
    let output: String
    let files: [String]
}

/// Each role's state; the `--json` form of every repo command but publish.
struct RepoStatus: Encodable {
    struct Role: Encodable {
        let role: String
        let version: UInt64?
        let expires: String?
        let signed: Bool
        let signatures: Int
        let threshold: Int
    }

    let roles: [Role]

    init(_ repository: TUFRepository) throws {
        let missing = try repository.missingSignatures()
        var roles: [Role] = []
        for name in ["root", "targets"] + repository.channels + ["snapshot", "timestamp"] {
            let staged = try repository.staged(name)
            let version: UInt64? = staged?.signed["version"]?.int64.map { UInt64($0) }
            let lacking = missing.first { $0.role == name }
            roles.append(Role(role: name, version: version, expires: staged?.signed["expires"]?.string, signed: lacking == nil,
                              signatures: lacking?.valid ?? (staged?.signatures.count ?? 0), threshold: lacking?.threshold ?? 1))
        }
        self.roles = roles
    }

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
