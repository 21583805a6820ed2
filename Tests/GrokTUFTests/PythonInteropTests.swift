import Foundation
import GrokCrypto
import GrokTUF
import GrokTestSupport
import Testing

/// A python3 that can import python-tuf: `$GROK_TUF_PYTHON`, the venv `scripts/setup.sh
/// --test` makes (`.build/python-tuf`), or `python3` on the PATH.
let pythonWithTUF: String? = {
    var candidates = [packageRoot + "/.build/python-tuf/bin/python3", "/usr/bin/env"]
    if let explicit = ProcessInfo.processInfo.environment["GROK_TUF_PYTHON"] { candidates.insert(explicit, at: 0) }
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
        let arguments = candidate == "/usr/bin/env" ? ["python3"] : []
        if (try? runProcess(candidate, arguments + ["-c", "import tuf.api.metadata, securesystemslib.signer"]))?.status == 0 {
            return candidate
        }
    }
    return nil
}()

let interopScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/Interop/make_repository.py"

@discardableResult
func runProcess(_ executable: String, _ arguments: [String], input: [UInt8] = []) throws -> (status: Int32, output: [UInt8]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe(), stdin = Pipe()
    process.standardOutput = stdout
    process.standardInput = stdin
    try process.run()
    stdin.fileHandleForWriting.write(Data(input))
    try stdin.fileHandleForWriting.close()
    let data = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, Array(data))
}

func python(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
    let python = try #require(pythonWithTUF)
    let prefix = python == "/usr/bin/env" ? ["python3"] : []
    let result = try runProcess(python, prefix + [interopScript] + arguments, input: input)
    try #require(result.status == 0, "make_repository.py \(arguments) failed")
    return result.output
}

/// A repository python-tuf made in `mode`, and a client initialised with its first root.
func pythonRepository(_ mode: String) throws -> (repo: String, client: String, updater: Updater) {
    let repo = temporaryDirectory("python-\(mode)")
    _ = try python([repo, mode])
    let client = temporaryDirectory("client")
    let root = Array(try Data(contentsOf: URL(fileURLWithPath: repo + "/metadata/1.root.json")))
    try Updater.initialize(metadataDirectory: client + "/metadata", trustedRoot: root)
    let updater = try Updater(
        metadataDirectory: client + "/metadata", metadataBaseURL: "file://" + repo + "/metadata",
        targetBaseURL: "file://" + repo + "/targets", fetcher: LocalFileFetcher(), clock: { testNow })
    return (repo, client, updater)
}

let target = "firmware/grokker-1.9.9.bin"

@Suite(
    "Repositories made with python-tuf's metadata API",
    .enabled(if: pythonWithTUF != nil, "python3 with python-tuf is missing: run scripts/setup.sh --test (it installs tuf into .build/python-tuf)")
)
struct PythonInteropTests {
    @Test("Ed25519, ECDSA and RSA-PSS keys, a root rotation and a delegation with custom data are accepted")
    func accepted() async throws {
        let (_, client, updater) = try pythonRepository("good")
        try await updater.refresh()
        #expect(await updater.trustedVersions == ["root": 2, "timestamp": 3, "snapshot": 1, "targets": 1])
        let info = try #require(try await updater.targetInfo(target))
        #expect(info.custom?.object?["version"] == .string("1.9.9"))
        #expect(info.hashes.keys.sorted() == ["sha256", "sha512"])
        let bytes = try await updater.download(info, to: client + "/targets")
        #expect(bytes == Array("grokker firmware 1.9.9\n".utf8))
    }

    @Test("A target changed after signing is refused and not stored")
    func tampered() async throws {
        let (_, client, updater) = try pythonRepository("tampered")
        let info = try #require(try await updater.targetInfo(target))
        await #expect(throws: TUFError.self) { try await updater.download(info, to: client + "/targets") }
        #expect(!FileManager.default.fileExists(atPath: client + "/targets/" + percentEncode(target)))
    }

    @Test("An expired timestamp is refused")
    func expired() async throws {
        let (_, client, updater) = try pythonRepository("expired")
        await #expect(throws: TUFError.expired(role: "timestamp", expires: "2026-11-01T00:00:00Z")) { try await updater.refresh() }
        #expect(trustedVersion(client, "root") == 2)
        #expect(trustedVersion(client, "timestamp") == nil)
    }

    @Test("Delegated metadata changed after signing is refused")
    func badSignature() async throws {
        let (_, _, updater) = try pythonRepository("badsig")
        await #expect(throws: TUFError.threshold(role: "release", valid: 0, threshold: 1)) { try await updater.targetInfo(target) }
    }

    @Test("A timestamp of a lower version, validly signed, is refused as a rollback")
    func rollback() async throws {
        let (repo, client, updater) = try pythonRepository("rollback")
        try await updater.refresh()
        try FileManager.default.removeItem(atPath: repo + "/metadata/timestamp.json")
        try FileManager.default.copyItem(atPath: repo + "/rollback/timestamp.json", toPath: repo + "/metadata/timestamp.json")
        let again = try Updater(
            metadataDirectory: client + "/metadata", metadataBaseURL: "file://" + repo + "/metadata",
            fetcher: LocalFileFetcher(), clock: { testNow })
        await #expect(throws: TUFError.rollback(role: "timestamp", trusted: 3, offered: 2)) { try await again.refresh() }
        #expect(trustedVersion(client, "timestamp") == 3)
    }

    @Test("Our canonical JSON is byte for byte securesystemslib's encode_canonical")
    func canonicalMatches() throws {
        let text = #"{"z": [1, -2, 18446744073709551615, true, false, null], "a\"b": "quote\" backslash\\ tab\t nl\n \u0001 \u00e9 \ud83d\ude00", "": {}, "\u00e9": "", "E": [], "e\u0301": 0}"#
        let ours = try CanonicalJSON.encode(try json(text), role: "root")
        #expect(ours == (try python(["-", "canonical"], input: Array(text.utf8))))
    }

    /// A repository our signer makes: root ECDSA rotated to RSA, timestamp ECDSA, snapshot
    /// RSA-PSS, targets Ed25519, a delegation, consistent snapshots.
    func ourRepository() throws -> TestRepository {
        let repo = try TestRepository(label: "ours")
        repo.consistentSnapshot = true
        repo.keys["root"] = [try TUFSigningKey.ecdsaP256()]
        repo.keys["timestamp"] = [try TUFSigningKey.ecdsaP256()]
        repo.keys["snapshot"] = [try TUFSigningKey.rsaPSS(bits: 2048)]
        repo.delegations = [.init(name: "release", delegator: "targets", keys: [try TUFSigningKey.ed25519()],
                                  paths: ["firmware/*"], terminating: true, targets: [target: Array("ours\n".utf8)])]
        try repo.publishRoot()
        let old = repo.keys["root"]!
        repo.keys["root"] = [try TUFSigningKey.rsaPSS(bits: 2048)]
        repo.versions["root"] = 2
        try repo.publishRoot(extraSigners: old)
        try repo.publish()
        return repo
    }

    @Test("python-tuf's own client accepts a repository our signer made, and refuses it tampered")
    func pythonClientAcceptsOurs() async throws {
        let python = try #require(pythonWithTUF)
        let prefix = python == "/usr/bin/env" ? ["python3"] : []
        let repo = try ourRepository()
        #expect(try runProcess(python, prefix + [interopScript, repo.directory, "client", target]).status == 0)
        let downloaded = repo.directory + "/python-client/targets/" + percentEncode(target)
        #expect(FileManager.default.contents(atPath: downloaded) == Data("ours\n".utf8))
        // The same repository with the target's bytes changed: python-tuf refuses it too.
        let tampered = try ourRepository()
        let file = tampered.targetsDirectory + "/firmware/" + SHA256.hash(Array("ours\n".utf8)).hex + ".grokker-1.9.9.bin"
        try Data("ours!".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try runProcess(python, prefix + [interopScript, tampered.directory, "client", target]).status == 1)
        // And our client agrees on both.
        for (repository, accepted) in [(repo, true), (tampered, false)] {
            let client = try repository.newClient()
            let updater = try repository.updater(client)
            let info = try #require(try await updater.targetInfo(target))
            let result: [UInt8]? = try? await updater.download(info, to: client + "/targets")
            #expect((result != nil) == accepted)
        }
    }
}
