import COpenSSL
import GrokBasics

/// Owns one OpenSSL `EVP_PKEY` and frees it when the last reference goes away. Never leaves
/// this module: the public key types below hold plain bytes or wrap this class privately.
final class EVPKey {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// The 32 raw public-key bytes.
    func rawPublicKey() throws(CryptoError) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(pointer, &raw, &length) == 1, length == 32 else {
            ERR_clear_error()
            throw .openssl(function: "EVP_PKEY_get_raw_public_key")
        }
        return raw
    }
}

@available(*, unavailable)
extension EVPKey: Sendable {}

/// An Ed25519 public key (RFC 8032): 32 bytes. Verifies signatures through OpenSSL.
///
/// A value type holding the raw bytes, so it is `Sendable` and hashable; each verification
/// loads the bytes into a short-lived OpenSSL key.
public struct Ed25519PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw public-key bytes.
    public let rawRepresentation: [UInt8]

    /// A key from its 32 raw bytes; throws for any other length or a point OpenSSL refuses.
    public init(rawRepresentation raw: [UInt8]) throws(CryptoError) {
        guard raw.count == 32 else {
            throw .invalidKey(detail: ErrorDetail("ed25519_public_length", [String(raw.count)]))
        }
        if let weakness = Self.weakness(raw) { throw .invalidKey(detail: weakness) }
        _ = try Self.load(raw)
        rawRepresentation = raw
    }

    /// Why the 32 bytes are not a safe public key, or `nil`: a non-canonical encoding
    /// (y ≥ 2^255 - 19, or x = 0 with the sign bit set) or one of the eight points of small
    /// order (the identity, order 2, 4 and 8). With a small-order key an attacker makes a
    /// "signature" that verifies for any message (R = the key's point, s = 0 and similar),
    /// so such keys are refused when loaded, before any signature is checked.
    public static func weakness(_ raw: [UInt8]) -> ErrorDetail? {
        guard raw.count == 32 else { return ErrorDetail("ed25519_public_length", [String(raw.count)]) }
        var y = raw
        y[31] &= 0x7F
        let signBit = raw[31] & 0x80 != 0
        // y >= p: the bytes are y little-endian; p = 2^255 - 19 is ed ff .. ff 7f.
        if y[31] == 0x7F, y[1...30].allSatisfy({ $0 == 0xFF }), y[0] >= 0xED {
            return ErrorDetail("ed25519_noncanonical_y")
        }
        let one: [UInt8] = [1] + [UInt8](repeating: 0, count: 31)
        let minusOne: [UInt8] = [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F]
        let zero = [UInt8](repeating: 0, count: 32)
        let order8a = Hex.decode("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")!
        let order8b = Hex.decode("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")!
        if signBit, y == one || y == minusOne {
            return ErrorDetail("ed25519_noncanonical_x")
        }
        if y == one || y == minusOne || y == zero || y == order8a || y == order8b {
            return ErrorDetail("ed25519_small_order", ["openssl genpkey -algorithm ed25519"])
        }
        return nil
    }

    /// A key from PEM text (`-----BEGIN PUBLIC KEY-----`, as `openssl pkey -pubout` writes).
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.fromPEM(Array(pem.utf8), kind: .ed25519, what: "public") { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        let raw = try key.rawPublicKey()
        if let weakness = Self.weakness(raw) { throw .invalidKey(detail: weakness) }
        rawRepresentation = raw
    }

    /// The key id: 64 lower-case hex digits of the SHA-256 of the 32 raw bytes.
    public var keyID: String { SHA256.hash(rawRepresentation).hex }

    /// The key as PEM text (`-----BEGIN PUBLIC KEY-----`), as `openssl pkey -pubout` writes it.
    public func pem() throws(CryptoError) -> String {
        let key = try Self.load(rawRepresentation)
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openssl(function: "BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key.pointer) == 1 else {
            ERR_clear_error()
            throw .openssl(function: "PEM_write_bio_PUBKEY")
        }
        let pending = Int(BIO_ctrl_pending(bio))
        var text = [UInt8](repeating: 0, count: pending)
        let read = text.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        guard read == pending else { throw .openssl(function: "BIO_read") }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by this key. A signature
    /// of the wrong length is simply not valid.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64, let key = try? Self.load(rawRepresentation) else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, msg.baseAddress ?? UnsafePointer(sig.baseAddress!), msg.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }

    public var description: String { "Ed25519 public key \(keyID)" }

    private static func load(_ raw: [UInt8]) throws(CryptoError) -> EVPKey {
        guard let pointer = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw, raw.count) else {
            ERR_clear_error()
            throw .invalidKey(detail: ErrorDetail("openssl_refused_public"))
        }
        return EVPKey(pointer)
    }
}

/// An Ed25519 private key: signs messages through OpenSSL. Owns its OpenSSL key (freed in
/// `deinit`); not `Sendable`, so a secret never crosses tasks by accident.
public final class Ed25519PrivateKey {
    private let key: EVPKey
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    private init(_ key: EVPKey) throws(CryptoError) {
        self.key = key
        publicKey = try Ed25519PublicKey(rawRepresentation: key.rawPublicKey())
    }

    /// A key from its 32-byte seed (RFC 8032's private key).
    public convenience init(rawRepresentation seed: [UInt8]) throws(CryptoError) {
        guard seed.count == 32 else {
            throw .invalidKey(detail: ErrorDetail("ed25519_private_length", [String(seed.count)]))
        }
        guard let pointer = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count) else {
            ERR_clear_error()
            throw .invalidKey(detail: ErrorDetail("openssl_refused_private"))
        }
        try self.init(EVPKey(pointer))
    }

    /// A key from PEM text (`-----BEGIN PRIVATE KEY-----`, unencrypted PKCS#8, as
    /// `openssl genpkey -algorithm ed25519` writes it).
    public convenience init(pem: String) throws(CryptoError) {
        try self.init(EVPKey.fromPEM(Array(pem.utf8), kind: .ed25519, what: "private") { PEM_read_bio_PrivateKey($0, nil, nil, nil) })
    }

    /// A new random key from OpenSSL's random generator.
    public static func generate() throws(CryptoError) -> Ed25519PrivateKey {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else { throw .openssl(function: "EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        var pointer: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &pointer) == 1, let pointer else {
            ERR_clear_error()
            throw .openssl(function: "EVP_PKEY_keygen")
        }
        return try Ed25519PrivateKey(EVPKey(pointer))
    }

    /// The 32-byte seed.
    public var rawRepresentation: [UInt8] {
        get throws(CryptoError) {
            var raw = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_get_raw_private_key(key.pointer, &raw, &length) == 1, length == 32 else {
                ERR_clear_error()
                throw .openssl(function: "EVP_PKEY_get_raw_private_key")
            }
            return raw
        }
    }

    /// The 64-byte Ed25519 signature of `message` (deterministic: the same message and key
    /// always give the same signature).
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .openssl(function: "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, key.pointer) == 1 else {
            ERR_clear_error()
            throw .openssl(function: "EVP_DigestSignInit")
        }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let ok = message.withUnsafeBufferPointer { msg in
            signature.withUnsafeMutableBufferPointer { sig in
                EVP_DigestSign(context, sig.baseAddress, &length, msg.baseAddress ?? UnsafePointer(sig.baseAddress!), msg.count)
            }
        }
        guard ok == 1, length == 64 else {
            ERR_clear_error()
            throw .openssl(function: "EVP_DigestSign")
        }
        return signature
    }
}

@available(*, unavailable)
extension Ed25519PrivateKey: Sendable {}
