import GrokCrypto
import GrokBasics

/// A private key that signs TUF metadata, with its public key as metadata lists it. The
/// start of the publisher side (the repository tools build on it); not `Sendable`, so a
/// secret stays in the task that loaded it.
public final class TUFSigningKey {
    private enum Secret {
        case ed25519(Ed25519PrivateKey)
        case ecdsa(ECDSAP256PrivateKey)
        case rsa(RSAPSSPrivateKey)
    }

    private let secret: Secret
    /// The public key object (`keytype`, `scheme`, `keyval`), as root or delegations list it.
    public let publicKeyJSON: JSONObject
    /// The key id: hex SHA-256 of the canonical JSON of ``publicKeyJSON``.
    public let keyID: String

    private init(_ secret: Secret) throws(TUFError) {
        self.secret = secret
        let (keyType, scheme, value): (String, String, String)
        do {
            switch secret {
            case .ed25519(let key): (keyType, scheme, value) = ("ed25519", "ed25519", key.publicKey.rawRepresentation.hexString)
            case .ecdsa(let key): (keyType, scheme, value) = ("ecdsa", "ecdsa-sha2-nistp256", try key.publicKey.pem())
            case .rsa(let key): (keyType, scheme, value) = ("rsa", "rsassa-pss-sha256", try key.publicKey.pem())
            }
        } catch {
            throw .publisher(detail: .nesting("public_key_unwritable", [], error))
        }
        publicKeyJSON = JSONObject([
            ("keytype", .string(keyType)), ("scheme", .string(scheme)),
            ("keyval", .object(JSONObject([("public", .string(value))])!)),
        ])!
        keyID = SHA256.hash(try CanonicalJSON.encode(.object(publicKeyJSON), role: "root")).hex
    }

    /// A new Ed25519 key.
    public static func ed25519() throws(TUFError) -> TUFSigningKey {
        do { return try TUFSigningKey(.ed25519(.generate())) } catch let error as CryptoError {
            throw .publisher(detail: .nesting("key_generation", [], error))
        } catch let error as TUFError { throw error } catch { throw .publisher(detail: ErrorDetail("unexpected", [String(describing: type(of: error))])) }
    }

    /// A new ECDSA P-256 key.
    public static func ecdsaP256() throws(TUFError) -> TUFSigningKey {
        do { return try TUFSigningKey(.ecdsa(.generate())) } catch let error as CryptoError {
            throw .publisher(detail: .nesting("key_generation", [], error))
        } catch let error as TUFError { throw error } catch { throw .publisher(detail: ErrorDetail("unexpected", [String(describing: type(of: error))])) }
    }

    /// A new RSA key for RSASSA-PSS-SHA256.
    public static func rsaPSS(bits: Int = 3072) throws(TUFError) -> TUFSigningKey {
        do { return try TUFSigningKey(.rsa(.generate(bits: bits))) } catch let error as CryptoError {
            throw .publisher(detail: .nesting("key_generation", [], error))
        } catch let error as TUFError { throw error } catch { throw .publisher(detail: ErrorDetail("unexpected", [String(describing: type(of: error))])) }
    }

    /// A private key from PEM text as `openssl genpkey` writes it (unencrypted PKCS#8):
    /// `-algorithm ed25519`, `-algorithm EC -pkeyopt ec_paramgen_curve:P-256`, or
    /// `-algorithm RSA -pkeyopt rsa_keygen_bits:3072`. The type is found from the key itself.
    public static func load(pem: String) throws(TUFError) -> TUFSigningKey {
        guard pem.contains("PRIVATE KEY-----") else {
            throw .publisher(detail: ErrorDetail("not_pem_private_key", ["openssl genpkey -algorithm ed25519 -out key.pem"]))
        }
        if let key = try? ECDSAP256PrivateKey(pem: pem) { return try TUFSigningKey(.ecdsa(key)) }
        if let key = try? RSAPSSPrivateKey(pem: pem) { return try TUFSigningKey(.rsa(key)) }
        do { return try TUFSigningKey(.ed25519(Ed25519PrivateKey(pem: pem))) } catch let error as CryptoError {
            throw .publisher(detail: .nesting("unsupported_private_key", [String(minimumRSAKeyBits)], error))
        } catch let error as TUFError { throw error } catch { throw .publisher(detail: ErrorDetail("unexpected", [String(describing: type(of: error))])) }
    }

    /// The public key object (as root lists it) of a PEM public key (`openssl pkey -pubout`)
    /// or of a PEM private key, and its key id. Weak keys (small-order Ed25519, short RSA,
    /// EC off P-256) are refused.
    public static func publicKey(pem: String) throws(TUFError) -> (json: JSONObject, keyID: String) {
        if pem.contains("PRIVATE KEY-----") {
            let key = try load(pem: pem)
            return (key.publicKeyJSON, key.keyID)
        }
        let (keyType, scheme, value): (String, String, String)
        if let key = try? ECDSAP256PublicKey(pem: pem), let text = try? key.pem() {
            (keyType, scheme, value) = ("ecdsa", "ecdsa-sha2-nistp256", text)
        } else if let key = try? RSAPSSPublicKey(pem: pem), let text = try? key.pem() {
            (keyType, scheme, value) = ("rsa", "rsassa-pss-sha256", text)
        } else {
            do {
                let key = try Ed25519PublicKey(pem: pem)
                (keyType, scheme, value) = ("ed25519", "ed25519", key.rawRepresentation.hexString)
            } catch {
                throw .publisher(detail: .nesting("unsupported_public_key", [String(minimumRSAKeyBits)], error))
            }
        }
        let json = JSONObject([
            ("keytype", .string(keyType)), ("scheme", .string(scheme)),
            ("keyval", .object(JSONObject([("public", .string(value))])!)),
        ])!
        // Parsing it as metadata would: the same weak-key checks as a client makes.
        _ = try TUFKey(json: json, role: "root")
        return (json, SHA256.hash(try CanonicalJSON.encode(.object(json), role: "root")).hex)
    }

    /// The signature of `message` (the canonical JSON of a `signed` object); a failure names
    /// `role`, the role whose metadata it signs.
    public func sign(_ message: [UInt8], role: String) throws(TUFError) -> [UInt8] {
        do {
            switch secret {
            case .ed25519(let key): return try key.signature(for: message)
            case .ecdsa(let key): return try key.signature(for: message)
            case .rsa(let key): return try key.signature(for: message)
            }
        } catch {
            throw .metadata(role: role, detail: .nesting("signing_failed", [], error))
        }
    }
}

@available(*, unavailable)
extension TUFSigningKey: Sendable {}

/// Makes a metadata file: `signed` and the signatures of `keys` over its canonical JSON,
/// written as indented JSON with sorted keys.
public func signMetadata(_ signed: JSONObject, with keys: [TUFSigningKey]) throws(TUFError) -> [UInt8] {
    let role = signed["_type"]?.string ?? "signed"
    let message = try CanonicalJSON.encode(.object(signed), role: role)
    var signatures: [JSON] = []
    for key in keys {
        let signature = try key.sign(message, role: role)
        signatures.append(.object(JSONObject([("keyid", .string(key.keyID)), ("sig", .string(signature.hexString))])!))
    }
    let top = JSONObject([("signatures", .array(signatures)), ("signed", .object(signed))])!
    return JSONWriter.encode(.object(top), indent: 1)
}

extension [UInt8] {
    var hexString: String { GrokCrypto.Hex.encode(self) }
}
