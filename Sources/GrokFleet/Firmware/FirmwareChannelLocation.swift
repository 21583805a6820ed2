import Foundation
import GrokFirmware
import GrokNet
import GrokTUF

/// Where a station's firmware channel is and how it is trusted: the fleet's TUF repository
/// (`--repository`), the pinned root (`--trusted-root`, else the per-user or system
/// root.json), the state directory of trusted metadata and verified images, the channel,
/// and the transport's rules (a pinned CA bundle, plain http only when allowed).
public struct FirmwareChannelLocation: Sendable, Hashable {
    /// `https://`, `http://` or `file:///` (a directory already made a `file://` URL).
    public var repositoryURL: String
    /// The channel name (`release`, `development`).
    public var channel: String
    /// The pinned root.json; `nil`: the per-user or system one (``StationPaths``).
    public var trustedRootFile: String?
    /// `nil`: the per-user or system state directory (``StationPaths``).
    public var stateDirectory: String?
    /// CA certificates that alone are trusted for https (`nil`: the system store).
    public var caBundle: String?
    /// Whether plain http is accepted.
    public var allowInsecureHTTP: Bool
    /// How many times a transient network failure (no answer, a refused or reset connection,
    /// an unknown host) is tried again, after pauses of 1, 2, 4, 8 ... seconds.
    public var networkRetries: Int

    /// The retries a station makes by default: four, about 15 seconds of pauses in all.
    public static let defaultNetworkRetries = TransferOptions().maxRetries

    public init(repositoryURL: String, channel: String, trustedRootFile: String? = nil, stateDirectory: String? = nil,
                caBundle: String? = nil, allowInsecureHTTP: Bool = false, networkRetries: Int = defaultNetworkRetries) {
        self.repositoryURL = repositoryURL
        self.channel = channel
        self.trustedRootFile = trustedRootFile
        self.stateDirectory = stateDirectory
        self.caBundle = caBundle
        self.allowInsecureHTTP = allowInsecureHTTP
        self.networkRetries = networkRetries
    }

    /// The station's TUF client for the channel; nothing is fetched yet.
    ///
    /// - Parameter environment: Where the per-user root and state directory are looked for.
    /// - Throws: ``FirmwareError/noTrustRoot(searched:)`` when no root is pinned anywhere,
    ///   ``FirmwareError/noStateDirectory``, ``TUFError/insecureTransport(url:)`` for plain
    ///   http not allowed.
    public func open(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> FirmwareChannel {
        guard let root = StationPaths.trustedRoot(explicit: trustedRootFile, environment: environment) else {
            let searched = [StationPaths.configHomeRoot(environment), "/etc/grokctl/root.json"].compactMap { $0 }.joined(separator: ", ")
            throw FirmwareError.noTrustRoot(searched: searched)
        }
        guard let state = StationPaths.stateDirectory(explicit: stateDirectory, environment: environment) else {
            throw FirmwareError.noStateDirectory
        }
        let lower = repositoryURL.lowercased()
        if lower.hasPrefix("http://"), !allowInsecureHTTP { throw TUFError.insecureTransport(url: repositoryURL) }
        var transfer = TransferOptions()
        if let caBundle { transfer.trust = .pinned(caBundle: caBundle) }
        transfer.maxRetries = networkRetries
        let fetcher: any TUFFetching = lower.hasPrefix("file://")
            ? LocalFileFetcher() : CurlTUFFetcher(options: transfer, allowInsecureHTTP: allowInsecureHTTP)
        return FirmwareChannel(repository: StationRepository(stateDirectory: state, trustedRootFile: root, repositoryURL: repositoryURL,
                                                             fetcher: fetcher),
                               name: channel)
    }
}
