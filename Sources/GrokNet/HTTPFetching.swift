import Synchronization

/// Fetches firmware-channel documents and images. ``CurlFetcher`` is the real backend;
/// callers accept any `HTTPFetching` so tests can inject another.
///
/// Both operations block no Swift-concurrency thread: the transfer runs on a thread of its
/// own. Cancelling the calling task cancels the transfer (like ``CancellationFlag``).
public protocol HTTPFetching: Sendable {
    /// Fetches a small document (channel metadata) into memory.
    ///
    /// - Parameters:
    ///   - url: an https://, http:// or file:// URL.
    ///   - validators: the ETag and Last-Modified of the copy the caller already has; when
    ///     given, the request is conditional and an unchanged document is
    ///     ``FetchResult/notModified(_:)``.
    ///   - options: trust, timeouts, retries, limits (``TransferOptions/sizeCap`` defaults
    ///     to ``TransferOptions/defaultDocumentCap`` here).
    func fetch(
        _ url: String, ifChanged validators: Validators?, options: TransferOptions
    ) async throws(NetError) -> FetchResult

    /// Downloads an image into `partialFile`, resuming from its current length with a Range
    /// request, and fsyncs it. The file is never renamed or deleted: the caller verifies it
    /// and decides.
    ///
    /// - Parameters:
    ///   - url: an https://, http:// or file:// URL.
    ///   - partialFile: the `.partial` file to create or continue.
    ///   - options: trust, timeouts, retries, limits, ``TransferOptions/expectedSize``,
    ///     cancellation.
    ///   - progress: called on the transfer thread with the bytes the file holds and the
    ///     total size when known.
    func download(
        _ url: String, to partialFile: String, options: TransferOptions,
        progress: (@Sendable (_ done: Int64, _ total: Int64?) -> Void)?
    ) async throws(NetError) -> DownloadResult
}

/// A document's validators, for conditional requests.
public struct Validators: Sendable, Hashable {
    /// The `ETag` header, verbatim (quotes and `W/` included).
    public var etag: String?
    /// The `Last-Modified` header, verbatim.
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// The outcome of ``HTTPFetching/fetch(_:ifChanged:options:)``.
public enum FetchResult: Sendable, Equatable {
    /// The server sent the document.
    case fetched(Document)
    /// The server answered 304: the caller's copy is current. Carries the validators the 304
    /// repeated (they may be empty).
    case notModified(Validators)
}

/// A fetched document.
public struct Document: Sendable, Equatable {
    /// The body.
    public var body: [UInt8]
    /// The HTTP status (a 2xx), or 0 for file://.
    public var status: Int
    /// ETag and Last-Modified, for the next conditional fetch.
    public var validators: Validators
}

/// The outcome of ``HTTPFetching/download(_:to:options:progress:)``.
public struct DownloadResult: Sendable, Equatable {
    /// The last response's status: 200, 206, 416 (the partial file was already complete),
    /// or 0 for file://.
    public var status: Int
    /// The bytes the partial file now holds.
    public var size: Int64
    /// Where the successful attempt started (0 when it started from scratch).
    public var resumedFrom: Int64
    /// Bytes received over all attempts.
    public var bytesReceived: Int64
    /// How many requests were made (1 when the first succeeded).
    public var attempts: Int
    /// ETag and Last-Modified of the image, when the server sent them.
    public var validators: Validators
}

/// Where server certificates are checked against.
public enum TrustStore: Sendable, Equatable {
    /// The system's CA store (libcurl's default bundle and directory).
    case system
    /// Only the CAs in this PEM file: the system store is not consulted.
    case pinned(caBundle: String)
}

/// Which proxy to use.
public enum ProxySetting: Sendable, Equatable {
    /// libcurl's default: `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` from the
    /// environment (lower-case `http_proxy` only, as libcurl does).
    case environment
    /// No proxy, whatever the environment says.
    case direct
    /// This proxy URL (e.g. `http://proxy:3128`) for every host; the environment's proxy
    /// variables, `no_proxy` included, are ignored.
    case explicit(String)
}

/// Exponential backoff between attempts: `initial`, then times `multiplier` each time, at
/// most `maximum`.
public struct Backoff: Sendable, Equatable {
    public var initial: Duration
    public var multiplier: Double
    public var maximum: Duration

    public init(initial: Duration = .seconds(1), multiplier: Double = 2, maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
    }

    /// The pause before retry number `retry` (1 for the first retry).
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(retry, 1) {
            delay = delay * multiplier
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }
}

/// A flag the caller sets to stop a transfer; checked by libcurl's progress callback, so a
/// transfer stops within about a second even when no data arrives.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    /// Asks the transfer to stop; it fails with ``NetError/cancelled(url:received:)``.
    public func cancel() { flag.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
}

/// How a transfer is made. The defaults suit a firmware channel on the internet.
public struct TransferOptions: Sendable {
    /// The size cap ``HTTPFetching/fetch(_:ifChanged:options:)`` uses when ``sizeCap`` is nil.
    public static let defaultDocumentCap: Int64 = 16 << 20

    /// Which CAs server certificates must chain to.
    public var trust: TrustStore = .system
    /// Longest wait for the TCP and TLS connection.
    public var connectTimeout: Duration = .seconds(15)
    /// A transfer slower than this many bytes per second for ``stallTime`` is abandoned
    /// (and retried). 0 turns stall detection off.
    public var lowSpeedLimit: Int = 1024
    /// How long the transfer may stay under ``lowSpeedLimit``; whole seconds (rounded up).
    public var stallTime: Duration = .seconds(30)
    /// Retries after the first attempt, for transient failures only.
    public var maxRetries: Int = 4
    /// The pauses between attempts.
    public var backoff: Backoff = Backoff()
    /// Redirects followed before ``NetError/tooManyRedirects(url:limit:)``.
    public var maxRedirects: Int = 5
    /// The largest body accepted; a larger Content-Length is refused before the transfer,
    /// a body that grows past it is aborted.
    public var sizeCap: Int64?
    /// The exact size from signed metadata: a longer body is refused, a shorter one is
    /// ``NetError/truncated(url:received:expected:)``.
    public var expectedSize: Int64?
    /// The proxy (by default, the environment's).
    public var proxy: ProxySetting = .environment
    /// Set to cancel the transfer from another thread or task.
    public var cancellation: CancellationFlag?
    /// The User-Agent header.
    public var userAgent: String = "grokctl"
    /// The longest one fetch or download may take, every attempt and backoff pause
    /// included; past it the transfer ends with ``NetError/deadline(url:seconds:)``. The
    /// stall limit alone lets a server that trickles just above ``lowSpeedLimit`` hold a
    /// transfer for hours. `nil`: no overall limit.
    public var deadline: Duration? = .seconds(900)

    public init(
        trust: TrustStore = .system,
        connectTimeout: Duration = .seconds(15),
        lowSpeedLimit: Int = 1024,
        stallTime: Duration = .seconds(30),
        maxRetries: Int = 4,
        backoff: Backoff = Backoff(),
        maxRedirects: Int = 5,
        sizeCap: Int64? = nil,
        expectedSize: Int64? = nil,
        proxy: ProxySetting = .environment,
        cancellation: CancellationFlag? = nil,
        userAgent: String = "grokctl",
        deadline: Duration? = .seconds(900)
    ) {
        self.trust = trust
        self.connectTimeout = connectTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.stallTime = stallTime
        self.maxRetries = maxRetries
        self.backoff = backoff
        self.maxRedirects = maxRedirects
        self.sizeCap = sizeCap
        self.expectedSize = expectedSize
        self.proxy = proxy
        self.cancellation = cancellation
        self.userAgent = userAgent
        self.deadline = deadline
    }
}
