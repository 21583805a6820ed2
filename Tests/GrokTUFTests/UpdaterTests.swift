import Foundation
import GrokBasics
import GrokCrypto
import GrokTUF
import Synchronization
import Testing

/// Counts the URLs fetched, around the real file fetcher.
final class CountingFetcher: TUFFetching {
    let inner = LocalFileFetcher()
    let log = Log()
    final class Log: Sendable {
        private let urls = Mutex<[String]>([])
        func add(_ url: String) { urls.withLock { $0.append(url) } }
        var all: [String] { urls.withLock { $0 } }
    }
    func fetch(_ url: String, maxLength: Int) async throws(TUFError) -> FetchOutcome {
        log.add(url)
        return try await inner.fetch(url, maxLength: maxLength)
    }
}

@Suite("The TUF client workflow on repositories on disk")
struct UpdaterTests {
    @Test("A fresh client refreshes, finds a target, downloads it once and then serves it from its cache")
    func happyPath() async throws {
        let repo = try TestRepository()
        repo.targets["firmware/grokker-1.9.9.bin"] = Array("image bytes".utf8)
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        try await updater.refresh()
        #expect(await updater.trustedVersions == ["root": 1, "timestamp": 1, "snapshot": 1, "targets": 1])
        let info = try #require(try await updater.targetInfo("firmware/grokker-1.9.9.bin"))
        #expect(try await updater.targetInfo("firmware/other.bin") == nil)
        let targetDir = client + "/targets"
        #expect(await updater.cachedTarget(info, in: targetDir) == nil)
        try await updater.download(info, to: targetDir)
        #expect(await updater.cachedTarget(info, in: targetDir) == Array("image bytes".utf8))
        for role in ["root", "timestamp", "snapshot", "targets"] { #expect(trustedVersion(client, role) == 1) }
    }

    @Test("The root chain: each new root is signed by the old threshold and its own, one version at a time")
    func rootRotation() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        // v2: a new root key, signed by old and new; v3: signed by the new key alone.
        let old = repo.keys["root"]!
        repo.keys["root"] = [try TUFSigningKey.ecdsaP256()]
        repo.versions["root"] = 2
        try repo.publishRoot(extraSigners: old)
        repo.versions["root"] = 3
        try repo.publishRoot()
        try await repo.refresh(client)
        #expect(trustedVersion(client, "root") == 3)
    }

    @Test("A new root not signed by the trusted root's keys is refused and the trusted root stays")
    func rootNotSignedByOld() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        repo.keys["root"] = [try TUFSigningKey.ed25519()]
        repo.versions["root"] = 2
        try repo.publishRoot()
        await #expect(throws: TUFError.threshold(role: "root", valid: 0, threshold: 1)) { try await repo.refresh(client) }
        #expect(trustedVersion(client, "root") == 1)
    }

    @Test("no signature at all by a top-level role's trusted keys is said as a likely foreign root; a delegated role's is not")
    func foreignRootHint() {
        for role in ["root", "timestamp", "snapshot", "targets"] {
            #expect(TUFError.threshold(role: role, valid: 0, threshold: 1).code == "tuf_threshold_foreign_root")
            #expect(TUFError.threshold(role: role, valid: 1, threshold: 2).code == "tuf_threshold")
        }
        #expect(TUFError.threshold(role: "release", valid: 0, threshold: 1).code == "tuf_threshold")
    }

    @Test("A new root that skips a version is refused")
    func rootVersionSkip() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        repo.versions["root"] = 3
        let bytes = try repo.publishRoot()
        try repo.write("2.root.json", bytes)
        await #expect(throws: TUFError.versionMismatch(role: "root", expected: 2, found: 3)) { try await repo.refresh(client) }
    }

    @Test("Version exhaustion with a leaked timestamp key is undone by rotating that key in a new root")
    func fastForwardRecovery() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        try await repo.refresh(client)
        // The attacker signs timestamp version 2^64-1 with the leaked key; the client takes it.
        try repo.publishTimestamp(version: UInt64.max)
        try await repo.refresh(client)
        #expect(trustedVersion(client, "timestamp") == UInt64.max)
        // The genuine timestamp v2 is now refused as a rollback...
        repo.versions["timestamp"] = 2
        try repo.publishTimestamp()
        await #expect(throws: TUFError.self) { try await repo.refresh(client) }
        // ...until the owner rotates the timestamp key in root v2.
        repo.keys["timestamp"] = [try TUFSigningKey.ed25519()]
        repo.versions["root"] = 2
        try repo.publishRoot()
        try repo.publishTimestamp()
        try await repo.refresh(client)
        #expect(trustedVersion(client, "timestamp") == 2)
        #expect(trustedVersion(client, "root") == 2)
    }

    @Test("A timestamp or snapshot of a lower version is refused as a rollback")
    func rollback() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        repo.versions["timestamp"] = 5
        repo.versions["snapshot"] = 5
        try repo.publish()
        let client = try repo.newClient()
        try await repo.refresh(client)
        repo.versions["timestamp"] = 4
        try repo.publishTimestamp()
        await #expect(throws: TUFError.rollback(role: "timestamp", trusted: 5, offered: 4)) { try await repo.refresh(client) }
        repo.versions["timestamp"] = 6
        repo.versions["snapshot"] = 4
        try repo.publish()
        await #expect(throws: TUFError.rollback(role: "snapshot", trusted: 5, offered: 4)) { try await repo.refresh(client) }
        #expect(trustedVersion(client, "timestamp") == 5)
    }

    @Test("A targets version listed lower in a new snapshot is refused as a rollback")
    func targetsRollbackInSnapshot() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        repo.versions["targets"] = 3
        try repo.publish()
        let client = try repo.newClient()
        try await repo.refresh(client)
        repo.versions["targets"] = 2
        repo.versions["snapshot"] = 2
        repo.versions["timestamp"] = 2
        try repo.publish()
        await #expect(throws: TUFError.rollback(role: "targets", trusted: 3, offered: 2)) { try await repo.refresh(client) }
        #expect(trustedVersion(client, "snapshot") == 1)
    }

    @Test("Expired metadata is refused at the injected time; the expired file is not trusted", arguments: ["root", "timestamp", "snapshot", "targets"])
    func expiry(role: String) async throws {
        let repo = try TestRepository()
        repo.expires[role] = "2026-11-30T23:59:59Z"
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        await #expect(throws: TUFError.expired(role: role, expires: "2026-11-30T23:59:59Z")) { try await repo.refresh(client) }
        if role != "root" { #expect(trustedVersion(client, role) == nil) }
        // The same repository one second before expiry is fine.
        try await repo.refresh(client, now: UTCTime(iso8601: "2026-11-30T23:59:58Z")!)
    }

    @Test("A snapshot whose hash is not the one the timestamp gives is refused and not stored")
    func snapshotHashMismatch() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        var snapshot = try repo.read("snapshot.json")
        snapshot.append(0x20)  // still valid JSON and signatures, but other bytes
        try repo.write("snapshot.json", snapshot)
        let client = try repo.newClient()
        await #expect(throws: TUFError.self) { try await repo.refresh(client) }
        #expect(trustedVersion(client, "timestamp") == 1)
        #expect(trustedVersion(client, "snapshot") == nil)
    }

    @Test("A tampered target is refused and nothing is written to the target directory")
    func tamperedTarget() async throws {
        let repo = try TestRepository()
        repo.targets["image.bin"] = Array("genuine".utf8)
        try repo.publishRoot()
        try repo.publish()
        try Data("genuinE".utf8).write(to: URL(fileURLWithPath: repo.targetsDirectory + "/image.bin"))
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        let info = try #require(try await updater.targetInfo("image.bin"))
        await #expect(throws: TUFError.self) { try await updater.download(info, to: client + "/targets") }
        #expect(!FileManager.default.fileExists(atPath: client + "/targets/image.bin"))
    }

    @Test("Duplicate JSON keys in signed metadata are refused, whatever value a reviewer sees")
    func duplicateKeysInMetadata() async throws {
        let repo = try TestRepository()
        repo.targets["image.bin"] = Array("genuine".utf8)
        try repo.publishRoot()
        try repo.publish()
        // Put a second "length" into the target entry: the signature no longer matters,
        // the parser stops first.
        let text = String(decoding: try repo.read("targets.json"), as: UTF8.self)
        try repo.write("targets.json", Array(text.replacingOccurrences(of: "\"length\":", with: "\"length\": 1, \"length\":").utf8))
        let client = try repo.newClient()
        await #expect {
            try await repo.refresh(client)
        } throws: { error in
            if case TUFError.json(let detail, _) = error { detail == ErrorDetail("duplicate_key", ["length"]) } else { false }
        }
    }

    @Test("Metadata larger than the spec's limit is not downloaded past the limit")
    func sizeLimit() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        try repo.write("timestamp.json", [UInt8](repeating: 0x20, count: 16_385))
        let client = try repo.newClient()
        await #expect(throws: TUFError.tooLarge(url: repo.metadataURL + "/timestamp.json", limit: 16_384)) { try await repo.refresh(client) }
    }

    @Test("Consistent snapshots: versioned snapshot and targets names, hash-prefixed target files")
    func consistentSnapshot() async throws {
        let repo = try TestRepository()
        repo.consistentSnapshot = true
        repo.versions["snapshot"] = 7
        repo.versions["targets"] = 4
        repo.targets["dir/image.bin"] = Array("consistent".utf8)
        try repo.publishRoot()
        try repo.publish()
        // The non-versioned copies are wrong: only the versioned names may be used.
        try repo.write("snapshot.json", Array("garbage".utf8))
        try repo.write("targets.json", Array("garbage".utf8))
        let client = try repo.newClient()
        let fetcher = CountingFetcher()
        let updater = try Updater(
            metadataDirectory: client + "/metadata", metadataBaseURL: repo.metadataURL, targetBaseURL: repo.targetsURL,
            fetcher: fetcher, clock: { testNow })
        let info = try #require(try await updater.targetInfo("dir/image.bin"))
        try await updater.download(info, to: client + "/targets")
        let names = fetcher.log.all.map { $0.replacingOccurrences(of: repo.directory, with: "") }
        let digest = SHA256.hash(Array("consistent".utf8)).hex
        #expect(names == [
            "file:///metadata/2.root.json", "file:///metadata/timestamp.json", "file:///metadata/7.snapshot.json",
            "file:///metadata/4.targets.json", "file:///targets/dir/\(digest).image.bin",
        ])
    }

    @Test("Delegations: pre-order search, path patterns, and a terminating role ends the search")
    func delegations() async throws {
        let repo = try TestRepository()
        let a = try TUFSigningKey.rsaPSS(bits: 2048), b = try TUFSigningKey.ecdsaP256(), c = try TUFSigningKey.ed25519()
        repo.delegations = [
            .init(name: "release", delegator: "targets", keys: [a], paths: ["release/*"], terminating: true,
                  targets: ["release/fw.bin": Array("release".utf8)]),
            .init(name: "shadow", delegator: "targets", keys: [b], paths: ["release/*", "dev/*"],
                  targets: ["release/other.bin": Array("shadow".utf8), "dev/fw.bin": Array("dev".utf8)]),
            .init(name: "nested", delegator: "release", keys: [c], hashPrefixes: [""],
                  targets: ["release/nested.bin": Array("nested".utf8)]),
        ]
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        #expect(try await updater.targetInfo("release/fw.bin")?.length == 7)
        #expect(try await updater.targetInfo("release/nested.bin")?.length == 6)
        // release is terminating for release/*: shadow's entry is never reached.
        #expect(try await updater.targetInfo("release/other.bin") == nil)
        #expect(try await updater.targetInfo("dev/fw.bin")?.length == 3)
        #expect(try await updater.targetInfo("elsewhere/fw.bin") == nil)
    }

    @Test("A role reached through two delegators is verified against each; trust does not carry over")
    func diamond() async throws {
        let repo = try TestRepository()
        let parentA = try TUFSigningKey.ed25519(), parentB = try TUFSigningKey.ed25519()
        let releaseA = try TUFSigningKey.ed25519(), releaseB = try TUFSigningKey.ed25519()
        repo.delegations = [
            .init(name: "parent-a", delegator: "targets", keys: [parentA], paths: ["team-a/*"]),
            .init(name: "parent-b", delegator: "targets", keys: [parentB], paths: ["team-b/*"]),
            .init(name: "release", delegator: "parent-a", keys: [releaseA], paths: ["team-a/*"],
                  targets: ["team-a/x": Array("A".utf8), "team-b/x": Array("B".utf8)]),
        ]
        try repo.publishRoot()
        try repo.publish()
        // parent-b also delegates "release", to another key that never signed it.
        repo.delegations.append(.init(name: "release", delegator: "parent-b", keys: [releaseB], paths: ["team-b/*"]))
        let parentBBytes = try signMetadata(
            repo.targetsSigned([:], version: 1, expires: future, children: [repo.delegations[3]]), with: [parentB])
        try repo.write("parent-b.json", parentBBytes)
        try repo.publishTimestamp()  // snapshot lists no hashes for parent-b: only its version
        let client = try repo.newClient()
        let updater = try repo.updater(client)
        #expect(try await updater.targetInfo("team-a/x") != nil)
        await #expect(throws: TUFError.threshold(role: "release", valid: 0, threshold: 1)) { try await updater.targetInfo("team-b/x") }
    }

    @Test("Role names are percent-encoded in URLs and local file names, so ../ cannot leave the metadata directory")
    func unusualRoleName() async throws {
        #expect(percentEncode("../delegatedrole") == "..%2Fdelegatedrole")
        #expect(percentEncode("a b/ü~._-") == "a%20b%2F%C3%BC~._-")
        let repo = try TestRepository()
        repo.delegations = [.init(name: "a?b#c", delegator: "targets", keys: [try TUFSigningKey.ed25519()], paths: ["*"],
                                  targets: ["x": Array("x".utf8)])]
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        let fetcher = CountingFetcher()
        let updater = try Updater(
            metadataDirectory: client + "/metadata", metadataBaseURL: repo.metadataURL, fetcher: fetcher, clock: { testNow })
        #expect(try await updater.targetInfo("x") != nil)
        #expect(fetcher.log.all.last == repo.metadataURL + "/a%3Fb%23c.json")
        #expect(FileManager.default.fileExists(atPath: client + "/metadata/a%3Fb%23c.json"))
    }

    @Test("A symbolic link in the trusted store is not followed")
    func symlinkInStore() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        let elsewhere = temporaryDirectory("elsewhere") + "/root.json"
        try FileManager.default.moveItem(atPath: client + "/metadata/root.json", toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: client + "/metadata/root.json", withDestinationPath: elsewhere)
        #expect(throws: TUFError.self) { try repo.updater(client) }
    }

    @Test("At most maxRootRotations new roots are taken in one refresh")
    func rootRotationLimit() async throws {
        let repo = try TestRepository()
        try repo.publishRoot()
        try repo.publish()
        let client = try repo.newClient()
        for version in 2...4 as ClosedRange<UInt64> {
            repo.versions["root"] = version
            try repo.publishRoot()
        }
        var configuration = UpdaterConfiguration()
        configuration.maxRootRotations = 2
        try await repo.updater(client, configuration: configuration).refresh()
        #expect(trustedVersion(client, "root") == 3)
        try await repo.refresh(client)
        #expect(trustedVersion(client, "root") == 4)
    }

    @Test("The libcurl fetcher: file:// bytes, a missing file is not found, a file over the limit is too large")
    func curlFetcher() async throws {
        let dir = temporaryDirectory("curl")
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: dir + "/ten.json"))
        let fetcher = CurlTUFFetcher()
        #expect(try await fetcher.fetch("file://\(dir)/ten.json", maxLength: 10) == .bytes(Array("0123456789".utf8)))
        #expect(try await fetcher.fetch("file://\(dir)/missing.json", maxLength: 10) == .notFound)
        await #expect(throws: TUFError.tooLarge(url: "file://\(dir)/ten.json", limit: 9)) {
            try await fetcher.fetch("file://\(dir)/ten.json", maxLength: 9)
        }
    }
}
