internal import CCurl
import GrokBasics
#if canImport(Glibc)
import Glibc
#endif

/// What one request asks for.
struct AttemptRequest: Sendable {
    var url: String
    var options: TransferOptions
    /// The size cap in force (for fetches, the options' or the document default).
    var sizeCap: Int64?
    /// Conditional-request validators (fetch only).
    var validators: Validators?
    /// The partial file to continue (download only); nil collects the body in memory.
    var partialFile: String?
    /// Set when the calling task is cancelled.
    var taskCancellation: CancellationFlag
    var progress: (@Sendable (Int64, Int64?) -> Void)?
    /// When the whole fetch must be over (from ``TransferOptions/deadline``).
    var deadlineAt: ContinuousClock.Instant? = nil

    /// Milliseconds left before ``deadlineAt`` (at least 1), or nil without a deadline.
    var millisecondsLeft: Int? {
        guard let deadlineAt else { return nil }
        let left = ContinuousClock.now.duration(to: deadlineAt)
        return max(Int(left.components.seconds) * 1000 + Int(left.components.attoseconds / 1_000_000_000_000_000), 1)
    }

    var deadlinePassed: Bool { deadlineAt.map { ContinuousClock.now >= $0 } ?? false }
}

/// How one request ended.
struct AttemptOutcome: Sendable {
    enum Kind: Sendable {
        /// A 2xx (or file://) response that completed, or a 304 to a conditional request.
        case success(status: Int, notModified: Bool)
        /// 416 to a Range request (`total` from Content-Range), or a file:// resume past the end.
        case rangeRefused(total: Int64?)
        case failure(NetError, transient: Bool)
    }

    var kind: Kind
    /// Body bytes received by this request.
    var received: Int64 = 0
    /// Where this request started writing in the partial file.
    var startOffset: Int64 = 0
    /// The partial file's length afterwards (download), or the body's size (fetch).
    var size: Int64 = 0
    var body: [UInt8] = []
    var validators = Validators()
}

/// Runs one request on the calling thread (blocking) with a fresh easy handle.
enum Transfer {
    static func run(_ request: AttemptRequest) -> AttemptOutcome {
        do throws(NetError) {
            return try attempt(request)
        } catch {
            return AttemptOutcome(kind: .failure(error, transient: false))
        }
    }

    private static func attempt(_ request: AttemptRequest) throws(NetError) -> AttemptOutcome {
        let url = request.url
        let options = request.options
        var file: PartialFile?
        var offset: Int64 = 0
        if let path = request.partialFile {
            let opened = try PartialFile(path: path)
            offset = try opened.length()
            if let expected = options.expectedSize, offset > expected {
                // Longer than the signed size: nothing in it can be kept.
                try opened.restart()
                offset = 0
            }
            file = opened
        }

        let easy = try CurlEasy(url: url)
        let state = TransferState(request: request, file: file, offset: offset, easy: easy)
        try configure(easy, request: request, offset: offset)
        let context = Unmanaged.passRetained(state)
        defer { context.release() }
        let pointer = context.toOpaque()
        try easy.set(CURLOPT_WRITEDATA, pointer: pointer, "CURLOPT_WRITEDATA")
        try easy.set(CURLOPT_HEADERDATA, pointer: pointer, "CURLOPT_HEADERDATA")
        try easy.set(CURLOPT_XFERINFODATA, pointer: pointer, "CURLOPT_XFERINFODATA")
        try easy.setWriteFunction(CURLOPT_WRITEFUNCTION, writeCallback, "CURLOPT_WRITEFUNCTION")
        try easy.setWriteFunction(CURLOPT_HEADERFUNCTION, headerCallback, "CURLOPT_HEADERFUNCTION")
        try easy.setXferInfoFunction(xferInfoCallback)
        try easy.set(CURLOPT_NOPROGRESS, 0, "CURLOPT_NOPROGRESS")

        let (code, message) = easy.perform()
        var outcome = AttemptOutcome(kind: .success(status: 0, notModified: false))
        outcome.received = state.received
        outcome.startOffset = state.offset
        outcome.size = state.offset + state.received
        outcome.validators = Validators(etag: state.headers["etag"], lastModified: state.headers["last-modified"])
        if let file {
            // Whatever arrived stays usable for the next attempt, even after a crash.
            do throws(NetError) {
                try file.sync()
            } catch {
                outcome.kind = .failure(error, transient: false)
                return outcome
            }
        }
        outcome.kind = classify(code: code, message: message, state: state, easy: easy, request: request)
        if case .success = outcome.kind { outcome.body = state.body }
        return outcome
    }

    private static func configure(_ easy: CurlEasy, request: AttemptRequest, offset: Int64) throws(NetError) {
        let options = request.options
        try easy.set(CURLOPT_URL, request.url, "CURLOPT_URL")
        try easy.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try easy.set(CURLOPT_PROTOCOLS_STR, "https,http,file", "CURLOPT_PROTOCOLS_STR")
        // Never follow an https URL down to plain http.
        let redirectProtocols = request.url.lowercased().hasPrefix("https:") ? "https" : "https,http"
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, redirectProtocols, "CURLOPT_REDIR_PROTOCOLS_STR")
        try easy.set(CURLOPT_FOLLOWLOCATION, 1, "CURLOPT_FOLLOWLOCATION")
        try easy.set(CURLOPT_MAXREDIRS, max(options.maxRedirects, 0), "CURLOPT_MAXREDIRS")
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(milliseconds(options.connectTimeout), 1), "CURLOPT_CONNECTTIMEOUT_MS")
        if let left = request.millisecondsLeft {
            try easy.set(CURLOPT_TIMEOUT_MS, left, "CURLOPT_TIMEOUT_MS")
        }
        if options.lowSpeedLimit > 0 {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedLimit, "CURLOPT_LOW_SPEED_LIMIT")
            try easy.set(CURLOPT_LOW_SPEED_TIME, stallSeconds(options), "CURLOPT_LOW_SPEED_TIME")
        }
        try easy.set(CURLOPT_USERAGENT, options.userAgent, "CURLOPT_USERAGENT")
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        if case .pinned(let bundle) = options.trust {
            try easy.set(CURLOPT_CAINFO, bundle, "CURLOPT_CAINFO")
            // Debian's libcurl also reads /etc/ssl/certs by default; a pin must exclude it.
            try easy.set(CURLOPT_CAPATH, nil, "CURLOPT_CAPATH")
        }
        switch options.proxy {
        case .environment: break
        case .direct: try easy.set(CURLOPT_PROXY, "", "CURLOPT_PROXY")
        case .explicit(let proxy):
            try easy.set(CURLOPT_PROXY, proxy, "CURLOPT_PROXY")
            // For every host: the environment's no_proxy does not apply to an explicit proxy.
            try easy.set(CURLOPT_NOPROXY, "", "CURLOPT_NOPROXY")
        }
        var headers: [String] = []
        if let validators = request.validators {
            if let etag = validators.etag { headers.append("If-None-Match: \(etag)") }
            if let date = validators.lastModified { headers.append("If-Modified-Since: \(date)") }
        }
        if !headers.isEmpty { try easy.setHeaders(headers) }
        if offset > 0 {
            // CURLOPT_RANGE rather than CURLOPT_RESUME_FROM: libcurl then hands a 200 (a
            // server ignoring Range) to us instead of failing, and we restart from zero.
            try easy.set(CURLOPT_RANGE, "\(offset)-", "CURLOPT_RANGE")
        }
    }

    static func stallSeconds(_ options: TransferOptions) -> Int {
        max(1, (milliseconds(options.stallTime) + 999) / 1000)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// Turns libcurl's result (and what the callbacks recorded) into an outcome.
    private static func classify(
        code: CURLcode, message: String, state: TransferState, easy: CurlEasy, request: AttemptRequest
    ) -> AttemptOutcome.Kind {
        let url = request.url
        let options = request.options
        let have = state.offset + state.received
        if let refused = state.rangeRefused { return .rangeRefused(total: refused) }
        if let failure = state.failure {
            switch failure {
            case .httpStatus(_, let status):
                return .failure(failure, transient: status >= 500 || status == 408 || status == 429)
            default:
                return .failure(failure, transient: false)
            }
        }
        switch code {
        case CURLE_OK:
            let status = state.status
            if state.notModified { return .success(status: status, notModified: true) }
            if let expected = options.expectedSize, have < expected {
                // The server's response was complete but shorter than the signed size.
                return .failure(.truncated(url: url, received: have, expected: expected), transient: false)
            }
            return .success(status: status, notModified: false)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .failure(
                .invalidURL(url: url, detail: ErrorDetail(code == CURLE_URL_MALFORMAT ? "malformed_url" : "unsupported_scheme")),
                transient: false)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .failure(
                .resolveFailed(url: url, detail: ErrorDetail(code == CURLE_COULDNT_RESOLVE_PROXY ? "proxy_not_found" : "host_not_found")),
                transient: true)
        case CURLE_COULDNT_CONNECT:
            return .failure(.connectFailed(url: url, detail: NetDetail.socket(easy.osErrno, otherwise: "connect_failed")), transient: true)
        case CURLE_OPERATION_TIMEDOUT:
            if request.deadlinePassed {
                return .failure(.deadline(url: url, seconds: Int(options.deadline?.components.seconds ?? 0)), transient: false)
            }
            if easy.connectPhaseDone(https: url.lowercased().hasPrefix("https:")) {
                return .failure(
                    .stalled(url: url, received: have, limit: options.lowSpeedLimit, seconds: stallSeconds(options)),
                    transient: true)
            }
            return .failure(
                .connectFailed(url: url, detail: ErrorDetail("connect_timeout", [String(options.connectTimeout.components.seconds)])),
                transient: true)
        case CURLE_PARTIAL_FILE:
            let expected = state.announcedTotal ?? options.expectedSize ?? have
            return .failure(.truncated(url: url, received: have, expected: expected), transient: true)
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            let detail: ErrorDetail =
                switch code {
                case CURLE_GOT_NOTHING: ErrorDetail("empty_reply")
                case CURLE_SEND_ERROR: NetDetail.socket(easy.osErrno, otherwise: "send_failed")
                case CURLE_RECV_ERROR: NetDetail.socket(easy.osErrno, otherwise: "receive_failed")
                default: ErrorDetail("http2_error", [message])
                }
            return .failure(.connectionLost(url: url, received: have, detail: detail), transient: true)
        case CURLE_PEER_FAILED_VERIFICATION:
            let bundle: String? =
                switch options.trust {
                case .system: nil
                case .pinned(let bundle): bundle
                }
            return .failure(
                .untrustedServer(url: url, caBundle: bundle, detail: NetDetail.certificate(easy.certificateVerifyResult)),
                transient: false)
        case CURLE_SSL_CONNECT_ERROR:
            return .failure(.tls(url: url, detail: ErrorDetail("handshake_failed", [message])), transient: true)
        case CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER:
            let detail: ErrorDetail =
                switch code {
                case CURLE_SSL_CACERT_BADFILE: ErrorDetail("ca_bundle_unusable")
                case CURLE_SSL_CIPHER: ErrorDetail("no_common_cipher")
                default: ErrorDetail("client_certificate_unusable")
                }
            return .failure(.tls(url: url, detail: detail), transient: false)
        case CURLE_TOO_MANY_REDIRECTS:
            return .failure(.tooManyRedirects(url: url, limit: options.maxRedirects), transient: false)
        case CURLE_ABORTED_BY_CALLBACK:
            return .failure(.cancelled(url: url, received: have), transient: false)
        case CURLE_BAD_DOWNLOAD_RESUME:
            return .rangeRefused(total: nil)
        case CURLE_RANGE_ERROR:
            return .failure(.badRange(url: url, detail: ErrorDetail("range_unsupported")), transient: false)
        case CURLE_FILE_COULDNT_READ_FILE:
            return .failure(.file(path: url, detail: ErrorDetail("source_unreadable")), transient: false)
        default:
            return .failure(.transfer(url: url, curlCode: Int(code.rawValue), detail: ErrorDetail("curl_said", [message])), transient: false)
        }
    }
}

/// libcurl's failures as `net.detail` codes: what the socket's errno or the certificate
/// check said, in words of the catalog rather than libcurl's English.
enum NetDetail {
    /// A socket failure by its errno: the common ones by name, another as its errno name
    /// (`otherwise` with the errno's symbol), `otherwise` alone when libcurl gave none.
    static func socket(_ number: Int32, otherwise: String) -> ErrorDetail {
        switch number {
        case 0: ErrorDetail(otherwise)
        case ECONNREFUSED: ErrorDetail("connection_refused")
        case ECONNRESET: ErrorDetail("connection_reset")
        case ENETUNREACH, EHOSTUNREACH: ErrorDetail("unreachable")
        case ETIMEDOUT: ErrorDetail("timed_out")
        default: ErrorDetail(otherwise + "_errno", [systemErrorName(number)])
        }
    }

    /// A refused server certificate by OpenSSL's verification result (X509_V_ERR_*): 0 means
    /// the chain verified and the host name did not match.
    static func certificate(_ result: Int) -> ErrorDetail {
        switch result {
        case 0, 62: ErrorDetail("host_mismatch")
        case 9: ErrorDetail("certificate_not_yet_valid")
        case 10: ErrorDetail("certificate_expired")
        case 18: ErrorDetail("self_signed")
        case 2, 19, 20, 21: ErrorDetail("issuer_unknown")
        default: ErrorDetail("certificate_rejected", [String(result)])
        }
    }
}

extension CurlEasy {
    /// Whether connecting (TCP, and TLS for https) had finished: a timeout after it is a stall.
    fileprivate func connectPhaseDone(https: Bool) -> Bool {
        var value: curl_off_t = 0
        _ = CCurl_getOffset(handle, https ? CURLINFO_APPCONNECT_TIME_T : CURLINFO_CONNECT_TIME_T, &value)
        return value > 0
    }
}

/// What the libcurl callbacks see and record during one request. Reached through the
/// callbacks' user-data pointer; lives on the transfer thread only.
final class TransferState {
    let request: AttemptRequest
    let file: PartialFile?
    unowned let easy: CurlEasy
    /// Bytes the partial file held when this request's body started.
    var offset: Int64
    /// Body bytes taken by this request.
    var received: Int64 = 0
    var body: [UInt8] = []
    /// The status of the response whose headers are being read (or were read last).
    var status = 0
    /// The last response's headers, names lower-cased.
    var headers: [String: String] = [:]
    /// The body's full size, from Content-Length / Content-Range (or file://'s size).
    var announcedTotal: Int64?
    var headersChecked = false
    var notModified = false
    /// Set by a callback that stopped the transfer.
    var failure: NetError?
    /// Set on a 416: the resource's size from `Content-Range: bytes */N`, when given.
    var rangeRefused: Int64??
    private var lastProgress: (Int64, Int64?) = (-1, nil)

    init(request: AttemptRequest, file: PartialFile?, offset: Int64, easy: CurlEasy) {
        self.request = request
        self.file = file
        self.offset = offset
        self.easy = easy
    }

    var url: String { request.url }

    /// One header line (status line, field, or the empty line ending the block).
    func header(_ raw: UnsafeRawBufferPointer) -> Bool {
        let line = String(decoding: raw, as: UTF8.self).trimmingWhitespace
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = [:]
            return true
        }
        if line.isEmpty { return endOfHeaders() }
        if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            headers[name] = String(line[line.index(after: colon)...]).trimmingWhitespace
        }
        return true
    }

    /// Decides, before any body byte, whether this response is wanted.
    private func endOfHeaders() -> Bool {
        if status < 200 { return true }  // 100 Continue and friends: the real one follows
        if (300..<400).contains(status), status != 304, headers["location"] != nil { return true }  // followed
        if status == 304, request.validators != nil {
            notModified = true
            return true
        }
        let resuming = file != nil && offset > 0
        if status == 416, resuming {
            rangeRefused = .some(headers["content-range"].flatMap(Self.completeLength))
            return false
        }
        guard (200..<300).contains(status) else {
            failure = .httpStatus(url: url, status: status)
            return false
        }
        headersChecked = true
        let length = headers["content-length"].flatMap { Int64($0) }
        if status == 206 {
            guard resuming, let range = headers["content-range"].flatMap(Self.contentRange) else {
                failure = .badRange(url: url, detail: ErrorDetail("no_content_range", [headers["content-range"] ?? ""]))
                return false
            }
            guard range.start == offset else {
                failure = .badRange(url: url, detail: ErrorDetail("wrong_range_start", [String(offset), String(range.start)]))
                return false
            }
            announcedTotal = range.total ?? length.map { offset + $0 }
        } else {
            if resuming, let file {
                // The server ignored the Range request and sends everything: start over.
                do throws(NetError) {
                    try file.restart()
                } catch {
                    failure = error
                    return false
                }
                offset = 0
            }
            announcedTotal = length
        }
        return checkAnnounced()
    }

    /// Refuses a body whose announced size is over the cap or the expected size.
    private func checkAnnounced() -> Bool {
        guard let total = announcedTotal else { return true }
        if let cap = request.sizeCap, total > cap {
            failure = .sizeCapExceeded(url: url, cap: cap, size: total, announced: true)
            return false
        }
        if let expected = request.options.expectedSize, total > expected {
            failure = .longerThanExpected(url: url, expected: expected, size: total, announced: true)
            return false
        }
        return true
    }

    /// One piece of the body.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !headersChecked {
            // file:// has no headers: libcurl knows the remaining size when data starts.
            headersChecked = true
            if status == 0 {
                announcedTotal = easy.contentLength.map { offset + $0 }
                guard checkAnnounced() else { return false }
            }
        }
        if status != 0, !(200..<300).contains(status) { return true }  // not a body we keep
        let total = offset + received + Int64(bytes.count)
        if let cap = request.sizeCap, total > cap {
            failure = .sizeCapExceeded(url: url, cap: cap, size: total, announced: false)
            return false
        }
        if let expected = request.options.expectedSize, total > expected {
            failure = .longerThanExpected(url: url, expected: expected, size: total, announced: false)
            return false
        }
        if let file {
            do throws(NetError) {
                try file.append(bytes)
            } catch {
                failure = error
                return false
            }
        } else {
            body.append(contentsOf: bytes)
        }
        received += Int64(bytes.count)
        return true
    }

    /// Progress and cancellation; false stops the transfer.
    func tick() -> Bool {
        if request.taskCancellation.isCancelled || request.options.cancellation?.isCancelled == true {
            failure = .cancelled(url: url, received: offset + received)
            return false
        }
        if let progress = request.progress {
            let now = (offset + received, announcedTotal)
            if now != lastProgress {
                lastProgress = now
                progress(now.0, now.1)
            }
        }
        return true
    }

    /// `bytes S-E/T` or `bytes S-E/*`.
    static func contentRange(_ value: String) -> (start: Int64, total: Int64?)? {
        guard value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), end >= start else { return nil }
        let total = halves[1] == "*" ? nil : Int64(halves[1])
        if halves[1] != "*", total == nil { return nil }
        return (start, total)
    }

    /// The N of `bytes */N` (a 416's Content-Range).
    static func completeLength(_ value: String) -> Int64? {
        guard value.hasPrefix("bytes */") else { return nil }
        return Int64(value.dropFirst(8))
    }
}

@available(*, unavailable) extension TransferState: Sendable {}

// The C callbacks: no captures, the state arrives as the user-data pointer.

private let writeCallback: curl_write_callback = { data, size, count, user in
    let length = size * count
    let state = Unmanaged<TransferState>.fromOpaque(user!).takeUnretainedValue()
    return state.write(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let headerCallback: curl_write_callback = { data, size, count, user in
    let length = size * count
    let state = Unmanaged<TransferState>.fromOpaque(user!).takeUnretainedValue()
    return state.header(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let xferInfoCallback: curl_xferinfo_callback = { user, _, _, _, _ in
    let state = Unmanaged<TransferState>.fromOpaque(user!).takeUnretainedValue()
    return state.tick() ? 0 : 1
}

extension StringProtocol {
    fileprivate var trimmingWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
