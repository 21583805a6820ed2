import Foundation
import GrokTestSupport
import GrokBasics
import GrokCrypto
import GrokTUF
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// Real TUF and signature failures (a bad metadata document, a target of the wrong length, a
/// symbolic link in the trusted store, a file that is no key) shown in es, fr and de: the
/// detail of each is a code with its own entry, so no English sentence is left inside the
/// translated message.
/// Each of `failures` shown in `language`: no English words, and not its raw detail code.
func expectNoEnglish(in failures: [(error: any CodedError, code: String, english: String)], _ language: Language,
                     sourceLocation: SourceLocation = #_sourceLocation) {
    let localizer = Localizer(language: language)
    for (error, code, _) in failures {
        let message = localizer.message(for: error)
        #expect(CLI.LanguageAcceptanceTests.englishWordsIn(message).isEmpty, "\(language): \(message)", sourceLocation: sourceLocation)
        #expect(!message.contains(code), "\(language): \(message)", sourceLocation: sourceLocation)
    }
}

@Suite("TUF and signature errors carry their details as codes, so es, fr and de messages hold no English")
struct TUFDetailLanguageTests {
    /// A fresh directory under the system's temporary one.
    static func temporaryDirectory() throws -> String {
        TemporaryDirectory.untilExit("tuf-detail")
    }

    /// What `body` throws, as a TUF error.
    static func failure(_ body: () throws -> Void) -> TUFError? {
        do { try body(); return nil } catch { return error as? TUFError }
    }

    /// The real failures, each with the detail code it must carry and an English phrase its
    /// English message must still hold.
    static func failures() throws -> [(error: TUFError, code: String, english: String)] {
        var found: [(TUFError, String, String)] = []
        // A metadata document with a key twice.
        if let error = failure({ _ = try JSONParser.parse(Array(#"{"signed": {}, "signed": {}}"#.utf8)) }) {
            found.append((error, "duplicate_key", "occurs twice"))
        }
        // Metadata without its "signed" part.
        if let error = failure({ _ = try RootMetadata(Array(#"{"signatures": []}"#.utf8)) }) {
            found.append((error, "missing_field", "is missing"))
        }
        // A target whose bytes are longer than its metadata says.
        let entry = try #require(try JSONParser.parse(Array(#"{"length": 3, "hashes": {"sha256": "00"}}"#.utf8)).object)
        let target = try TargetInfo(path: "release/a.ugif", json: entry, role: "release")
        if let error = failure({ try target.check([1, 2, 3, 4, 5]) }) { found.append((error, "wrong_length", "5 bytes, not 3")) }
        // A symbolic link where the trusted store keeps a file.
        let directory = try temporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: directory + "/root.json", withDestinationPath: "/etc/hostname")
        if let error = failure({ _ = try FileStore(directory: directory).read("root.json", limit: 1000) }) {
            found.append((error, "symbolic_link", "symbolic link"))
        }
        // A key file that holds no key, and a directory that holds no repository.
        if let error = failure({ _ = try TUFSigningKey.load(pem: "hello") }) { found.append((error, "not_pem_private_key", "PEM")) }
        if let error = failure({ _ = try TUFRepository(directory: directory) }) {
            found.append((error, "not_a_repository", "repo init"))
        }
        return found
    }

    @Test("each real failure carries its detail code, and its English message still says it in words")
    func detailsAreCodes() throws {
        let failures = try Self.failures()
        #expect(failures.count == 6)
        for (error, code, english) in failures {
            #expect(error.detail?.code == code, "\(error.code): \(String(describing: error.detail))")
            #expect(error.description.contains(english), "\(error.description)")
        }
    }

    @Test("a translated TUF message holds no English words and no raw detail code", arguments: [Language.es, .fr, .de])
    func translatedMessagesHoldNoEnglish(language: Language) throws {
        expectNoEnglish(in: try Self.failures().map { ($0.error as any CodedError, $0.code, $0.english) }, language)
    }
}

/// Real signature-key and compression failures shown in es, fr and de: the key part
/// (public or private), the curve, the bit counts and the command that makes a good key are
/// values inside a coded detail, so nothing English is left around them.
@Suite("Signature and compression errors carry their details as codes, so es, fr and de messages hold no English")
struct CryptoDetailLanguageTests {
    /// What `body` throws, as a coded error.
    static func failure(_ body: () throws -> Void) -> (any CodedError)? {
        do { try body(); return nil } catch { return error as? any CodedError }
    }

    /// The real failures, each with the detail code it must end with and an English phrase
    /// its English message must still hold.
    static func failures() throws -> [(error: any CodedError, code: String, english: String)] {
        var found: [(any CodedError, String, String)] = []
        let identity = "01" + String(repeating: "00", count: 31)
        // A small-order Ed25519 key in root metadata: a TUF error nesting the crypto error.
        let keyJSON = try #require(try JSONParser.parse(Array(#"{"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": "\#(identity)"}}"#.utf8)).object)
        if let error = failure({ _ = try TUFKey(json: keyJSON, role: "root") }) { found.append((error, "ed25519_small_order", "small order")) }
        if let error = failure({ _ = try ECDSAP256PublicKey(pem: "hello") }) { found.append((error, "not_pem", "public key")) }
        if let error = failure({ _ = try RSAPSSPrivateKey.generate(bits: 1024) }) { found.append((error, "rsa_generate_too_small", "1024")) }
        if let error = failure({ _ = try Ed25519PrivateKey(rawRepresentation: [1, 2, 3]) }) {
            found.append((error, "ed25519_private_length", "not 3"))
        }
        let packed = try Deflater.compress(Array(repeating: 7, count: 2000))
        if let error = failure({ _ = try Inflater.decompress(Array(packed.dropLast(3)), limit: 20_000) }) {
            found.append((error, "stream_truncated", "last block"))
        }
        return found
    }

    @Test("each real failure names its detail code among its arguments, and its English message still says it in words")
    func detailsAreCodes() throws {
        let failures = try Self.failures()
        #expect(failures.count == 5)
        for (error, code, english) in failures {
            #expect(error.arguments.contains(code), "\(error.code): \(error.arguments)")
            #expect(error.description.contains(english), "\(error.description)")
        }
    }

    @Test("a translated signature or compression message holds no English words and no raw detail code", arguments: [Language.es, .fr, .de])
    func translatedMessagesHoldNoEnglish(language: Language) throws {
        expectNoEnglish(in: try Self.failures(), language)
    }
}

/// Real `grokctl repo sign` runs on a repository whose staged metadata holds a number canonical
/// JSON cannot write (1.5): the refusal names the role whose metadata it is (it used to name an
/// empty one, "The  metadata is not valid"), in every language.
@Suite("A metadata refusal while signing names its role, in en, es, fr and de")
struct SigningRoleTests {
    /// `openssl` with `arguments`, which must succeed.
    static func openssl(_ arguments: [String]) throws { try OpenSSLTool.run(arguments) }

    /// A new repository in `directory/work` with one Ed25519 key per role (`keys/<role>.pem`).
    static func repository(in directory: String) throws -> String {
        let keys = directory + "/keys", repo = directory + "/work"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        for role in ["root", "targets", "snapshot", "timestamp", "release"] {
            try openssl(["genpkey", "-algorithm", "ed25519", "-out", keys + "/\(role).pem"])
            try openssl(["pkey", "-in", keys + "/\(role).pem", "-pubout", "-out", keys + "/\(role).pub"])
        }
        let made = try runBinary([
            "repo", "init", "--repo", repo, "--root-key", keys + "/root.pub", "--root-threshold", "1", "--targets-key", keys + "/targets.pub",
            "--snapshot-key", keys + "/snapshot.pub", "--timestamp-key", keys + "/timestamp.pub", "--channel-key", "release=" + keys + "/release.pub",
        ])
        try #require(made.status == 0, "\(made.standardError)")
        return repo
    }

    /// Puts a non-integer number into the `signed` part of `role`'s staged metadata.
    static func addFraction(_ repo: String, role: String) throws {
        let path = repo + "/metadata/\(role).json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let changed = text.replacingOccurrences(of: "\"signed\": {", with: "\"signed\": {\n  \"x-note\": 1.5,")
        try #require(changed != text)
        try changed.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("signing a channel whose staged metadata, or whose root, holds 1.5 is refused naming that role", arguments: [Language.en, .es, .fr, .de])
    func signingRefusalNamesTheRole(_ language: Language) throws {
        let directory = try TUFDetailLanguageTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repo = try Self.repository(in: directory)
        let key = directory + "/keys/release.pem"
        let sentences = language == .en ? [] : try CLI.FleetLocalizationTests.englishSentences(for: language)
        for role in ["release", "root"] {
            try Self.addFraction(repo, role: role)
            let run = try runBinary(["repo", "sign", "--repo", repo, "--role", "release", "--key", key, "--lang", language.rawValue])
            #expect(run.status == 1, "\(role): \(run.standardError)")
            #expect(run.standardError.contains(" \(role) "), "\(language) \(role): \(run.standardError)")
            #expect(!run.standardError.contains("  "), "\(language) \(role): \(run.standardError)")
            if language == .en {
                #expect(run.standardError.contains("The \(role) metadata is not valid"), "\(run.standardError)")
            } else {
                let found = CLI.LanguageAcceptanceTests.faults(run.standardError, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(role): \(found)\n\(run.standardError)")
            }
        }
    }
}
