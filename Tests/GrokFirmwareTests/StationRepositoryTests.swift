import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTestSupport
import GrokTUF
import Testing

/// A fleet owner's repository (made with the publisher, one Ed25519 key per role) served
/// from a directory, and a station's state directory.
final class FleetRepository {
    /// Holds every directory below; removed with the repository.
    let scratch = TemporaryDirectory("fleet-repository")
    let work: String
    let served: String
    let state: String
    let rootFile: String
    let keys: [String: TUFSigningKey]
    let repository: TUFRepository
    let now = GrokTUF.UTCTime(iso8601: "2026-12-01T00:00:00Z")!

    init() throws {
        work = scratch.directory("owner")
        served = scratch.directory("served")
        state = scratch.directory("station") + "/state"
        var keys: [String: TUFSigningKey] = [:]
        for role in ["root", "timestamp", "snapshot", "targets", "release", "development"] { keys[role] = try .ed25519() }
        self.keys = keys
        func set(_ role: String) -> TUFRepository.RoleKeySet {
            TUFRepository.RoleKeySet(keys: [(keys[role]!.publicKeyJSON, keys[role]!.keyID)], threshold: 1)
        }
        repository = try TUFRepository.create(
            at: work, root: set("root"), timestamp: set("timestamp"), snapshot: set("snapshot"), targets: set("targets"),
            channels: [("release", set("release")), ("development", set("development"))], now: now)
        rootFile = scratch.directory("etc") + "/root.json"
        for role in ["root", "targets", "release", "development"] { try repository.sign(role: role, with: keys[role]!) }
        try publish()
        try writeFile(rootFile, readFile(served + "/metadata/1.root.json"))
    }

    /// Lists a small `.ugif` of `version` (its name `GR-1_MAJ-MIN-BUILD_NAME.ugif`) in `channel`; returns its path and bytes.
    @discardableResult
    func add(version: String, name: String = "test", seed: UInt64 = 1, channel: String = "release") throws -> (path: String, bytes: [UInt8]) {
        let (file, bytes) = try makeUgif(version: version, name: name, seed: seed)
        try add(ugif: bytes, as: file, description: demoDescription(version: version), channel: channel)
        return (channel + "/" + file, bytes)
    }

    func publish(to directory: String? = nil) throws {
        try repository.timestamp(with: [keys["timestamp"]!], snapshotKeys: [keys["snapshot"]!], now: now)
        try repository.publish(to: directory ?? served, now: now)
    }

    func station(_ url: String? = nil) -> StationRepository {
        let when = now
        return StationRepository(stateDirectory: state, trustedRootFile: rootFile, repositoryURL: url ?? "file://" + served,
                                 fetcher: LocalFileFetcher(), clock: { when })
    }

    func trustedVersion(_ name: String) -> Int64? {
        guard let data = FileManager.default.contents(atPath: state + "/metadata/\(name).json"),
              let top = try? JSONParser.parse(Array(data)).object
        else { return nil }
        return top["signed"]?.object?["version"]?.int64
    }
}

@Suite("Firmware and regions as TUF targets on a station")
struct StationRepositoryTests {
    @Test("the trust root is the explicit file, else the per-user config, else /etc/grokctl: never the current directory")
    func trustRootLocations() {
        let everything: (String) -> Bool = { _ in true }
        #expect(StationPaths.trustedRoot(explicit: "stick/root.json", environment: [:], exists: everything) == "stick/root.json")
        #expect(StationPaths.trustedRoot(explicit: nil, environment: ["XDG_CONFIG_HOME": "/home/t/.cfg"], exists: everything)
            == "/home/t/.cfg/grokctl/root.json")
        #expect(StationPaths.trustedRoot(explicit: nil, environment: ["HOME": "/home/t"], exists: everything) == "/home/t/.config/grokctl/root.json")
        // Relative values (a USB stick's folder) are ignored.
        #expect(StationPaths.trustedRoot(explicit: nil, environment: ["XDG_CONFIG_HOME": "profiles", "HOME": "."], exists: everything)
            == "/etc/grokctl/root.json")
        #expect(StationPaths.trustedRoot(explicit: nil, environment: ["HOME": "/home/t"], exists: { $0 == "/etc/grokctl/root.json" })
            == "/etc/grokctl/root.json")
        #expect(StationPaths.trustedRoot(explicit: nil, environment: [:], exists: { _ in false }) == nil)
        #expect(StationPaths.stateDirectory(explicit: nil, environment: ["HOME": "/home/t"], isRoot: true) == "/var/lib/grokctl")
        #expect(StationPaths.stateDirectory(explicit: nil, environment: ["XDG_STATE_HOME": "/s"], isRoot: false) == "/s/grokctl")
        #expect(StationPaths.stateDirectory(explicit: nil, environment: ["HOME": "rel"], isRoot: false) == nil)
    }

    @Test("a station lists each channel's images and downloads a verified image by hash")
    func listAndDownload() async throws {
        let fleet = try FleetRepository()
        let image = try fleet.add(version: "1.9.0")
        try fleet.add(version: "2.0.0", seed: 9, channel: "development")
        try fleet.publish()
        let update = try await fleet.station().update(channels: ["release", "development"], download: [image.path])
        #expect(update.updates["release"]?.map(\.metadata.version) == [v("1.9.0")])
        #expect(update.updates["development"]?.count == 1)
        let file = try #require(update.files[image.path])
        #expect(try readFile(file) == image.bytes)
        #expect(file == fleet.state + "/images/" + SHA256.hash(image.bytes).hex)
        #expect(fleet.trustedVersion("timestamp") == 2)
        // A later update that lists one channel keeps the other's trusted file.
        _ = try await fleet.station().update(channels: ["release"])
        #expect(fleet.trustedVersion("development") == 2)
    }

    @Test("a flipped image byte is refused: no image is kept, and the metadata the refresh verified is committed (TUF persists each verified role before fetching a target); a failed refresh commits nothing")
    func failedDownloadCommitsTheVerifiedMetadataOnly() async throws {
        let fleet = try FleetRepository()
        _ = try await fleet.station().update(channels: ["release"])
        let before = snapshot(fleet.state + "/metadata")
        let timestampBefore = try #require(fleet.trustedVersion("timestamp"))
        let image = try fleet.add(version: "1.9.0", name: "a")
        try fleet.publish()
        let served = fleet.served + "/targets/release/" + SHA256.hash(image.bytes).hex + ".GR-1_1-9-0_a.ugif"
        var bytes = try readFile(served)
        bytes[40] ^= 1
        try writeFile(served, bytes)
        await #expect(throws: TUFError.self) { _ = try await fleet.station().update(channels: ["release"], download: [image.path]) }
        #expect(fleet.trustedVersion("timestamp") == timestampBefore + 1, "the verified timestamp was not committed")
        #expect(fleet.trustedVersion("release") != nil && snapshot(fleet.state + "/metadata") != before)
        #expect(listing(fleet.state + "/images").isEmpty)
        #expect(!listing(fleet.state).contains { $0.hasPrefix(".staging") })

        // A refresh that fails (a timestamp whose signature no longer verifies) commits nothing.
        let committed = snapshot(fleet.state + "/metadata")
        try fleet.add(version: "1.9.1", name: "b")
        try fleet.publish()
        let timestamp = fleet.served + "/metadata/timestamp.json"
        var signed = try readFile(timestamp)
        let at = try #require(signed.lastIndex(of: UInt8(ascii: "a")))
        signed[at] = UInt8(ascii: "b")
        try writeFile(timestamp, signed)
        await #expect(throws: TUFError.self) { _ = try await fleet.station().update(channels: ["release"]) }
        #expect(snapshot(fleet.state + "/metadata") == committed)
    }

    @Test("two concurrent updates, one from a stale mirror, never lower the trusted versions")
    func concurrentUpdatesKeepTheFloor() async throws {
        let fleet = try FleetRepository()
        let stale = fleet.scratch.directory("stale")
        for round in 0..<6 {
            // The stale mirror keeps the previous publication, the real server gets a new one.
            try? FileManager.default.removeItem(atPath: stale)
            try FileManager.default.copyItem(atPath: fleet.served, toPath: stale)
            try fleet.add(version: "1.9.\(round)", name: "r\(round)", seed: UInt64(round))
            try fleet.publish()
            let fresh = fleet.station(), old = fleet.station("file://" + stale)
            async let a: StationUpdate? = try? fresh.update(channels: ["release"])
            async let b: StationUpdate? = try? old.update(channels: ["release"])
            _ = await (a, b)
            #expect(fleet.trustedVersion("timestamp") == Int64(round + 2), "round \(round)")
        }
    }

    @Test("an emptied or cut cached root is replaced by the station's trust root and the chain walked again (to root 2 here); when the trust root cannot replace it, the error names the cached file and the trust root")
    func damagedCachedRootIsReseededFromTheTrustRoot() async throws {
        let fleet = try FleetRepository()
        // Root 2 (a new timestamp key), published: the station walks 1 -> 2 and caches 2.
        let timestampKey = try TUFSigningKey.ed25519()
        try fleet.repository.rotate(role: "timestamp", to: .init(keys: [(timestampKey.publicKeyJSON, timestampKey.keyID)], threshold: 1),
                                    now: fleet.now)
        try fleet.repository.sign(role: "root", with: fleet.keys["root"]!)
        try fleet.repository.timestamp(with: [timestampKey], snapshotKeys: [fleet.keys["snapshot"]!], now: fleet.now)
        try fleet.repository.publish(to: fleet.served, now: fleet.now)
        _ = try await fleet.station().update(channels: ["release"])
        #expect(fleet.trustedVersion("root") == 2)
        let cached = fleet.state + "/metadata/root.json"
        let whole = try readFile(cached)
        for damage in [[], Array(whole.prefix(whole.count / 2)), Array("{}".utf8)] {
            try writeFile(cached, damage)
            let update = try await fleet.station().update(channels: ["release"])
            #expect(update.versions["root"] == 2)
            #expect(try readFile(cached) == whole)
        }
        // The trust root gone too: the error names the cached root and the trust root.
        try writeFile(cached, [])
        try writeFile(fleet.rootFile, [])
        await #expect(throws: TUFError.storage(path: cached, detail: ErrorDetail("cached_root_damaged", [fleet.rootFile]))) {
            _ = try await fleet.station().update(channels: ["release"])
        }
        #expect(try readFile(cached) == [])
    }

    @Test("a symbolic link or a file grokctl did not make in the state directory is refused")
    func stateDirectoryRefusesForeignFiles() async throws {
        let fleet = try FleetRepository()
        _ = try await fleet.station().update(channels: ["release"])
        let metadata = fleet.state + "/metadata"
        try FileManager.default.createSymbolicLink(atPath: metadata + "/release.json.bak", withDestinationPath: "/etc/passwd")
        await #expect(throws: TUFError.self) { _ = try await fleet.station().update(channels: ["release"]) }
        try FileManager.default.removeItem(atPath: metadata + "/release.json.bak")
        try writeFile(metadata + "/planted.txt", Array("{}".utf8))
        await #expect(throws: TUFError.self) { _ = try await fleet.station().update(channels: ["release"]) }
        try FileManager.default.removeItem(atPath: metadata + "/planted.txt")
        // The images directory as a link to somewhere else.
        try FileManager.default.removeItem(atPath: fleet.state + "/images")
        let elsewhere = fleet.scratch.directory("elsewhere")
        try FileManager.default.createSymbolicLink(atPath: fleet.state + "/images", withDestinationPath: elsewhere)
        await #expect(throws: TUFError.self) { _ = try await fleet.station().update(channels: ["release"]) }
    }
}

/// `{...}` from pairs.
func obj(_ pairs: (String, JSON)...) -> JSON { .object(JSONObject(pairs)!) }

/// A small `.ugif` of `version` named `GR-1_MAJ-MIN-BUILD_NAME.ugif`: a 256-byte loader and a
/// 2 KiB application of deterministic bytes.
func makeUgif(version: String, name: String = "test", seed: UInt64 = 1) throws -> (name: String, bytes: [UInt8]) {
    let version = v(version)
    let image = try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: version.major, minor: version.minor, build: UInt8(version.build)),
                              date: "2026-12-01", loader: UgifSection(address: 0, bytes: pattern(256, seed: seed)),
                              reader: UgifSection(address: 0x1000, bytes: pattern(2048, seed: seed + 1)))
    return (image.fileName(name: name), Array(image.encoded().utf8))
}
