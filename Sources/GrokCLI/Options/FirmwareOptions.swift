import Foundation
import GrokFirmware
import GrokNet
import GrokTUF
import Synchronization
import UGrokIt

/// The options the technician commands (`grokctl firmware list|check|download|verify|flash`,
/// `grokctl firmware cache ...`) share: where the cache is, which keys are trusted, which
/// channel, and where the update server is (none: offline, from the cache only).
struct FirmwareOptions: Sendable {
    /// `--cache <dir>`.
    static let cache = OptionDeclaration.option(
        "cache", value: .valueDirectory, help: .optionFirmwareCache, defaultValue: "firmware-cache")
    /// `--trusted-keys <file>`.
    static let trustedKeys = OptionDeclaration.option(
        "trusted-keys", value: .valueFile, help: .optionTrustedKeys, defaultValue: "profiles/firmware-keys.json")
    /// `--channel <name>`.
    static let channel = OptionDeclaration.option(
        "channel", value: .valueChannel, help: .optionChannel, defaultValue: "release")
    /// `--server <url>`.
    static let server = OptionDeclaration.option("server", value: .valueURL, help: .optionServer)
    /// `--ca-bundle <file>`.
    static let caBundle = OptionDeclaration.option("ca-bundle", value: .valueFile, help: .optionCABundle)

    /// `--repository <url>`: the fleet's TUF repository (what `grokctl repo publish` wrote).
    static let repository = OptionDeclaration.option("repository", value: .valueURL, help: .optionRepository)
    /// `--trusted-root <file>`: the station's pinned root.json.
    static let trustedRoot = OptionDeclaration.option("trusted-root", value: .valueFile, help: .optionTrustedRoot)
    /// `--state <dir>`: the station's trusted metadata and verified images.
    static let state = OptionDeclaration.option("state", value: .valueDirectory, help: .optionStateDirectory)
    /// `--allow-insecure-http`.
    static let allowInsecureHTTP = OptionDeclaration.flag("allow-insecure-http", help: .optionAllowInsecureHTTP)

    /// All of them, in the order help lists them.
    static let declarations = [repository, trustedRoot, state, allowInsecureHTTP, cache, trustedKeys, channel, server, caBundle]
    /// Those that do not involve the server (cache maintenance).
    static let localDeclarations = [cache, trustedKeys]

    let cacheDirectory: String
    let trustedKeysFile: String
    let channel: String
    let server: FirmwareServer?
    let caBundle: String?
    let repositoryURL: String?
    let trustedRootFile: String?
    let stateDirectory: String?
    let allowInsecureHTTP: Bool

    /// Reads and checks the options.
    init(_ values: ParsedValues) throws(CLIError) {
        cacheDirectory = try Self.path(values, Self.cache)
        trustedKeysFile = try Self.path(values, Self.trustedKeys)
        let channel = values.value(Self.channel) ?? "release"
        guard ChannelMetadata.isValidChannelName(channel) else { throw .invalidChannel(channel) }
        self.channel = channel
        if let url = values.value(Self.server) {
            let lower = url.lowercased()
            guard ["https://", "http://", "file://"].contains(where: { lower.hasPrefix($0) && lower.count > $0.count }) else {
                throw .invalidServerURL(url)
            }
            server = FirmwareServer(root: url)
        } else {
            server = nil
        }
        if let bundle = values.value(Self.caBundle) {
            guard !bundle.isEmpty else { throw .invalidValue(value: bundle, option: Self.caBundle.spelling) }
            caBundle = bundle
        } else {
            caBundle = nil
        }
        if var url = values.value(Self.repository) {
            // A directory (a USB stick, the shipped demo channel) is read as a file:// repository.
            if !url.isEmpty, !url.contains("://") {
                url = "file://" + URL(fileURLWithPath: url).standardizedFileURL.path
            }
            let lower = url.lowercased()
            guard ["https://", "http://", "file:///"].contains(where: { lower.hasPrefix($0) && lower.count > $0.count }) else {
                throw .invalidServerURL(url)
            }
            repositoryURL = url
        } else {
            repositoryURL = nil
        }
        trustedRootFile = values.value(Self.trustedRoot)
        stateDirectory = values.value(Self.state)
        allowInsecureHTTP = values.flag(Self.allowInsecureHTTP)
        if let file = trustedRootFile, file.isEmpty { throw .invalidValue(value: file, option: Self.trustedRoot.spelling) }
        if let dir = stateDirectory, dir.isEmpty { throw .invalidValue(value: dir, option: Self.state.spelling) }
    }

    /// The station's TUF client when `--repository` is given (else `nil`: the cache). The
    /// trust root is `--trusted-root`, else the per-user or system root.json
    /// (``StationPaths``); plain http is refused unless `--allow-insecure-http`.
    func openStation() throws -> FirmwareChannel? {
        guard let url = repositoryURL else { return nil }
        let environment = ProcessInfo.processInfo.environment
        guard let root = StationPaths.trustedRoot(explicit: trustedRootFile, environment: environment) else {
            let searched = [StationPaths.configHomeRoot(environment), "/etc/grokctl/root.json"].compactMap { $0 }.joined(separator: ", ")
            throw FirmwareError.noTrustRoot(searched: searched)
        }
        guard let state = StationPaths.stateDirectory(explicit: stateDirectory, environment: environment) else {
            throw FirmwareError.noStateDirectory
        }
        if url.lowercased().hasPrefix("http://"), !allowInsecureHTTP { throw TUFError.insecureTransport(url: url) }
        var transfer = TransferOptions()
        if let caBundle { transfer.trust = .pinned(caBundle: caBundle) }
        let fetcher: any TUFFetching = url.lowercased().hasPrefix("file://")
            ? LocalFileFetcher() : CurlTUFFetcher(options: transfer, allowInsecureHTTP: allowInsecureHTTP)
        let station = StationRepository(stateDirectory: state, trustedRootFile: root, repositoryURL: url, fetcher: fetcher)
        return FirmwareChannel(repository: station, name: channel)
    }

    private static func path(_ values: ParsedValues, _ option: OptionDeclaration) throws(CLIError) -> String {
        let value = values.value(option) ?? ""
        guard !value.isEmpty else { throw .invalidValue(value: value, option: option.spelling) }
        return value
    }

    /// The trusted keys, read and checked.
    func loadTrustedKeys() throws(FirmwareError) -> TrustedKeys {
        try TrustedKeys.parse(FirmwarePublisher.readInput(trustedKeysFile, limit: 1 << 20), file: trustedKeysFile)
    }

    /// The cache, verifying with the trusted keys (created if missing).
    func openCache() throws(FirmwareError) -> FirmwareCache {
        try FirmwareCache(directory: cacheDirectory, verifier: MetadataVerifier(trustedKeys: loadTrustedKeys()))
    }

    /// The channels over the cache, with the transfer options (a pinned CA when given).
    func openChannels() throws(FirmwareError) -> FirmwareChannels {
        var transfer = TransferOptions()
        if let caBundle { transfer.trust = .pinned(caBundle: caBundle) }
        return FirmwareChannels(cache: try openCache(), transfer: transfer)
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
