import COpenSSL

/// A SHA-256 digest: 32 bytes, shown and encoded as 64 lower-case hex digits.
public struct SHA256Digest: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The digest's 32 bytes.
    public let bytes: [UInt8]

    /// A digest from its 32 bytes; `nil` for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// A digest from 64 hex digits (either case); `nil` for anything else.
    public init?(hex: String) {
        guard hex.utf8.count == 64, let bytes = Hex.decode(hex) else { return nil }
        self.bytes = bytes
    }

    /// 64 lower-case hex digits.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = SHA256Digest(hex: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a SHA-256 digest (64 hex digits)")
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

/// SHA-256 through OpenSSL's libcrypto, in one call or fed piece by piece.
///
/// A hasher owns an `EVP_MD_CTX` and is not thread-safe: use one per task.
public final class SHA256 {
    private let context: OpaquePointer

    /// A hasher with nothing fed yet.
    public init() throws(CryptoError) {
        guard let context = EVP_MD_CTX_new() else { throw .openssl(function: "EVP_MD_CTX_new") }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw .openssl(function: "EVP_DigestInit_ex")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        // EVP_DigestUpdate fails only on a context that was never initialised.
        let ok = EVP_DigestUpdate(context, base, bytes.count)
        precondition(ok == 1, "EVP_DigestUpdate failed on an initialised SHA-256 context")
    }

    /// Feeds `bytes`.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds `bytes`.
    public func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything fed; the hasher starts over afterwards.
    public func finalize() -> SHA256Digest {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_DigestFinal_ex(context, &digest, &length)
        precondition(ok == 1 && length == 32, "EVP_DigestFinal_ex failed on an initialised SHA-256 context")
        let restarted = EVP_DigestInit_ex(context, EVP_sha256(), nil)
        precondition(restarted == 1, "EVP_DigestInit_ex failed to restart a SHA-256 context")
        return SHA256Digest(bytes: digest)!
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> SHA256Digest {
        hash(bytes[...])
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: ArraySlice<UInt8>) -> SHA256Digest {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed: libcrypto is out of memory")
        return SHA256Digest(bytes: digest)!
    }
}

@available(*, unavailable)
extension SHA256: Sendable {}

/// Hex text for bytes, and back.
public enum Hex {
    /// Hex digits, two per byte, lower-case unless `uppercase`.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of an even number of hex digits (either case); `nil` for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The value of one hex digit (either case), or `nil`.
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
