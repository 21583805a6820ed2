import Foundation
import GrokCommandLine
import GrokFirmware
import GrokFleet
import Synchronization

/// The options the technician commands (`grokctl firmware list|check|download|verify|flash`,
/// `grokctl region set|catalogue update`) share: the fleet's TUF repository, the station's
/// pinned root and state directory, and the channel.
struct FirmwareOptions: Sendable {
    /// `--channel <name>`.
    static let channel = OptionDeclaration.option(
        "channel", value: .valueChannel, help: .optionChannel, defaultValue: "release")
    /// `--ca-bundle <file>`.
    static let caBundle = OptionDeclaration.option("ca-bundle", value: .valueFile, help: .optionCABundle, type: .file)
    /// `--repository <url>`: the fleet's TUF repository (what `grokctl repo publish` wrote).
    static let repository = OptionDeclaration.option("repository", value: .valueURL, help: .optionRepository)
    /// `--trusted-root <file>`: the station's pinned root.json.
    static let trustedRoot = OptionDeclaration.option("trusted-root", value: .valueFile, help: .optionTrustedRoot, type: .file)
    /// `--state <dir>`: the station's trusted metadata and verified images.
    static let state = OptionDeclaration.option("state", value: .valueDirectory, help: .optionStateDirectory, type: .directory)
    /// `--allow-insecure-http`.
    static let allowInsecureHTTP = OptionDeclaration.flag("allow-insecure-http", help: .optionAllowInsecureHTTP)

    /// `--network-retries <count>`: how often a transient network failure is tried again.
    static let networkRetries = OptionDeclaration.option(
        "network-retries", value: .valueCount, help: .optionNetworkRetries,
        defaultValue: String(FirmwareChannelLocation.defaultNetworkRetries), type: .integer(0...10))

    /// The `--repository` value that names the shipped demo channel.
    static let demoRepositoryName = "demo"

    /// All of them, in the order help lists them.
    static let declarations = [repository, trustedRoot, state, allowInsecureHTTP, channel, caBundle, networkRetries]

    let channel: String
    let caBundle: String?
    /// `--repository`, as a URL (`demo` and a directory made URLs).
    let repositoryOption: String?
    /// `--trusted-root`, else the shipped demo channel's root.json for `--repository demo`.
    let trustedRootOption: String?
    let stateDirectory: String?
    let allowInsecureHTTP: Bool
    let networkRetries: Int
    /// The environment the station settings are read from.
    let environment: [String: String]

    /// Reads and checks the options.
    init(_ values: ParsedValues) throws(CLIError) {
        guard let channel = values.value(Self.channel) else { throw .missingOption(option: Self.channel.spelling) }
        guard Self.isValidChannelName(channel) else { throw .invalidChannel(channel) }
        self.channel = channel
        if let bundle = values.value(Self.caBundle) {
            guard !bundle.isEmpty else { throw .invalidValue(value: bundle, option: Self.caBundle.spelling) }
            caBundle = bundle
        } else {
            caBundle = nil
        }
        environment = values.environment
        var shippedRoot: String?
        if let value = values.value(Self.repository) {
            let repository = try Self.repositoryURL(value, environment: values.environment)
            repositoryOption = repository.url
            shippedRoot = repository.shippedRoot
        } else {
            repositoryOption = nil
        }
        trustedRootOption = values.value(Self.trustedRoot) ?? shippedRoot
        stateDirectory = values.value(Self.state)
        allowInsecureHTTP = values.flag(Self.allowInsecureHTTP)
        networkRetries = try values.integer(Self.networkRetries) ?? FirmwareChannelLocation.defaultNetworkRetries
        if let file = trustedRootOption, file.isEmpty { throw .invalidValue(value: file, option: Self.trustedRoot.spelling) }
        if let dir = stateDirectory, dir.isEmpty { throw .invalidValue(value: dir, option: Self.state.spelling) }
    }

    /// A repository as the option, the environment or the station settings give it, as a
    /// URL: `demo` is the shipped demo channel, found beside the program (never in the current
    /// directory) and trusted through the root.json shipped beside it (`shippedRoot`); a
    /// directory (a USB stick) is read as a `file://` repository.
    static func repositoryURL(_ value: String, environment: [String: String]) throws(CLIError) -> (url: String, shippedRoot: String?) {
        var url = value
        var shippedRoot: String?
        if url == Self.demoRepositoryName {
            let paths = InstallPaths(environment: environment)
            guard let demo = paths.demoChannel.path, paths.exists(demo) else {
                throw .badValue(value: url, option: Self.repository.spelling,
                                rule: .shippedData(paths.demoChannel.path ?? "/usr/share/grokctl/firmware/demo-channel"))
            }
            url = demo
            shippedRoot = demo + "/root.json"
        }
        if !url.isEmpty, !url.contains("://") {
            url = "file://" + URL(fileURLWithPath: url).standardizedFileURL.path
        }
        let lower = url.lowercased()
        guard ["https://", "http://", "file:///"].contains(where: { lower.hasPrefix($0) && lower.count > $0.count }) else {
            throw .invalidServerURL(url)
        }
        return (url, shippedRoot)
    }

    /// The repository and its trust root: `--repository`, else `$GROKCTL_REPOSITORY`, else
    /// the station settings' `repository` (``StationSettings``); `nil` when none names one.
    /// The trust root is `--trusted-root` (or the demo channel's own root.json), else
    /// `$GROKCTL_TRUSTED_ROOT`, else the settings' `trusted_root`, else `root.json` in the
    /// configuration directories (``StationPaths``).
    /// - Throws: ``FleetError`` for a station settings file that is not valid.
    func repository() throws -> (url: String, trustedRoot: String?)? {
        let settings = try StationSettings(environment: environment)
        var trustedRoot = trustedRootOption
        let url: String
        if let repositoryOption {
            url = repositoryOption
        } else if let setting = settings.setting(.repository) {
            let repository = try Self.repositoryURL(setting.value, environment: environment)
            url = repository.url
            trustedRoot = trustedRoot ?? repository.shippedRoot
        } else {
            return nil
        }
        return (url, trustedRoot ?? settings.setting(.trustedRoot)?.value)
    }

    /// Whether `name` can be a channel name (a TUF delegation's name and a directory name):
    /// 1 to 64 of `a-z`, `0-9`, `-`, `_`, starting with a letter or digit.
    static func isValidChannelName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.enumerated().allSatisfy { index, c in
            (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || (index > 0 && (c == 0x2D || c == 0x5F))
        }
    }

    /// The station's TUF client for the repository (``repository()``); without one, a usage
    /// error naming both ways to give it (`--repository`, the station settings).
    func openStation() throws -> FirmwareChannel {
        guard let channel = try openStationIfGiven() else {
            throw CLIError.coded(code: "usage_no_repository",
                                 arguments: [StationSettings.userFile(environment: environment) ?? StationSettings.systemFile(environment: environment)])
        }
        return channel
    }

    /// ``openStation()``, or `nil` when no repository is named (GrokFleet's ``FirmwareChannelLocation``).
    func openStationIfGiven() throws -> FirmwareChannel? {
        guard let repository = try repository() else { return nil }
        return try FirmwareChannelLocation(repositoryURL: repository.url, channel: channel, trustedRootFile: repository.trustedRoot,
                                           stateDirectory: stateDirectory, caBundle: caBundle, allowInsecureHTTP: allowInsecureHTTP,
                                           networkRetries: networkRetries).open()
    }
}

/// Runs async library work (the network) from a command, which runs on a plain thread
/// (the process's main thread or a device thread), and waits for it. Not for use from a
/// Swift concurrency task: blocking one of the cooperative pool's threads while the work
/// needs that pool can starve it (tests run these commands through the binary).
enum Blocking {
    private final class Box<T: Sendable>: Sendable {
        let result = Mutex<Result<T, any Error>?>(nil)
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            box.result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try box.result.withLock { $0! }.get()
    }
}
