import GrokCommandLine
import GrokFleet
import GrokFirmware
import UGrokIt

/// `grokctl firmware`: the firmware lifecycle for technicians (list, check, download,
/// verify, flash; on the fleet's TUF repository) and the publisher's `pack`.
struct FirmwareCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "firmware", abstract: .commandFirmwareAbstract, discussion: .commandFirmwareDiscussion,
            subcommands: [
                FirmwareListCommand.self, FirmwareCheckCommand.self, FirmwareDownloadCommand.self,
                FirmwareVerifyCommand.self, FirmwareFlashCommand.self,
                FirmwarePackCommand.self,
            ])
    }

    init(_ values: ParsedValues) {}
}

/// `--device <device>`, optional and repeatable (`firmware list`).
private let optionalDevice = OptionDeclaration.option(
    "device", value: .valueDevice, help: .optionDevice, repeatable: true, type: .device)
/// `--device <device>`, required and repeatable.
private let requiredDevice = OptionDeclaration.option(
    "device", value: .valueDevice, help: .optionDevice, repeatable: true, required: true, type: .device)
/// `--name <name>`: an update by its name in the channel.
private let updateNameOption = OptionDeclaration.option("name", value: .valueName, help: .optionUpdateName)

/// `grokctl firmware list [--device SPEC...]`.
struct FirmwareListCommand: Command {
    static let device = optionalDevice

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "list", abstract: .commandFirmwareListAbstract, discussion: .commandFirmwareListDiscussion,
            options: [device] + FirmwareOptions.declarations)
    }

    let devices: [DeviceSpec]
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        let specs = values.values(Self.device)
        devices = specs.isEmpty ? [] : try DeviceSpec.parseOption(specs)
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runFirmwareList(self, context) }
}

/// `grokctl firmware check --device SPEC...`: exit 0 none available, 100 an update is
/// available for at least one device, 1 a device could not be checked.
struct FirmwareCheckCommand: Command {
    static let device = requiredDevice

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "check", abstract: .commandFirmwareCheckAbstract, discussion: .commandFirmwareCheckDiscussion,
            options: [device] + FirmwareOptions.declarations, exitStatuses: [updateAvailable])
    }

    /// The exit status when at least one device has an update (as `dnf check-update`).
    static let updateAvailable = ExitStatus(100, meaning: .manExitUpdateAvailable)

    let devices: [DeviceSpec]
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        devices = try DeviceSpec.parseOption(values.values(Self.device))
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runFirmwareCheck(self, context) }
}

/// `grokctl firmware download [--name N | --all]`.
struct FirmwareDownloadCommand: Command {
    static let name = updateNameOption
    static let all = OptionDeclaration.flag("all", help: .optionDownloadAll)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "download", abstract: .commandFirmwareDownloadAbstract,
            discussion: .commandFirmwareDownloadDiscussion,
            options: [name, all] + FirmwareOptions.declarations, exclusive: [[name, all]])
    }

    /// The update to download; `nil`: every update the channel lists.
    let updateName: String?
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        updateName = values.value(Self.name)
        if let updateName, updateName.isEmpty { throw .invalidValue(value: updateName, option: Self.name.spelling) }
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runFirmwareDownload(self, context) }
}

/// `grokctl firmware verify [FILE.ugif | -] [--name N] [--repository URL]`.
struct FirmwareVerifyCommand: Command {
    /// `<file>`: the `.ugif` image; `-` reads it from standard input.
    static let package = ArgumentDeclaration(name: .valueFile, help: .argumentPackage, required: false, type: .inputFile)
    static let name = updateNameOption

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "verify", abstract: .commandFirmwareVerifyAbstract, discussion: .commandFirmwareVerifyDiscussion,
            options: [name] + FirmwareOptions.declarations, arguments: [package])
    }

    /// The image to check (a file, or standard input); `nil`: the channel's target `--name`.
    let packageFile: InputFile?
    let updateName: String?
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        // A relative path not in the current directory may name the shipped data (the README's
        // firmware/demo/GR-1_1-8-0_demo.ugif from an installed copy).
        packageFile = values.argument(Self.package).map { InputFile(InstallPaths(environment: values.environment).shippedFile($0)) }
        updateName = values.value(Self.name)
        if packageFile == nil, updateName == nil {
            throw .missingOneOf([Self.package.spelling, Self.name.spelling])
        }
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runFirmwareVerify(self, context) }
}

/// `grokctl firmware flash --device SPEC... [--name N | --version V | --package FILE]`.
struct FirmwareFlashCommand: Command {
    static let device = requiredDevice
    static let name = updateNameOption
    static let version = OptionDeclaration.option("version", value: .valueVersion, help: .optionFlashVersion)
    static let package = OptionDeclaration.option("package", value: .valueFile, help: .optionFlashPackage, type: .inputFile)
    static let allowDowngrade = OptionDeclaration.flag("allow-downgrade", help: .optionAllowDowngrade)
    static let allowSameVersion = OptionDeclaration.flag("allow-same-version", help: .optionAllowSameVersion)
    static let allowUnlisted = OptionDeclaration.flag("allow-unlisted", help: .optionAllowUnlisted)
    static let minBattery = OptionDeclaration.option(
        "min-battery", value: .valuePercent, help: .optionMinBattery, defaultValue: "20", type: .percent)
    /// `--yes`: no confirmation at a terminal.
    static let yes = OptionDeclaration.flag("yes", short: "y", help: .optionFlashYes)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "flash", abstract: .commandFirmwareFlashAbstract, discussion: .commandFirmwareFlashDiscussion,
            options: [device, name, version, package, allowDowngrade, allowSameVersion, allowUnlisted, minBattery, yes]
                + FirmwareOptions.declarations,
            exclusive: [[name, version, package]], exitStatuses: [FlashExit.cancelled])
    }

    /// What to install.
    enum Target: Sendable, Equatable {
        /// The newest update each device may take.
        case best
        /// The update with this name.
        case name(String)
        /// The update with this version.
        case version(FirmwareVersion)
        /// This local `.ugif` file, or standard input (no channel).
        case package(InputFile)
    }

    let devices: [DeviceSpec]
    let target: Target
    let allowDowngrade: Bool
    let allowSameVersion: Bool
    /// `--allow-unlisted`: flash a `--package` image no trusted channel lists.
    let allowUnlisted: Bool
    let minimumBattery: Int
    /// `--yes`: start without asking.
    let confirmed: Bool
    let firmware: FirmwareOptions

    init(_ values: ParsedValues) throws(CLIError) {
        devices = try DeviceSpec.parseOption(values.values(Self.device))
        confirmed = values.flag(Self.yes)
        // At most one of them: the declaration's exclusive set, checked by the parser.
        let chosen = [Self.name, Self.version, Self.package].compactMap { option in values.value(option).map { (option, $0) } }
        if let (option, value) = chosen.first {
            guard !value.isEmpty else { throw .invalidValue(value: value, option: option.spelling) }
            switch option.long {
            case "name": target = .name(value)
            case "version":
                guard let version = FirmwareVersion(value) else { throw .invalidFirmwareVersion(value) }
                target = .version(version)
            default: target = .package(InputFile(InstallPaths(environment: values.environment).shippedFile(value)))
            }
        } else {
            target = .best
        }
        allowDowngrade = values.flag(Self.allowDowngrade)
        allowSameVersion = values.flag(Self.allowSameVersion)
        allowUnlisted = values.flag(Self.allowUnlisted)
        // It says how to take a --package image; without one it would say nothing.
        if allowUnlisted, case .package = target {} else if allowUnlisted { throw .missingOption(option: Self.package.spelling) }
        guard let percent = try values.integer(Self.minBattery) else { throw .missingOption(option: Self.minBattery.spelling) }
        minimumBattery = percent
        firmware = try FirmwareOptions(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runFirmwareFlash(self, context) }
}

// MARK: Publisher

/// `grokctl firmware pack --hex APP.hex [--loader LOADER.hex] --description DESC.json --output GR-1_1-8-0_NAME.ugif`.
struct FirmwarePackCommand: Command {
    static let hex = OptionDeclaration.option("hex", value: .valueFile, help: .optionPackHex, required: true, type: .inputFile)
    static let loader = OptionDeclaration.option("loader", value: .valueFile, help: .optionPackLoader, type: .inputFile)
    static let description = OptionDeclaration.option(
        "description", value: .valueFile, help: .optionPackDescription, required: true, type: .inputFile)
    static let output = OptionDeclaration.option(
        "output", short: "o", value: .valueFile, help: .optionPackOutput, required: true, type: .file)
    static let base = OptionDeclaration.option("base", value: .valueHex, help: .optionPackBase, defaultValue: "0")
    static let readerBytes = OptionDeclaration.option("reader-bytes", value: .valueCount, help: .optionPackReaderBytes,
                                                      type: .integer(1...Int(Int32.max)))
    static let comment = OptionDeclaration.option("comment", value: .valueName, help: .optionPackComment, repeatable: true)
    static let customOutput = OptionDeclaration.option("custom-output", value: .valueFile, help: .optionPackCustomOutput,
                                                       type: .file)

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "pack", abstract: .commandFirmwarePackAbstract, discussion: .commandFirmwarePackDiscussion,
            options: [hex, loader, description, output, base, readerBytes, comment, customOutput])
    }

    let hexFile: InputFile
    let loaderFile: InputFile?
    let descriptionFile: InputFile
    let outputFile: String
    let base: UInt32
    let readerBytes: Int?
    let comments: [String]
    let customOutput: String?

    init(_ values: ParsedValues) throws(CLIError) {
        // The README packs the shipped demo hex (firmware/demo/...), found from any folder.
        let paths = InstallPaths(environment: values.environment)
        hexFile = InputFile(paths.shippedFile(try nonEmpty(values, Self.hex)))
        loaderFile = values.value(Self.loader) == nil ? nil : InputFile(paths.shippedFile(try nonEmpty(values, Self.loader)))
        descriptionFile = InputFile(try nonEmpty(values, Self.description))
        outputFile = try nonEmpty(values, Self.output)
        guard let baseText = values.value(Self.base) else { throw .missingOption(option: Self.base.spelling) }
        let digits = baseText.hasPrefix("0x") || baseText.hasPrefix("0X") ? String(baseText.dropFirst(2)) : baseText
        guard let base = UInt32(digits, radix: baseText == digits ? 10 : 16) else { throw .invalidValue(value: baseText, option: Self.base.spelling) }
        self.base = base
        readerBytes = try values.integer(Self.readerBytes)
        comments = values.values(Self.comment)
        customOutput = values.value(Self.customOutput).flatMap { $0.isEmpty ? nil : $0 }
    }

    func run(_ context: CommandContext) throws -> ExitCode { try runFirmwarePack(self, context) }
}

/// The option's value, refusing an empty one.
private func nonEmpty(_ values: ParsedValues, _ option: OptionDeclaration) throws(CLIError) -> String {
    let value = values.value(option) ?? ""
    guard !value.isEmpty else { throw .invalidValue(value: value, option: option.spelling) }
    return value
}
