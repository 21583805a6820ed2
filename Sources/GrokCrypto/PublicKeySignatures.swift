import COpenSSL
import GrokBasics

// ECDSA P-256 and RSASSA-PSS-SHA256 (the TUF key types besides Ed25519), through OpenSSL's
// EVP interface. Public keys are values holding their DER SubjectPublicKeyInfo bytes; each
// verification loads them into a short-lived `EVP_PKEY`. Private keys own their `EVP_PKEY`
// and are not `Sendable`.

/// Which kind of key a PEM or DER text must hold.
enum PEMKeyKind {
    case ed25519
    case ecP256
    case rsa

    var name: String {
        switch self {
        case .ed25519: "Ed25519"
        case .ecP256: "ECDSA P-256"
        case .rsa: "RSA"
        }
    }

    /// The command that makes a good key of this kind (the same in every language).
    var howToMake: String {
        switch self {
        case .ed25519: "'openssl genpkey -algorithm ed25519'"
        case .ecP256: "'openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256'"
        case .rsa: "'openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072'"
        }
    }
}

/// The smallest RSA modulus accepted, in bits (NIST SP 800-131A: below 2048 is disallowed).
public let minimumRSAKeyBits = 2048

extension EVPKey {
    /// Parses PEM text (`read` is a `PEM_read_bio_*` function) and checks that the key is of
    /// `kind` and not weak. `what` is `public` or `private` (a code: `crypto.detail.key_part.<what>`).
    static func fromPEM(_ pem: [UInt8], kind: PEMKeyKind, what: String, _ read: (OpaquePointer?) -> OpaquePointer?) throws(CryptoError) -> EVPKey {
        guard pem.count < Int(Int32.max) else { throw .invalidKey(detail: ErrorDetail("pem_too_long", [what])) }
        let parsed: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
        ERR_clear_error()
        guard let parsed else {
            throw .invalidKey(detail: ErrorDetail("not_pem", [what, kind.name, kind.howToMake]))
        }
        let key = EVPKey(parsed)
        try key.check(kind: kind, what: what)
        return key
    }

    /// Parses DER SubjectPublicKeyInfo bytes and checks the key is of `kind`.
    static func fromSPKI(_ der: [UInt8], kind: PEMKeyKind) throws(CryptoError) -> EVPKey {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        ERR_clear_error()
        guard let parsed else { throw .invalidKey(detail: ErrorDetail("not_der", [kind.name])) }
        let key = EVPKey(parsed)
        try key.check(kind: kind, what: "public")
        return key
    }

    func check(kind: PEMKeyKind, what: String) throws(CryptoError) {
        switch kind {
        case .ed25519:
            guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_ED25519 else {
                throw .invalidKey(detail: ErrorDetail("not_ed25519", [what, kind.howToMake]))
            }
        case .ecP256:
            guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else {
                throw .invalidKey(detail: ErrorDetail("not_ec", [what, kind.howToMake]))
            }
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
                ERR_clear_error()
                throw .invalidKey(detail: ErrorDetail("no_curve", [what]))
            }
            let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard curve == "prime256v1" || curve == "P-256" else {
                throw .invalidKey(detail: ErrorDetail("wrong_curve", [what, curve]))
            }
            // A public point off the curve or at infinity is refused here.
            guard let context = EVP_PKEY_CTX_new(pointer, nil) else { throw .openssl(function: "EVP_PKEY_CTX_new") }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_public_check(context) == 1 else {
                ERR_clear_error()
                throw .invalidKey(detail: ErrorDetail("bad_point", [what]))
            }
        case .rsa:
            let base = EVP_PKEY_get_base_id(pointer)
            guard base == EVP_PKEY_RSA || base == EVP_PKEY_RSA_PSS else {
                throw .invalidKey(detail: ErrorDetail("not_rsa", [what, kind.howToMake]))
            }
            let bits = Int(EVP_PKEY_get_bits(pointer))
            guard bits >= minimumRSAKeyBits else {
                throw .invalidKey(detail: ErrorDetail("rsa_too_small", [what, String(bits), String(minimumRSAKeyBits)]))
            }
        }
    }

    /// The DER SubjectPublicKeyInfo of the public half.
    func spki() throws(CryptoError) -> [UInt8] {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { ERR_clear_error(); throw .openssl(function: "i2d_PUBKEY") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else { ERR_clear_error(); throw .openssl(function: "i2d_PUBKEY") }
        return der
    }

    /// PEM text of the public half (`-----BEGIN PUBLIC KEY-----`).
    func publicPEM() throws(CryptoError) -> String {
        try writePEM { PEM_write_bio_PUBKEY($0, pointer) }
    }

    /// PEM text of the private key (unencrypted PKCS#8).
    func privatePEM() throws(CryptoError) -> String {
        try writePEM { PEM_write_bio_PrivateKey($0, pointer, nil, nil, 0, nil, nil) }
    }

    private func writePEM(_ write: (OpaquePointer?) -> Int32) throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openssl(function: "BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { ERR_clear_error(); throw .openssl(function: "PEM_write_bio") }
        let pending = Int(BIO_ctrl_pending(bio))
        var text = [UInt8](repeating: 0, count: pending)
        let read = text.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        guard read == pending else { throw .openssl(function: "BIO_read") }
        return String(decoding: text, as: UTF8.self)
    }

    /// Generates a key with `configure` applied to the keygen context.
    static func generate(id: Int32, _ configure: (OpaquePointer) -> Int32) throws(CryptoError) -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_id(id, nil) else { throw .openssl(function: "EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        var pointer: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, configure(context) > 0, EVP_PKEY_keygen(context, &pointer) == 1, let pointer else {
            ERR_clear_error()
            throw .openssl(function: "EVP_PKEY_keygen")
        }
        return EVPKey(pointer)
    }

    /// Verifies `signature` over SHA-256 of `message`; `configure` sets padding on the
    /// verification context (RSA-PSS), or does nothing.
    func verifySHA256(_ signature: [UInt8], for message: [UInt8], _ configure: (OpaquePointer) -> Int32 = { _ in 1 }) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, EVP_sha256(), nil, pointer) == 1, let keyContext,
              configure(keyContext) > 0
        else {
            ERR_clear_error()
            return false
        }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }

    /// Signs SHA-256 of `message`; `configure` sets padding (RSA-PSS) or does nothing.
    func signSHA256(_ message: [UInt8], _ configure: (OpaquePointer) -> Int32 = { _ in 1 }) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .openssl(function: "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, EVP_sha256(), nil, pointer) == 1, let keyContext,
              configure(keyContext) > 0
        else {
            ERR_clear_error()
            throw .openssl(function: "EVP_DigestSignInit")
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer { msg in EVP_DigestSign(context, nil, &length, msg.baseAddress, msg.count) }
        guard sized == 1 else { ERR_clear_error(); throw .openssl(function: "EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = message.withUnsafeBufferPointer { msg in
            signature.withUnsafeMutableBufferPointer { sig in
                EVP_DigestSign(context, sig.baseAddress, &length, msg.baseAddress, msg.count)
            }
        }
        guard ok == 1 else { ERR_clear_error(); throw .openssl(function: "EVP_DigestSign") }
        return Array(signature.prefix(length))
    }
}

/// An ECDSA public key on NIST P-256 (TUF's `ecdsa-sha2-nistp256`): verifies DER-encoded
/// signatures over SHA-256 of the message.
public struct ECDSAP256PublicKey: Sendable, Hashable {
    /// The DER SubjectPublicKeyInfo bytes.
    public let derRepresentation: [UInt8]

    /// A key from PEM text (`-----BEGIN PUBLIC KEY-----`); refuses other curves and points
    /// not on P-256.
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.fromPEM(Array(pem.utf8), kind: .ecP256, what: "public") { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        derRepresentation = try key.spki()
    }

    /// A key from DER SubjectPublicKeyInfo bytes.
    public init(derRepresentation der: [UInt8]) throws(CryptoError) {
        _ = try EVPKey.fromSPKI(der, kind: .ecP256)
        derRepresentation = der
    }

    /// The key as PEM text.
    public func pem() throws(CryptoError) -> String {
        try EVPKey.fromSPKI(derRepresentation, kind: .ecP256).publicPEM()
    }

    /// Whether `signature` (DER `ECDSA-Sig-Value`) is valid for `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let key = try? EVPKey.fromSPKI(derRepresentation, kind: .ecP256) else { return false }
        return key.verifySHA256(signature, for: message)
    }
}

/// An ECDSA P-256 private key: signs SHA-256 of messages (DER signatures).
public final class ECDSAP256PrivateKey {
    private let key: EVPKey
    /// The matching public key.
    public let publicKey: ECDSAP256PublicKey

    private init(_ key: EVPKey) throws(CryptoError) {
        self.key = key
        publicKey = try ECDSAP256PublicKey(derRepresentation: key.spki())
    }

    /// A key from PEM text (`-----BEGIN PRIVATE KEY-----`, unencrypted PKCS#8).
    public convenience init(pem: String) throws(CryptoError) {
        try self.init(EVPKey.fromPEM(Array(pem.utf8), kind: .ecP256, what: "private") { PEM_read_bio_PrivateKey($0, nil, nil, nil) })
    }

    /// A new random key.
    public static func generate() throws(CryptoError) -> ECDSAP256PrivateKey {
        try ECDSAP256PrivateKey(EVPKey.generate(id: EVP_PKEY_EC) { EVP_PKEY_CTX_set_ec_paramgen_curve_nid($0, NID_X9_62_prime256v1) })
    }

    /// The key as PEM text (unencrypted PKCS#8).
    public func pem() throws(CryptoError) -> String { try key.privatePEM() }

    /// A DER signature of SHA-256 of `message` (randomized: two calls differ).
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] { try key.signSHA256(message) }
}

@available(*, unavailable)
extension ECDSAP256PrivateKey: Sendable {}

/// An RSA public key used with RSASSA-PSS, SHA-256 and MGF1-SHA-256 (TUF's
/// `rsassa-pss-sha256`). Keys under ``minimumRSAKeyBits`` are refused.
public struct RSAPSSPublicKey: Sendable, Hashable {
    /// The DER SubjectPublicKeyInfo bytes.
    public let derRepresentation: [UInt8]

    /// A key from PEM text (`-----BEGIN PUBLIC KEY-----`).
    public init(pem: String) throws(CryptoError) {
        let key = try EVPKey.fromPEM(Array(pem.utf8), kind: .rsa, what: "public") { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        derRepresentation = try key.spki()
    }

    /// A key from DER SubjectPublicKeyInfo bytes.
    public init(derRepresentation der: [UInt8]) throws(CryptoError) {
        _ = try EVPKey.fromSPKI(der, kind: .rsa)
        derRepresentation = der
    }

    /// The key as PEM text.
    public func pem() throws(CryptoError) -> String {
        try EVPKey.fromSPKI(derRepresentation, kind: .rsa).publicPEM()
    }

    /// Whether `signature` is a valid RSASSA-PSS (SHA-256, MGF1-SHA-256) signature of
    /// `message`. Any salt length is accepted, as securesystemslib's verifier does.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let key = try? EVPKey.fromSPKI(derRepresentation, kind: .rsa) else { return false }
        return key.verifySHA256(signature, for: message) { context in
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) > 0 else { return 0 }
            guard EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) > 0 else { return 0 }
            return EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_AUTO)
        }
    }
}

/// An RSA private key that signs with RSASSA-PSS-SHA256 (salt as long as the digest).
public final class RSAPSSPrivateKey {
    private let key: EVPKey
    /// The matching public key.
    public let publicKey: RSAPSSPublicKey

    private init(_ key: EVPKey) throws(CryptoError) {
        self.key = key
        publicKey = try RSAPSSPublicKey(derRepresentation: key.spki())
    }

    /// A key from PEM text (`-----BEGIN PRIVATE KEY-----`, unencrypted PKCS#8).
    public convenience init(pem: String) throws(CryptoError) {
        try self.init(EVPKey.fromPEM(Array(pem.utf8), kind: .rsa, what: "private") { PEM_read_bio_PrivateKey($0, nil, nil, nil) })
    }

    /// A new random key of `bits` bits (at least ``minimumRSAKeyBits``).
    public static func generate(bits: Int = 3072) throws(CryptoError) -> RSAPSSPrivateKey {
        guard bits >= minimumRSAKeyBits else {
            throw .invalidKey(detail: ErrorDetail("rsa_generate_too_small", [String(minimumRSAKeyBits), String(bits)]))
        }
        return try RSAPSSPrivateKey(EVPKey.generate(id: EVP_PKEY_RSA) { EVP_PKEY_CTX_set_rsa_keygen_bits($0, Int32(bits)) })
    }

    /// The key as PEM text (unencrypted PKCS#8).
    public func pem() throws(CryptoError) -> String { try key.privatePEM() }

    /// An RSASSA-PSS-SHA256 signature of `message`.
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try key.signSHA256(message) { context in
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) > 0 else { return 0 }
            guard EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) > 0 else { return 0 }
            return EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST)
        }
    }
}

@available(*, unavailable)
extension RSAPSSPrivateKey: Sendable {}

/// SHA-512 through OpenSSL (TUF lists sha256 and sha512 hashes for files).
public enum SHA512 {
    /// The 64-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha512(), nil) }
        precondition(ok == 1 && length == 64, "EVP_Digest(SHA-512) failed: libcrypto is out of memory")
        return digest
    }
}
