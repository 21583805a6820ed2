import GrokBasics

/// Everything that can go wrong fetching a document or downloading an image. Each case
/// names the URL (or the local file) and carries what a person needs to act; `code` is
/// stable for `--json` output and for the localized catalog (`error.net.<code>`).
///
/// What went wrong inside a case (`detail`) is an ``ErrorDetail``: a code under `net.detail`
/// in the catalog (from libcurl's CURLcode, the socket's errno, the TLS verification result),
/// never libcurl's English; its text stays only as a value (`curl_said`) where no code fits.
///
/// Sizes are in bytes. `received` counts what the partial file (or document buffer) holds,
/// including bytes kept from earlier attempts.
public enum NetError: Error, Sendable, CodedError, Equatable {
    /// The URL could not be parsed, or uses a scheme other than https, http or file.
    case invalidURL(url: String, detail: ErrorDetail)
    /// The host name (or the proxy's) could not be resolved.
    case resolveFailed(url: String, detail: ErrorDetail)
    /// No connection could be made: refused, unreachable, or the connect timeout passed.
    case connectFailed(url: String, detail: ErrorDetail)
    /// The server's certificate is not trusted by the CA bundle in use (`caBundle`, the pinned
    /// bundle's path; nil for the system store), or does not match the host name.
    case untrustedServer(url: String, caBundle: String?, detail: ErrorDetail)
    /// TLS failed for another reason: handshake error, unreadable CA bundle.
    case tls(url: String, detail: ErrorDetail)
    /// The transfer was slower than `limit` bytes per second for `seconds` seconds.
    case stalled(url: String, received: Int64, limit: Int, seconds: Int)
    /// The connection broke before the response was complete (reset, receive error).
    case connectionLost(url: String, received: Int64, detail: ErrorDetail)
    /// The server answered with an HTTP status that is not a success.
    case httpStatus(url: String, status: Int)
    /// More redirects than `limit` were followed: a redirect loop or a misconfigured server.
    case tooManyRedirects(url: String, limit: Int)
    /// The body is larger than the size cap: announced by Content-Length (refused before
    /// any byte was stored) when `announced`, otherwise counted while it arrived.
    case sizeCapExceeded(url: String, cap: Int64, size: Int64, announced: Bool)
    /// The body is longer than the size the signed metadata gives for it.
    case longerThanExpected(url: String, expected: Int64, size: Int64, announced: Bool)
    /// The body ended before `expected` bytes: the server's Content-Length, or the size the
    /// signed metadata gives.
    case truncated(url: String, received: Int64, expected: Int64)
    /// The server answered a Range request with a range that was not asked for, or with a
    /// Content-Range that cannot be read.
    case badRange(url: String, detail: ErrorDetail)
    /// The server refused the Range request (416) again after the partial file was restarted.
    case rangeNotSatisfiable(url: String, offset: Int64)
    /// The caller cancelled the transfer.
    case cancelled(url: String, received: Int64)
    /// The whole fetch (every attempt and pause) took longer than its overall limit of
    /// `seconds` (``TransferOptions/deadline``): a server sending just fast enough to stay
    /// above the stall limit cannot hold it open for long.
    case deadline(url: String, seconds: Int)
    /// The local file (the partial download, or the file:// source) could not be used.
    case file(path: String, detail: ErrorDetail)
    /// libcurl failed in a way not listed above; `curlCode` is its CURLcode.
    case transfer(url: String, curlCode: Int, detail: ErrorDetail)

    /// A stable identifier for machines and for the message catalog.
    public var code: String {
        switch self {
        case .invalidURL: "net_invalid_url"
        case .resolveFailed: "net_resolve_failed"
        case .connectFailed: "net_connect_failed"
        case .untrustedServer: "net_untrusted_server"
        case .tls: "net_tls"
        case .stalled: "net_stalled"
        case .connectionLost: "net_connection_lost"
        case .httpStatus: "net_http_status"
        case .tooManyRedirects: "net_too_many_redirects"
        case .sizeCapExceeded: "net_size_cap_exceeded"
        case .longerThanExpected: "net_longer_than_expected"
        case .truncated: "net_truncated"
        case .badRange: "net_bad_range"
        case .rangeNotSatisfiable: "net_range_not_satisfiable"
        case .cancelled: "net_cancelled"
        case .deadline: "net_deadline"
        case .file: "net_file"
        case .transfer: "net_transfer"
        }
    }

    /// The values a localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .invalidURL(let u, let d): [u] + d.flattened
        case .resolveFailed(let u, let d): [u] + d.flattened
        case .connectFailed(let u, let d): [u] + d.flattened
        case .untrustedServer(let u, let b, let d): [u, b == nil ? "system_store" : "pinned_bundle", b ?? ""] + d.flattened
        case .tls(let u, let d): [u] + d.flattened
        case .stalled(let u, let r, let l, let s): [u, String(r), String(l), String(s)]
        case .connectionLost(let u, let r, let d): [u, String(r)] + d.flattened
        case .httpStatus(let u, let s): [u, String(s)]
        case .tooManyRedirects(let u, let l): [u, String(l)]
        case .sizeCapExceeded(let u, let c, let s, let a): [u, String(c), String(s), String(a)]
        case .longerThanExpected(let u, let e, let s, let a): [u, String(e), String(s), String(a)]
        case .truncated(let u, let r, let e): [u, String(r), String(e)]
        case .badRange(let u, let d): [u] + d.flattened
        case .rangeNotSatisfiable(let u, let o): [u, String(o)]
        case .cancelled(let u, let r): [u, String(r)]
        case .deadline(let u, let s): [u, String(s)]
        case .file(let p, let d): [p] + d.flattened
        case .transfer(let u, let c, let d): [u, String(c)] + d.flattened
        }
    }

    /// The URL (or, for ``file(path:detail:)``, the local path) the error is about.
    public var subject: String {
        switch self {
        case .invalidURL(let u, _), .resolveFailed(let u, _), .connectFailed(let u, _),
            .untrustedServer(let u, _, _), .tls(let u, _), .stalled(let u, _, _, _),
            .connectionLost(let u, _, _), .httpStatus(let u, _), .tooManyRedirects(let u, _),
            .sizeCapExceeded(let u, _, _, _), .longerThanExpected(let u, _, _, _),
            .truncated(let u, _, _), .badRange(let u, _), .rangeNotSatisfiable(let u, _),
            .cancelled(let u, _), .transfer(let u, _, _), .deadline(let u, _):
            u
        case .file(let p, _): p
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}
