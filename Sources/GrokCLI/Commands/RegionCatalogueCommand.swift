import Foundation
import GrokFirmware
import GrokProtocol
import UGrokIt

/// `grokctl region catalogue`: the signed region catalogue (docs/regions.md) — made, signed
/// and published by a fleet owner, fetched into the verified cache by a station.
struct RegionCatalogueCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "catalogue", abstract: .commandRegionCatalogueAbstract,
            subcommands: [RegionCatalogueMakeCommand.self, RegionCatalogueSignCommand.self,
                          RegionCataloguePublishCommand.self, RegionCatalogueUpdateCommand.self])
    }

    init(_ values: ParsedValues) {}
}

/// `grokctl region catalogue make --version N --expires DATE --revisions 1,2,3 --output FILE`:
/// an unsigned catalogue of the firmware's 22 regions, every one open to the given board revisions.
struct RegionCatalogueMakeCommand: Command {
    static let version = OptionDeclaration.option("version", value: .valueNumber, help: .optionCatalogueVersion, required: true)
    static let expires = OptionDeclaration.option("expires", value: .valueDate, help: .optionCatalogueExpires, required: true)
    static let revisions = OptionDeclaration.option("revisions", value: .valueList, help: .optionCatalogueRevisions, defaultValue: "3")
    static let output = OptionDeclaration.option("output", short: "o", value: .valueFile, help: .optionCatalogueOutput, required: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "make", abstract: .commandRegionCatalogueMakeAbstract, options: [version, expires, revisions, output])
    }

    let version: UInt64
    let expires: Date
    let revisions: [UInt8]
    let outputFile: String

    init(_ values: ParsedValues) throws(CLIError) {
        let text = values.value(Self.version) ?? ""
        guard let version = UInt64(text), version > 0 else { throw .invalidValue(value: text, option: Self.version.spelling) }
        self.version = version
        let date = values.value(Self.expires) ?? ""
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let expires = formatter.date(from: date) else { throw .invalidValue(value: date, option: Self.expires.spelling) }
        self.expires = expires
        let list = values.value(Self.revisions) ?? "3"
        let parsed = list.split(separator: ",").map { UInt8($0.trimmingCharacters(in: .whitespaces)) }
        guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil }) else { throw .invalidValue(value: list, option: Self.revisions.spelling) }
        revisions = parsed.compactMap { $0 }
        outputFile = values.value(Self.output) ?? ""
        guard !outputFile.isEmpty else { throw .invalidValue(value: outputFile, option: Self.output.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let catalogue = try RegionPublisher.catalogue(
            version: version, expires: expires, eligibility: RegionPublisher.everywhere(hardwareRevisions: revisions))
        try FirmwarePublisher.write(catalogue.payload(), to: outputFile)
        let report = CatalogueReport(file: outputFile, version: version, regions: catalogue.regions.count,
                                     expires: FirmwareText.timestamp(expires), signatures: 0)
        report.say(.catalogueMade, context)
        return .success
    }
}

/// `grokctl region catalogue sign --catalogue FILE --key PEM... --output FILE`.
struct RegionCatalogueSignCommand: Command {
    static let catalogue = OptionDeclaration.option("catalogue", value: .valueFile, help: .optionCatalogueFile, required: true)
    static let key = OptionDeclaration.option("key", value: .valueFile, help: .optionSignKey, repeatable: true, required: true)
    static let output = OptionDeclaration.option("output", short: "o", value: .valueFile, help: .optionCatalogueOutput, required: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "sign", abstract: .commandRegionCatalogueSignAbstract, options: [catalogue, key, output])
    }

    let catalogueFile: String
    let keyFiles: [String]
    let outputFile: String

    init(_ values: ParsedValues) throws(CLIError) {
        catalogueFile = values.value(Self.catalogue) ?? ""
        keyFiles = values.values(Self.key)
        outputFile = values.value(Self.output) ?? ""
        for (value, option) in [(catalogueFile, Self.catalogue), (outputFile, Self.output)] where value.isEmpty {
            throw .invalidValue(value: value, option: option.spelling)
        }
        if let empty = keyFiles.first(where: \.isEmpty) { throw .invalidValue(value: empty, option: Self.key.spelling) }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let signed = try RegionPublisher.sign(envelopeFile: catalogueFile, keyFiles: keyFiles, output: outputFile)
        let catalogue = try RegionCatalogue.decode(signed.payload, file: outputFile)
        let report = CatalogueReport(file: outputFile, version: catalogue.version, regions: catalogue.regions.count,
                                     expires: FirmwareText.timestamp(catalogue.expires), signatures: signed.signatures.count)
        report.say(.catalogueSigned, context)
        return .success
    }
}

/// `grokctl region catalogue publish --catalogue SIGNED --root DIR --trusted-keys FILE`:
/// `<root>/regions.json`, written only if it meets the keys' threshold and has not expired.
struct RegionCataloguePublishCommand: Command {
    static let catalogue = RegionCatalogueSignCommand.catalogue
    static let root = OptionDeclaration.option("root", value: .valueDirectory, help: .optionPublishRoot, required: true)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "publish", abstract: .commandRegionCataloguePublishAbstract,
                             options: [catalogue, root, FirmwareOptions.trustedKeys])
    }

    let catalogueFile: String
    let root: String
    let trustedKeysFile: String

    init(_ values: ParsedValues) throws(CLIError) {
        catalogueFile = values.value(Self.catalogue) ?? ""
        root = values.value(Self.root) ?? ""
        trustedKeysFile = values.value(FirmwareOptions.trustedKeys) ?? "profiles/firmware-keys.json"
        for (value, option) in [(catalogueFile, Self.catalogue), (root, Self.root)] where value.isEmpty {
            throw .invalidValue(value: value, option: option.spelling)
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let keys = try TrustedKeys.parse(FirmwarePublisher.readInput(trustedKeysFile, limit: 1 << 20), file: trustedKeysFile)
        let bytes = try FirmwarePublisher.readInput(catalogueFile, limit: ChannelMetadata.maxEnvelopeSize)
        let path = try RegionPublisher.publish(envelope: bytes, root: root, trustedKeys: keys)
        if context.console.isJSON {
            context.console.json(["written": path])
        } else {
            context.console.say(.cataloguePublished, path)
        }
        return .success
    }
}

/// `grokctl region catalogue update --repository URL [--channel NAME]`: the catalogue the
/// channel lists as a TUF target, verified by TUF and by the catalogue's rules, kept in the
/// station's state directory. (Without --repository: the older `--server URL`, fetching
/// `<server>/regions.json` into the cache.)
struct RegionCatalogueUpdateCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "update", abstract: .commandRegionCatalogueUpdateAbstract,
                             options: [FirmwareOptions.repository, FirmwareOptions.trustedRoot, FirmwareOptions.state,
                                       FirmwareOptions.allowInsecureHTTP, FirmwareOptions.channel,
                                       FirmwareOptions.cache, FirmwareOptions.trustedKeys, FirmwareOptions.server, FirmwareOptions.caBundle])
    }

    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        if let channel = try firmware.openStation() {
            let catalogue = try Blocking.run { try await channel.regionCatalogue() }
            let report = CatalogueReport(file: channel.repository.stateDirectory + "/images", version: catalogue.version,
                                         regions: catalogue.regions.count, expires: FirmwareText.timestamp(catalogue.expires), signatures: nil)
            report.say(.catalogueCached, context)
            return .success
        }
        let channels = try firmware.openChannels()
        if let server = firmware.server {
            _ = try Blocking.run { try await channels.reloadRegions(from: server) }
        }
        let catalogue = try channels.regionCatalogue()
        let report = CatalogueReport(file: channels.cache.regionsPath, version: catalogue.version, regions: catalogue.regions.count,
                                     expires: FirmwareText.timestamp(catalogue.expires), signatures: nil)
        report.say(.catalogueCached, context)
        return .success
    }
}

/// What a catalogue command did; its `--json` form.
struct CatalogueReport: Encodable {
    let file: String
    let version: UInt64
    let regions: Int
    let expires: String
    let signatures: Int?

    func say(_ key: MessageKey, _ context: CommandContext) {
        if context.console.isJSON {
            context.console.json(self)
        } else {
            context.console.say(key, file, String(version), String(regions), expires, String(signatures ?? 0))
        }
    }
}
