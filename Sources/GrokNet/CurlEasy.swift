internal import CCurl
import GrokBasics

/// One libcurl easy handle with its header list and error buffer, freed in `deinit`.
/// Every setopt/getinfo goes through ``check(_:_:)``, which turns a failing CURLcode into a
/// ``NetError`` naming the URL and the option.
///
/// Not thread-safe (libcurl's rule for easy handles): it lives on one transfer thread.
final class CurlEasy {
    /// libcurl's one-time global setup, done before the first handle (thread-safe via
    /// Swift's lazy static initialisation).
    private static let globalInit: CURLcode = CCurl_globalInit()

    let handle: UnsafeMutableRawPointer
    let url: String
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init(url: String) throws(NetError) {
        let initCode = Self.globalInit
        guard initCode == CURLE_OK, let made = curl_easy_init() else {
            throw .transfer(url: url, curlCode: Int(initCode.rawValue), detail: ErrorDetail("curl_init_failed"))
        }
        handle = made
        self.url = url
        let size = CCurl_errorBufferSize()
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
        try check("CURLOPT_ERRORBUFFER", CCurl_setPointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// The checking funnel: a CURLcode other than CURLE_OK becomes ``NetError/transfer(url:curlCode:detail:)``.
    func check(_ what: String, _ code: CURLcode) throws(NetError) {
        guard code != CURLE_OK else { return }
        throw .transfer(url: url, curlCode: Int(code.rawValue), detail: ErrorDetail("option_refused", [what]))
    }

    func set(_ option: CURLoption, _ value: Int, _ name: String) throws(NetError) {
        try check(name, CCurl_setLong(handle, option, value))
    }

    func set(_ option: CURLoption, _ value: String?, _ name: String) throws(NetError) {
        try check(name, CCurl_setString(handle, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?, _ name: String) throws(NetError) {
        try check(name, CCurl_setPointer(handle, option, pointer))
    }

    func setWriteFunction(_ option: CURLoption, _ function: curl_write_callback, _ name: String) throws(NetError) {
        try check(name, CCurl_setWriteFunction(handle, option, function))
    }

    func setXferInfoFunction(_ function: curl_xferinfo_callback) throws(NetError) {
        try check("CURLOPT_XFERINFOFUNCTION", CCurl_setXferInfoFunction(handle, function))
    }

    /// Sets the request's extra headers (`Name: value` lines); the list lives as long as the handle.
    func setHeaders(_ lines: [String]) throws(NetError) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw .transfer(url: url, curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue), detail: ErrorDetail("out_of_memory"))
            }
            list = appended
        }
        try check("CURLOPT_HTTPHEADER", CCurl_setList(handle, CURLOPT_HTTPHEADER, list))
        curl_slist_free_all(headerList)
        headerList = list
    }

    /// Runs the transfer; returns libcurl's result code and its most specific message.
    func perform() -> (code: CURLcode, message: String) {
        errorBuffer[0] = 0
        let code = curl_easy_perform(handle)
        let detail = String(cString: errorBuffer)
        return (code, detail.isEmpty ? Self.text(code) : detail)
    }

    /// The errno of the last failed socket call (connect, send, receive); 0 when none.
    var osErrno: Int32 {
        var value = 0
        _ = CCurl_getLong(handle, CURLINFO_OS_ERRNO, &value)
        return Int32(truncatingIfNeeded: value)
    }

    /// The result of verifying the server's certificate (OpenSSL's X509_V_* number; 0 when
    /// the chain verified, so a failure then is the host name's).
    var certificateVerifyResult: Int {
        var value = 0
        _ = CCurl_getLong(handle, CURLINFO_SSL_VERIFYRESULT, &value)
        return value
    }

    /// The HTTP status of the last response (0 for file:// or when none arrived).
    var responseCode: Int {
        var value = 0
        _ = CCurl_getLong(handle, CURLINFO_RESPONSE_CODE, &value)
        return value
    }

    /// The size libcurl announced for the body still to come (Content-Length, or the file's
    /// remaining size for file://); nil when unknown.
    var contentLength: Int64? {
        var value: curl_off_t = -1
        guard CCurl_getOffset(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &value) == CURLE_OK, value >= 0 else { return nil }
        return Int64(value)
    }

    static func text(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }
}

@available(*, unavailable) extension CurlEasy: Sendable {}
