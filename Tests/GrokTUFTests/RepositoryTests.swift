import Foundation
import GrokCrypto
import GrokTUF
import Testing

/// A key as `openssl genpkey` writes it, loaded the way `grokctl repo` loads a key file.
func opensslKey(_ algorithm: [String], in directory: String) throws -> (key: TUFSigningKey, file: String) {
    let file = directory + "/key-\(UUID().uuidString).pem"
    let result = try runProcess("/usr/bin/env", ["openssl", "genpkey"] + algorithm + ["-out", file])
    try #require(result.status == 0, "openssl genpkey \(algorithm) failed")
    let pem = try String(contentsOfFile: file, encoding: .utf8)
    return (try TUFSigningKey.load(pem: pem), file)
}

let ed25519Algorithm = ["-algorithm", "ed25519"]
let ecdsaAlgorithm = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
let rsaAlgorithm = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]

func keySet(_ keys: [TUFSigningKey], threshold: Int = 1) -> TUFRepository.RoleKeySet {
    TUFRepository.RoleKeySet(keys: keys.map { ($0.publicKeyJSON, $0.keyID) }, threshold: threshold)
}

/// A repository made through the publisher API with one key per role (root: `rootKeys`,
/// threshold `rootThreshold`), every role signed, timestamped and published.
final class PublishedRepository {
    let work = temporaryDirectory("publisher")
    let served = temporaryDirectory("served")
    var root: [TUFSigningKey]
    var timestamp: TUFSigningKey
    var snapshot: TUFSigningKey
    var targets: TUFSigningKey
    var release: TUFSigningKey
    var development: TUFSigningKey
    let repository: TUFRepository
    var now = testNow

    init(rootKeys: [TUFSigningKey]? = nil, rootThreshold: Int = 1) throws {
        root = try rootKeys ?? [TUFSigningKey.ed25519()]
        timestamp = try .ed25519()
        snapshot = try .ecdsaP256()
        targets = try .ed25519()
        release = try .ed25519()
        development = try .ed25519()
        repository = try TUFRepository.create(
            at: work, root: keySet(root, threshold: rootThreshold), timestamp: keySet([timestamp]), snapshot: keySet([snapshot]),
            targets: keySet([targets]), channels: [("release", keySet([release])), ("development", keySet([development]))], now: now)
    }

    func signAll() throws {
        for key in root { try repository.sign(role: "root", with: key) }
        try repository.sign(role: "targets", with: targets)
        try repository.sign(role: "release", with: release)
        try repository.sign(role: "development", with: development)
    }

    func timestampAndPublish() throws {
        try repository.timestamp(with: [timestamp], snapshotKeys: [snapshot], now: now)
        try repository.publish(to: served, now: now)
    }

    var firstRoot: [UInt8] { Array(FileManager.default.contents(atPath: served + "/metadata/1.root.json")!) }

    func newClient() throws -> String {
        let client = temporaryDirectory("station")
        try Updater.initialize(metadataDirectory: client + "/metadata", trustedRoot: firstRoot)
        return client
    }

    func updater(_ client: String, at time: UTCTime? = nil) throws -> Updater {
        let when = time ?? now
        return try Updater(metadataDirectory: client + "/metadata", metadataBaseURL: "file://" + served + "/metadata",
                           targetBaseURL: "file://" + served + "/targets", fetcher: LocalFileFetcher(), clock: { when })
    }
}

@Suite("TUF publisher (TUFRepository, what grokctl repo runs)")
struct RepositoryTests {
    let image = Array("a firmware image\n".utf8)

    @Test("a repository made, signed in turn, timestamped and published is accepted by the client, custom data and all")
    func publishedRepositoryIsAccepted() async throws {
        let repo = try PublishedRepository()
        let custom = obj(("version", .string("1.9.9")), ("notes", obj(("en", .string("fixes")), ("de", .string("behebt")))))
        let path = try repo.repository.addTarget(channel: "release", name: "grokker-1.9.9.ugif", bytes: image, custom: custom, now: repo.now)
        #expect(path == "release/grokker-1.9.9.ugif")
        try repo.signAll()
        try repo.timestampAndPublish()
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        try await updater.refresh()
        let info = try #require(try await updater.targetInfo(path))
        #expect(info.custom == custom)
        #expect(try await updater.download(info, to: client + "/targets") == image)
        // Consistent snapshots: the served image is named by its hash.
        #expect(FileManager.default.fileExists(atPath: repo.served + "/targets/release/" + SHA256.hash(image).hex + ".grokker-1.9.9.ugif"))
    }

    @Test("publish is refused until every role has its threshold of signatures, and names what is missing")
    func publishNeedsEverySignature() throws {
        let repo = try PublishedRepository(rootKeys: [try .ed25519(), try .ecdsaP256()], rootThreshold: 2)
        try repo.repository.addTarget(channel: "release", name: "a.ugif", bytes: image, custom: nil, now: repo.now)
        try repo.repository.sign(role: "root", with: repo.root[0])
        try repo.repository.sign(role: "targets", with: repo.targets)
        try repo.repository.sign(role: "release", with: repo.release)
        try repo.repository.sign(role: "development", with: repo.development)
        try repo.repository.timestamp(with: [repo.timestamp], snapshotKeys: [repo.snapshot], now: repo.now)
        #expect(try repo.repository.missingSignatures().map(\.role) == ["root"])
        #expect(throws: TUFError.self) { try repo.repository.publish(to: repo.served, now: repo.now) }
        // The second root key holder signs in turn (offline, on their own machine).
        try repo.repository.sign(role: "root", with: repo.root[1])
        #expect(try repo.repository.missingSignatures().isEmpty)
        try repo.repository.publish(to: repo.served, now: repo.now)
    }

    @Test("a key that is not one of a role's keys cannot sign it")
    func foreignKeyCannotSign() throws {
        let repo = try PublishedRepository()
        #expect(throws: TUFError.self) { try repo.repository.sign(role: "release", with: repo.development) }
        #expect(throws: TUFError.self) { try repo.repository.sign(role: "root", with: repo.targets) }
    }

    @Test("keys made by openssl genpkey (ed25519, P-256, RSA) load from their PEM files and sign a repository the client accepts")
    func opensslKeysWork() async throws {
        let keys = temporaryDirectory("keys")
        let ed = try opensslKey(ed25519Algorithm, in: keys), ec = try opensslKey(ecdsaAlgorithm, in: keys), rsa = try opensslKey(rsaAlgorithm, in: keys)
        // The public half alone (what a key holder hands the repository owner) gives the same key id.
        for (key, file) in [ed, ec, rsa] {
            let pub = try runProcess("/usr/bin/env", ["openssl", "pkey", "-in", file, "-pubout"])
            #expect(try TUFSigningKey.publicKey(pem: String(decoding: pub.output, as: UTF8.self)).keyID == key.keyID)
        }
        let repo = try PublishedRepository(rootKeys: [ed.key, ec.key, rsa.key], rootThreshold: 2)
        try repo.repository.addTarget(channel: "development", name: "b.ugif", bytes: image, custom: nil, now: repo.now)
        try repo.repository.sign(role: "root", with: ec.key)
        try repo.repository.sign(role: "root", with: rsa.key)
        try repo.repository.sign(role: "targets", with: repo.targets)
        try repo.repository.sign(role: "release", with: repo.release)
        try repo.repository.sign(role: "development", with: repo.development)
        try repo.timestampAndPublish()
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        try await updater.refresh()
        #expect(try await updater.targetInfo("development/b.ugif") != nil)
    }

    @Test("a small-order Ed25519 public key is refused as a role key")
    func weakKeyRefused() throws {
        // 01 00..00 is the identity point: every signature would verify under it.
        let der: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00, 0x01] + [UInt8](repeating: 0, count: 31)
        let pem = "-----BEGIN PUBLIC KEY-----\n" + Data(der).base64EncodedString() + "\n-----END PUBLIC KEY-----\n"
        #expect(throws: TUFError.self) { _ = try TUFSigningKey.publicKey(pem: pem) }
    }

    @Test("the timestamp key leaked and signed a huge version: after rotating it, stations take the genuine timestamp again")
    func rotationUndoesVersionExhaustion() async throws {
        let repo = try PublishedRepository()
        try repo.signAll()
        try repo.timestampAndPublish()
        let client = try repo.newClient()
        try await repo.updater(client).refresh()
        // The attacker, holding the leaked timestamp key, serves a timestamp of version 2^62.
        let staged = try #require(try repo.repository.staged("timestamp"))
        var forged = staged.signed
        forged["version"] = .integer(1 << 62)
        try Data(try signMetadata(forged, with: [repo.timestamp])).write(to: URL(fileURLWithPath: repo.served + "/metadata/timestamp.json"))
        try await repo.updater(client).refresh()
        // Stations are now stuck: the genuine timestamp of version 2 is a "rollback".
        try repo.timestampAndPublish()
        await #expect(throws: TUFError.self) { try await repo.updater(client).refresh() }
        // The owner rotates the timestamp key (a new root signed by the root key) and publishes.
        let fresh = try TUFSigningKey.ed25519()
        try repo.repository.rotate(role: "timestamp", to: keySet([fresh]), now: repo.now)
        try repo.repository.sign(role: "root", with: repo.root[0])
        repo.timestamp = fresh
        try repo.timestampAndPublish()
        let updater = try repo.updater(client)
        try await updater.refresh()
        #expect(await updater.trustedVersions["root"] == 2)
        #expect(try #require(await updater.trustedVersions["timestamp"]) < 100)
    }

    @Test("after a channel key is rotated, metadata signed by the old key is refused")
    func channelRotation() async throws {
        let repo = try PublishedRepository()
        try repo.repository.addTarget(channel: "release", name: "a.ugif", bytes: image, custom: nil, now: repo.now)
        try repo.signAll()
        try repo.timestampAndPublish()
        let leaked = repo.release
        repo.release = try .ecdsaP256()
        try repo.repository.rotate(role: "release", to: keySet([repo.release]), now: repo.now)
        #expect(throws: TUFError.self) { try repo.repository.sign(role: "release", with: leaked) }
        try repo.repository.sign(role: "targets", with: repo.targets)
        try repo.repository.sign(role: "release", with: repo.release)
        try repo.timestampAndPublish()
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        try await updater.refresh()
        #expect(try await updater.targetInfo("release/a.ugif") != nil)
        // The attacker re-signs release.json with the old key and serves it under the name
        // the snapshot lists: refused.
        let version = try #require(try repo.repository.staged("release")).signed["version"]!.int64!
        let name = repo.served + "/metadata/\(version).release.json"
        let staged = try #require(try repo.repository.staged("release"))
        try Data(try signMetadata(staged.signed, with: [leaked])).write(to: URL(fileURLWithPath: name))
        let other = try repo.newClient()
        let attacked = try repo.updater(other)
        try await attacked.refresh()
        await #expect(throws: TUFError.self) { _ = try await attacked.targetInfo("release/a.ugif") }
    }

    @Test("the development key cannot sign a release target: the delegation trusts it for development/* only")
    func channelsAreConfinedToTheirPaths() async throws {
        let repo = try PublishedRepository()
        try repo.repository.addTarget(channel: "development", name: "x.ugif", bytes: image, custom: nil, now: repo.now)
        // Hand-edit development.json to claim a release path too, and sign it with its own key.
        let dir = repo.work + "/metadata/development.json"
        var text = try String(contentsOfFile: dir, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"development/x.ugif\"", with: "\"release/x.ugif\"")
        try text.write(toFile: dir, atomically: true, encoding: .utf8)
        try repo.signAll()
        try FileManager.default.createDirectory(atPath: repo.work + "/targets/release", withIntermediateDirectories: true)
        try Data(image).write(to: URL(fileURLWithPath: repo.work + "/targets/release/x.ugif"))
        try repo.timestampAndPublish()
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        try await updater.refresh()
        #expect(try await updater.targetInfo("release/x.ugif") == nil)
    }

    @Test("a target changed in the working copy after signing is refused at publish")
    func tamperedWorkingCopyIsNotPublished() throws {
        let repo = try PublishedRepository()
        try repo.repository.addTarget(channel: "release", name: "a.ugif", bytes: image, custom: nil, now: repo.now)
        try repo.signAll()
        try repo.repository.timestamp(with: [repo.timestamp], snapshotKeys: [repo.snapshot], now: repo.now)
        try Data("another image\n".utf8).write(to: URL(fileURLWithPath: repo.work + "/targets/release/a.ugif"))
        #expect(throws: TUFError.self) { try repo.repository.publish(to: repo.served, now: repo.now) }
        #expect(!FileManager.default.fileExists(atPath: repo.served + "/metadata/timestamp.json"))
    }

    @Test("editing a channel after publishing raises its version once, and the timestamp refuses to run without the snapshot key")
    func editsRaiseVersions() throws {
        let repo = try PublishedRepository()
        try repo.signAll()
        try repo.timestampAndPublish()
        try repo.repository.addTarget(channel: "release", name: "a.ugif", bytes: image, custom: nil, now: repo.now)
        try repo.repository.addTarget(channel: "release", name: "b.ugif", bytes: image, custom: nil, now: repo.now)
        #expect(try repo.repository.staged("release")?.signed["version"] == .integer(2))
        try repo.repository.sign(role: "release", with: repo.release)
        #expect(throws: TUFError.self) { try repo.repository.timestamp(with: [repo.timestamp], snapshotKeys: [], now: repo.now) }
        try repo.timestampAndPublish()
        // Nothing changed: the timer's run needs only the timestamp key.
        try repo.repository.timestamp(with: [repo.timestamp], snapshotKeys: [], now: repo.now.adding(3600))
    }

    @Test("python-tuf's own client accepts a repository the publisher made, and refuses it once a target is changed")
    func pythonClientAcceptsPublished() throws {
        let python = try #require(pythonWithTUF)
        let prefix = python == "/usr/bin/env" ? ["python3"] : []
        let repo = try PublishedRepository(rootKeys: [try .rsaPSS(bits: 2048)])
        try repo.repository.addTarget(channel: "release", name: "grokker-1.9.9.ugif", bytes: image,
                                      custom: obj(("version", .string("1.9.9"))), now: testNow)
        try repo.signAll()
        // Rotate root to ECDSA so python-tuf walks a chain too.
        let next = try TUFSigningKey.ecdsaP256()
        try repo.repository.rotate(role: "root", to: keySet([next]), now: testNow)
        try repo.repository.sign(role: "root", with: repo.root[0])
        try repo.repository.sign(role: "root", with: next)
        // python-tuf uses the real clock: sign with it.
        let realNow = systemUTCClock()
        repo.now = realNow
        try repo.repository.timestamp(with: [repo.timestamp], snapshotKeys: [repo.snapshot], now: realNow)
        try repo.repository.publish(to: repo.served, now: realNow)
        let target = "release/grokker-1.9.9.ugif"
        #expect(try runProcess(python, prefix + [interopScript, repo.served, "client", target]).status == 0)
        let file = repo.served + "/targets/release/" + SHA256.hash(image).hex + ".grokker-1.9.9.ugif"
        try Data("changed\n".utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.removeItem(atPath: repo.served + "/python-client")
        #expect(try runProcess(python, prefix + [interopScript, repo.served, "client", target]).status == 1)
    }
}
