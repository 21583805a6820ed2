import Foundation
import GrokCrypto
import GrokTestSupport
import Testing

/// Runs `openssl` with `arguments`; returns its standard output, failing the test on a
/// non-zero exit.
private func openssl(_ arguments: [String]) throws -> String { try OpenSSLTool.run(arguments) }

@Suite("Ed25519 through OpenSSL")
struct Ed25519Tests {
    @Test("RFC 8032 test vectors 1 and 2: public key from the seed, and the exact signature")
    func rfc8032Vectors() throws {
        let vectors: [(seed: String, publicKey: String, message: String, signature: String)] = [
            ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
             "",
             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
            ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
             "72",
             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
                + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ]
        for vector in vectors {
            let key = try Ed25519PrivateKey(rawRepresentation: Hex.decode(vector.seed)!)
            #expect(Hex.encode(key.publicKey.rawRepresentation) == vector.publicKey)
            #expect(try key.rawRepresentation == Hex.decode(vector.seed)!)
            let message = Hex.decode(vector.message)!
            let signature = try key.signature(for: message)
            #expect(Hex.encode(signature) == vector.signature)
            let publicKey = try Ed25519PublicKey(rawRepresentation: Hex.decode(vector.publicKey)!)
            #expect(publicKey.isValidSignature(signature, for: message))
            #expect(!publicKey.isValidSignature(signature, for: message + [0]))
            var bent = signature
            bent[10] ^= 0x01
            #expect(!publicKey.isValidSignature(bent, for: message))
            #expect(!publicKey.isValidSignature(Array(signature.dropLast()), for: message))
            #expect(publicKey.keyID == SHA256.hash(Hex.decode(vector.publicKey)!).hex)
        }
    }

    @Test("Keys made by openssl genpkey load from PEM; signatures cross between openssl pkeyutl and us")
    func interoperatesWithOpenSSL() throws {
        let scratch = TemporaryDirectory("ed25519")
        let dir = scratch.url
        let privatePath = dir.appendingPathComponent("key.pem").path
        let publicPath = dir.appendingPathComponent("key.pub.pem").path
        _ = try openssl(["genpkey", "-algorithm", "ed25519", "-out", privatePath])
        _ = try openssl(["pkey", "-in", privatePath, "-pubout", "-out", publicPath])
        let privateKey = try Ed25519PrivateKey(pem: String(contentsOfFile: privatePath, encoding: .utf8))
        let publicKey = try Ed25519PublicKey(pem: String(contentsOfFile: publicPath, encoding: .utf8))
        #expect(privateKey.publicKey == publicKey)
        #expect(try publicKey.pem() == String(contentsOfFile: publicPath, encoding: .utf8))

        let message = Array("channel metadata bytes, signed as they are\n".utf8)
        let messagePath = dir.appendingPathComponent("message").path
        try Data(message).write(to: URL(fileURLWithPath: messagePath))

        // openssl signs, we verify.
        let theirsPath = dir.appendingPathComponent("theirs.sig").path
        _ = try openssl(["pkeyutl", "-sign", "-rawin", "-inkey", privatePath, "-in", messagePath, "-out", theirsPath])
        let theirs = try [UInt8](Data(contentsOf: URL(fileURLWithPath: theirsPath)))
        #expect(publicKey.isValidSignature(theirs, for: message))
        #expect(!publicKey.isValidSignature(theirs, for: Array(message.dropLast())))

        // We sign, openssl verifies (and Ed25519 is deterministic: the same bytes).
        let ours = try privateKey.signature(for: message)
        #expect(ours == theirs)
        let oursPath = dir.appendingPathComponent("ours.sig").path
        try Data(ours).write(to: URL(fileURLWithPath: oursPath))
        let verdict = try openssl(["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", publicPath,
                                   "-in", messagePath, "-sigfile", oursPath])
        #expect(verdict.contains("Signature Verified Successfully"))
    }

    @Test("Wrong lengths, non-PEM text and non-Ed25519 PEM keys are refused")
    func refusals() throws {
        #expect(throws: CryptoError.self) { try Ed25519PublicKey(rawRepresentation: [1, 2, 3]) }
        #expect(throws: CryptoError.self) { try Ed25519PrivateKey(rawRepresentation: []) }
        #expect(throws: CryptoError.self) { try Ed25519PublicKey(pem: "hello") }
        #expect(throws: CryptoError.self) { try Ed25519PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        let ecKey = try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        #expect(throws: CryptoError.self) { try Ed25519PrivateKey(pem: ecKey) }
        // A generated key signs and verifies.
        let generated = try Ed25519PrivateKey.generate()
        let signature = try generated.signature(for: [1, 2, 3])
        #expect(generated.publicKey.isValidSignature(signature, for: [1, 2, 3]))
        #expect(try Ed25519PrivateKey.generate().publicKey != generated.publicKey)
    }
}
