import GrokBasics

/// What went wrong in a hash, signature or compression call.
public enum CryptoError: Error, Sendable, Equatable, CodedError {
    /// The OpenSSL call `function` failed (out of memory, or an unsupported algorithm in
    /// this libcrypto build).
    case openssl(function: String)
    /// zlib's `function` returned `status`: the library could not start (out of memory)
    /// or was used wrongly.
    case zlib(function: String, status: Int32)
    /// A compressed stream is damaged: the bytes do not decode as deflate data; `detail`
    /// is a code under `crypto.detail` (zlib's own words kept as its value).
    case corruptStream(detail: ErrorDetail)
    /// Decompressing would produce more than `limit` bytes: the stream is not what the
    /// sender said it is.
    case outputLimitExceeded(limit: Int)
    /// A key could not be used: wrong length, not PEM, or not an Ed25519 key; `detail`
    /// says which and how to make a good one, as a code under `crypto.detail`.
    case invalidKey(detail: ErrorDetail)

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
        case .corruptStream(let detail): detail.flattened
        case .outputLimitExceeded(let limit): [String(limit)]
        case .invalidKey(let detail): detail.flattened
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}
