/// What went wrong in a hash, signature or compression call.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The OpenSSL call `function` failed (out of memory, or an unsupported algorithm in
    /// this libcrypto build).
    case openssl(function: String)
    /// zlib's `function` returned `status`: the library could not start (out of memory)
    /// or was used wrongly.
    case zlib(function: String, status: Int32)
    /// A compressed stream is damaged: the bytes do not decode as deflate data.
    case corruptStream(detail: String)
    /// Decompressing would produce more than `limit` bytes: the stream is not what the
    /// sender said it is.
    case outputLimitExceeded(limit: Int)
    /// A key could not be used: wrong length, not PEM, or not an Ed25519 key; `detail`
    /// says which and how to make a good one.
    case invalidKey(detail: String)

    /// A stable code for `--json` output and for the catalog key `error.<code>`.
    public var code: String {
        switch self {
        case .openssl: "crypto_openssl_failed"
        case .zlib: "crypto_zlib_failed"
        case .corruptStream: "crypto_corrupt_stream"
        case .outputLimitExceeded: "crypto_output_limit"
        case .invalidKey: "crypto_invalid_key"
        }
    }

    /// The values the localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .openssl(let function): [function]
        case .zlib(let function, let status): [function, String(status)]
        case .corruptStream(let detail): [detail]
        case .outputLimitExceeded(let limit): [String(limit)]
        case .invalidKey(let detail): [detail]
        }
    }

    public var description: String {
        switch self {
        case .openssl(let function):
            "OpenSSL call \(function) failed; check that libcrypto (libssl-dev) is OpenSSL 1.1.1 or newer"
        case .zlib(let function, let status):
            "zlib call \(function) failed with status \(status)"
        case .corruptStream(let detail):
            "the compressed data is damaged (\(detail)); fetch or send it again"
        case .outputLimitExceeded(let limit):
            "the compressed data expands past its stated size of \(limit) bytes; it is not the data it claims to be"
        case .invalidKey(let detail):
            "the key cannot be used: \(detail)"
        }
    }
}
