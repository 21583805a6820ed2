import Foundation
import GrokBasics
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTestSupport
import GrokTUF
import Testing

@testable import GrokPublish

/// A fleet owner's repository made, signed in turn, timestamped and published through the
/// publisher's library alone, with keys from openssl; accepted by our client and by python-tuf's.
@Suite("The publisher's repository")
struct PublisherRepositoryTests {
    let directory = TemporaryDirectory("publisher-repo")
    var keys: String { directory.path + "/keys" }

    /// `openssl genpkey` into `keys/NAME.pem`, and its public half as `NAME.pub`.
    func key(_ name: String, _ algorithm: [String] = ["-algorithm", "ed25519"]) throws {
        try OpenSSLTool.keyPair(name, in: keys, algorithm: algorithm)
    }

    /// A small .ugif, firmware 1.9.9 (`GR-1_1-9-9_test.ugif`).
    static func image() throws -> [UInt8] {
        let ugif = try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 9, build: 9), date: "2025-01-01",
                                 loader: nil, reader: UgifSection(address: 0x4000, bytes: (0..<200).map { UInt8($0) }))
        return Array(ugif.encoded().utf8)
    }

    /// Its description, as `firmware pack --custom-output` writes it.
    static func custom() throws -> [UInt8] {
        let metadata = FirmwareReleaseMetadata(
            version: FirmwareVersion("1.9.9")!, hardwareType: .grokker1, hardwareRevisions: [1, 2],
            appliesTo: [try VersionRange(min: FirmwareVersion("1.0.0")!, max: FirmwareVersion("1.9.8")!)],
            buildDate: Date(timeIntervalSince1970: 1_735_689_600), readerProtocol: 20, notes: ["en": "Faster."])
        return JSONWriter.encode(metadata.custom())
    }

    /// Makes, signs in turn and publishes a repository; returns the served directory.
    func makeRepository() throws -> String {
        let repo = directory.path + "/work", served = directory.path + "/www"
        try key("alice"); try key("bob", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        try key("targets"); try key("snapshot", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        try key("timestamp"); try key("release"); try key("ci")
        let repository = try PublisherRepository.create(
            at: repo, root: .init(files: [keys + "/alice.pub", keys + "/bob.pub"], threshold: 2),
            timestamp: .init(files: [keys + "/timestamp.pub"]), snapshot: .init(files: [keys + "/snapshot.pub"]),
            targets: .init(files: [keys + "/targets.pub"]),
            channels: [(name: "release", keys: .init(files: [keys + "/release.pub"])), (name: "development", keys: .init(files: [keys + "/ci.pub"]))],
            expiry: ["timestamp": 2 * 86_400])
        #expect(try repository.status().roles.map(\.role) == ["root", "targets", "release", "development", "snapshot", "timestamp"])
        let file = directory.path + "/GR-1_1-9-9_test.ugif"
        try Data(try Self.image()).write(to: URL(fileURLWithPath: file))
        try Data(try Self.custom()).write(to: URL(fileURLWithPath: directory.path + "/custom.json"))
        // A .ugif needs its description.
        #expect(throws: FirmwareError.invalidInput(file: file, detail: ErrorDetail("needs_custom"))) {
            _ = try repository.add(file, channel: "release")
        }
        let path = try repository.add(file, channel: "release", customFile: directory.path + "/custom.json", notes: ["de": "Schneller."])
        #expect(path == "release/GR-1_1-9-9_test.ugif")
        for (role, key) in [("root", "alice"), ("targets", "targets"), ("release", "release"), ("development", "ci")] {
            try repository.sign(role: role, keyFiles: [keys + "/\(key).pem"])
        }
        // One root signature of the two needed: publishing is refused, and the status says why.
        let root = try #require(try repository.status().roles.first { $0.role == "root" })
        #expect(!root.signed && root.signatures == 1 && root.threshold == 2)
        #expect(throws: TUFError.self) {
            try repository.timestamp(keyFiles: [keys + "/timestamp.pem"], snapshotKeyFiles: [keys + "/snapshot.pem"], publishTo: served)
        }
        #expect(!FileManager.default.fileExists(atPath: served + "/metadata/timestamp.json"))
        // Bob signs in turn (opening the repository again, as the next key holder does); now it publishes.
        try PublisherRepository(directory: repo).sign(role: "root", keyFiles: [keys + "/bob.pem"])
        #expect(try repository.status().roles.allSatisfy { $0.role == "snapshot" || $0.role == "timestamp" || $0.signed })
        let written = try repository.publish(to: served)
        #expect(written.contains { $0.hasSuffix("metadata/timestamp.json") }, "\(written)")
        return served
    }

    @Test("a repository made by the publisher is accepted by our client, with the image's description")
    func repositoryAccepted() async throws {
        let served = try makeRepository()
        let station = StationRepository(stateDirectory: directory.path + "/station", trustedRootFile: served + "/metadata/1.root.json",
                                        repositoryURL: "file://" + served, fetcher: LocalFileFetcher())
        let update = try await station.update(channels: ["release", "development"], download: ["release/GR-1_1-9-9_test.ugif"])
        let listing = try #require(update.updates["release"]?.first)
        #expect(listing.metadata.version == FirmwareVersion("1.9.9")! && listing.metadata.notes["de"] == "Schneller.")
        #expect(try Data(contentsOf: URL(fileURLWithPath: update.files["release/GR-1_1-9-9_test.ugif"]!)) == Data(try Self.image()))
    }

    @Test("published files are readable by a web server running as another user (0644, directories 0755, less the umask); the publisher's own files stay 0600")
    func publishedFilesAreWorldReadable() throws {
        let served = try makeRepository()
        // The process's umask, read without changing it (tests run in parallel).
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let mask = try #require(mode_t(umaskLine.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        func mode(_ path: String) throws -> mode_t {
            var info = stat()
            try #require(stat(path, &info) == 0, "\(path)")
            return info.st_mode & 0o777
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: served)
        #expect(files.contains("metadata/timestamp.json") && files.contains { $0.hasPrefix("targets/release/") })
        for file in files {
            let path = served + "/" + file
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            #expect(try mode(path) == (isDirectory.boolValue ? 0o755 : 0o644) & ~mask, "\(file)")
        }
        #expect(try mode(directory.path + "/work/repository.json") == 0o600 & ~mask)
    }

    @Test("python-tuf's own client accepts a repository made by the publisher, and refuses it once a package is changed")
    func pythonAcceptsRepository() throws {
        let script = packageRoot + "/Tests/GrokTUFTests/Interop/make_repository.py"
        var python: String? = ProcessInfo.processInfo.environment["GROK_TUF_PYTHON"]
        if python == nil, FileManager.default.isExecutableFile(atPath: packageRoot + "/.build/python-tuf/bin/python3") {
            python = packageRoot + "/.build/python-tuf/bin/python3"
        }
        let interpreter = try #require(python, "python-tuf is not installed: run scripts/setup.sh --test")
        let served = try makeRepository()
        func client() throws -> Int32 {
            try? FileManager.default.removeItem(atPath: served + "/python-client")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: interpreter)
            process.arguments = [script, served, "client", "release/GR-1_1-9-9_test.ugif"]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(try client() == 0)
        let original = try Self.image()
        let file = served + "/targets/release/" + SHA256.hash(original).hex + ".GR-1_1-9-9_test.ugif"
        var changed = original
        changed[10] ^= 1
        try Data(changed).write(to: URL(fileURLWithPath: file))
        #expect(try client() == 1)
    }

    @Test("a root threshold its keys cannot meet is refused; a missing key file is named")
    func refusals() throws {
        try key("a"); try key("b")
        let one = PublisherRepository.RoleKeys(files: [keys + "/a.pub"])
        #expect(throws: TUFError.self) {
            _ = try PublisherRepository.create(at: directory.path + "/work", root: .init(files: [keys + "/a.pub"], threshold: 2), timestamp: one,
                                               snapshot: one, targets: one, channels: [(name: "release", keys: .init(files: [keys + "/b.pub"]))],
                                               expiry: [:])
        }
        #expect(throws: TUFError.publisher(detail: ErrorDetail("unreadable_file", [keys + "/none.pem"]))) {
            _ = try PublisherKeys.signingKey(keys + "/none.pem")
        }
        #expect(throws: TUFError.self) { _ = try PublisherRepository(directory: directory.path) }
    }
}
