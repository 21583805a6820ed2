import GrokNet
import GrokBasics

/// ``TUFFetching`` on GrokNet's libcurl fetcher: https (and http, file) with the transfer's
/// size cap set to the limit the workflow gives. 404 and 403 mean "not there"; a file://
/// URL whose file is missing too.
public struct CurlTUFFetcher: TUFFetching {
    private let fetcher: any HTTPFetching
    private let options: TransferOptions
    private let allowInsecureHTTP: Bool

    /// - Parameters:
    ///   - fetcher: the transport (by default ``CurlFetcher``).
    ///   - options: trust, timeouts, retries, the overall deadline; the size cap is set per request.
    ///   - allowInsecureHTTP: whether plain `http://` URLs are fetched. TUF's signatures,
    ///     hashes, versions and expiries make an http mirror safe against tampering and
    ///     replay (an eavesdropper still sees what is fetched), but it must be asked for:
    ///     without it an `http://` URL is ``TUFError/insecureTransport(url:)``.
    public init(fetcher: any HTTPFetching = CurlFetcher(), options: TransferOptions = TransferOptions(), allowInsecureHTTP: Bool = false) {
        self.fetcher = fetcher
        self.options = options
        self.allowInsecureHTTP = allowInsecureHTTP
    }

    public func fetch(_ url: String, maxLength: Int) async throws(TUFError) -> FetchOutcome {
        if !allowInsecureHTTP, url.lowercased().hasPrefix("http:") { throw .insecureTransport(url: url) }
        var options = self.options
        options.sizeCap = Int64(maxLength)
        do {
            switch try await fetcher.fetch(url, ifChanged: nil, options: options) {
            case .fetched(let document): return .bytes(document.body)
            case .notModified: throw TUFError.fetch(url: url, detail: ErrorDetail("not_modified"))
            }
        } catch let error as NetError {
            switch error {
            case .httpStatus(_, let status) where status == 404 || status == 403: return .notFound
            case .file: return .notFound
            case .sizeCapExceeded, .longerThanExpected: throw .tooLarge(url: url, limit: maxLength)
            default: throw .fetch(url: url, detail: .nesting("transport", [], error))
            }
        } catch let error as TUFError {
            throw error
        } catch {
            throw .fetch(url: url, detail: ErrorDetail("unexpected", [String(describing: type(of: error))]))
        }
    }
}
