import Foundation
import GrokCrypto
import GrokTestSupport
import Testing

/// Runs the openssl command line tool (installed by scripts/setup.sh --test) and returns stdout.
private func openssl(_ arguments: [String], input: String? = nil) throws -> String {
    try OpenSSLTool.run(arguments, input: input)
}

@Suite("ECDSA P-256, RSASSA-PSS and weak Ed25519 keys")
struct PublicKeySignatureTests {
    @Test("ECDSA P-256 signs and verifies, survives PEM, and refuses another message or a flipped bit")
    func ecdsa() throws {
        let key = try ECDSAP256PrivateKey.generate()
        let message = Array("signed metadata".utf8)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        let reloaded = try ECDSAP256PublicKey(pem: try key.publicKey.pem())
        #expect(reloaded == key.publicKey)
        #expect(reloaded.isValidSignature(signature, for: message))
        #expect(!reloaded.isValidSignature(signature, for: message + [0]))
        var flipped = signature
        flipped[flipped.count - 1] ^= 1
        #expect(!reloaded.isValidSignature(flipped, for: message))
        let again = try ECDSAP256PrivateKey(pem: try key.pem())
        #expect(again.publicKey == key.publicKey)
    }

    @Test("RSASSA-PSS-SHA256 signs and verifies, and refuses another message")
    func rsa() throws {
        let key = try RSAPSSPrivateKey.generate(bits: 2048)
        let message = Array("signed metadata".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == 256)
        let reloaded = try RSAPSSPublicKey(pem: try key.publicKey.pem())
        #expect(reloaded.isValidSignature(signature, for: message))
        #expect(!reloaded.isValidSignature(signature, for: Array("other".utf8)))
    }

    @Test("Signatures made by the openssl tool verify (PSS with the digest-length salt; ECDSA DER)")
    func opensslInterop() throws {
        let scratch = TemporaryDirectory("pss")
        let dir = scratch.path
        let message = "interop message"
        try Data(message.utf8).write(to: URL(fileURLWithPath: dir + "/msg"))
        for (algorithm, options, signOptions) in [
            ("RSA", ["-pkeyopt", "rsa_keygen_bits:2048"], ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"]),
            ("EC", ["-pkeyopt", "ec_paramgen_curve:P-256"], []),
        ] {
            _ = try openssl(["genpkey", "-algorithm", algorithm] + options + ["-out", dir + "/key.pem"])
            _ = try openssl(["dgst", "-sha256", "-sign", dir + "/key.pem"] + signOptions + ["-out", dir + "/sig", dir + "/msg"])
            let pem = try openssl(["pkey", "-in", dir + "/key.pem", "-pubout"])
            let signature = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/sig")))
            let valid = algorithm == "RSA"
                ? try RSAPSSPublicKey(pem: pem).isValidSignature(signature, for: Array(message.utf8))
                : try ECDSAP256PublicKey(pem: pem).isValidSignature(signature, for: Array(message.utf8))
            #expect(valid, "\(algorithm)")
        }
    }

    @Test("An RSA key under 2048 bits, an EC key on another curve and an Ed25519 PEM are refused")
    func weakOrWrongKeys() throws {
        let rsa1024 = try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
        let rsa1024Public = try openssl(["pkey", "-pubout"], input: rsa1024)
        #expect(throws: CryptoError.self) { try RSAPSSPublicKey(pem: rsa1024Public) }
        let p384 = try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
        #expect(throws: CryptoError.self) { try ECDSAP256PublicKey(pem: try openssl(["pkey", "-pubout"], input: p384)) }
        let ed = try Ed25519PrivateKey.generate().publicKey.pem()
        #expect(throws: CryptoError.self) { try ECDSAP256PublicKey(pem: ed) }
        #expect(throws: CryptoError.self) { try RSAPSSPublicKey(pem: ed) }
        #expect(throws: CryptoError.self) { try RSAPSSPrivateKey.generate(bits: 1024) }
    }

    /// The eight small-order points of edwards25519 (with both signs where x ≠ 0) and
    /// non-canonical encodings (y ≥ p, or x = 0 with the sign bit).
    static let weakKeys = [
        "0100000000000000000000000000000000000000000000000000000000000000",  // identity
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // order 2
        "0000000000000000000000000000000000000000000000000000000000000000",  // order 4
        "0000000000000000000000000000000000000000000000000000000000000080",  // order 4
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  // order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "0100000000000000000000000000000000000000000000000000000000000080",  // identity, sign bit
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // y = p
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // y = p + 1
    ]

    @Test("Small-order and non-canonical Ed25519 public keys are refused when loaded", arguments: weakKeys)
    func smallOrderEd25519(hex: String) {
        #expect(throws: CryptoError.self) { try Ed25519PublicKey(rawRepresentation: Hex.decode(hex)!) }
        #expect(Ed25519PublicKey.weakness(Hex.decode(hex)!) != nil)
    }

    @Test("The forgery a small-order key allows: OpenSSL alone accepts R = identity, s = 0 for any message")
    func forgeryIsWhyWeRefuse() throws {
        // With the identity as public key, the signature (R = identity, s = 0) satisfies
        // [s]B = R + [k]A for every message, and OpenSSL's verifier says so.
        let identity = Hex.decode(Self.weakKeys[0])!
        let scratch = TemporaryDirectory("forgery")
        let dir = scratch.path
        let spki = Hex.decode("302a300506032b6570032100")! + identity
        let pem = "-----BEGIN PUBLIC KEY-----\n" + Data(spki).base64EncodedString() + "\n-----END PUBLIC KEY-----\n"
        try Data(pem.utf8).write(to: URL(fileURLWithPath: dir + "/identity.pem"))
        try Data(identity + [UInt8](repeating: 0, count: 32)).write(to: URL(fileURLWithPath: dir + "/forged.sig"))
        try Data("channel version 18446744073709551615".utf8).write(to: URL(fileURLWithPath: dir + "/message"))
        let verdict = try openssl(["pkeyutl", "-verify", "-pubin", "-inkey", dir + "/identity.pem", "-rawin",
                                   "-in", dir + "/message", "-sigfile", dir + "/forged.sig"])
        #expect(verdict.contains("Signature Verified Successfully"))
        // Refusing the key is what stops it, from raw bytes and from PEM alike.
        #expect(throws: CryptoError.self) { try Ed25519PublicKey(rawRepresentation: identity) }
        #expect(throws: CryptoError.self) { try Ed25519PublicKey(pem: pem) }
        let genuine = try Ed25519PrivateKey.generate().publicKey
        #expect(Ed25519PublicKey.weakness(genuine.rawRepresentation) == nil)
    }
}
