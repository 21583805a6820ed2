import Foundation
import GrokTestSupport
import GrokFirmware
import GrokTUF
import UGrokIt
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// `grokctl repo`: a fleet owner's repository made, signed in turn, timestamped and
/// published by the command line alone, with keys from openssl: what the binary shows
/// (exit codes, `--json`, languages).
extension CLI {
    @Suite("grokctl repo")
    struct RepoCommandTests {
        let directory: String
        let keys: String

        init() throws {
            directory = TemporaryDirectory.untilExit("repo-cli")
            keys = directory + "/keys"
            try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        }

        /// `openssl genpkey` into `keys/NAME.pem`, and its public half as `NAME.pub`.
        @discardableResult
        func key(_ name: String, _ algorithm: [String] = ["-algorithm", "ed25519"]) throws -> String {
            try OpenSSLTool.keyPair(name, in: keys, algorithm: algorithm)
        }

        func grokctl(_ arguments: [String], language: String = "en") -> RunResult {
            runInProcess(arguments + ["--lang", language])
        }

        /// A small .ugif, firmware 1.9.9 (`GR-1_1-9-9_test.ugif`).
        func image() throws -> [UInt8] {
            let ugif = try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 9, build: 9), date: "2025-01-01",
                                     loader: nil, reader: UgifSection(address: 0x4000, bytes: (0..<200).map { UInt8($0) }))
            return Array(ugif.encoded().utf8)
        }

        /// Its description, as `firmware pack --custom-output` writes it.
        func custom() throws -> [UInt8] {
            let metadata = FirmwareReleaseMetadata(
                version: FirmwareVersion("1.9.9")!, hardwareType: .grokker1, hardwareRevisions: [1, 2],
                appliesTo: [try VersionRange(min: FirmwareVersion("1.0.0")!, max: FirmwareVersion("1.9.8")!)],
                buildDate: Date(timeIntervalSince1970: 1_735_689_600), readerProtocol: 20, notes: ["en": "Faster."])
            return JSONWriter.encode(metadata.custom())
        }

        /// Makes, signs and publishes a repository with the CLI; returns the served directory.
        func makeRepository() throws -> String {
            let repo = directory + "/work", served = directory + "/www"
            try key("alice"); try key("bob", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
            try key("targets"); try key("snapshot", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
            try key("timestamp"); try key("release"); try key("ci")
            var result = grokctl([
                "repo", "init", "--repo", repo, "--root-key", keys + "/alice.pub", "--root-key", keys + "/bob.pub", "--root-threshold", "2",
                "--targets-key", keys + "/targets.pub", "--snapshot-key", keys + "/snapshot.pub", "--timestamp-key", keys + "/timestamp.pub",
                "--channel-key", "release=" + keys + "/release.pub", "--channel-key", "development=" + keys + "/ci.pub",
                "--expires", "timestamp=2d",
            ])
            #expect(result.status == 0, "\(result.standardError)")
            let file = directory + "/GR-1_1-9-9_test.ugif"
            try Data(try image()).write(to: URL(fileURLWithPath: file))
            try Data(try custom()).write(to: URL(fileURLWithPath: directory + "/custom.json"))
            // A .ugif needs its description.
            result = grokctl(["repo", "add", "--repo", repo, "--channel", "release", file, "--json"])
            #expect(result.status != 0 && result.standardError.contains("firmware_invalid_input"), "\(result.standardError)")
            result = grokctl(["repo", "add", "--repo", repo, "--channel", "release", file, "--custom", directory + "/custom.json",
                              "--notes", "de=Schneller."])
            #expect(result.status == 0, "\(result.standardError)")
            for (role, key) in [("root", "alice"), ("targets", "targets"), ("release", "release"), ("development", "ci")] {
                result = grokctl(["repo", "sign", "--repo", repo, "--role", role, "--key", keys + "/\(key).pem"])
                #expect(result.status == 0, "\(result.standardError)")
            }
            // One root signature of the two needed: publishing is refused, and status says why.
            result = grokctl(["repo", "status", "--repo", repo, "--json"])
            #expect(result.standardOutput.contains("\"role\":\"root\"") && result.standardOutput.contains("\"signed\":false"))
            result = grokctl(["repo", "timestamp", "--repo", repo, "--key", keys + "/timestamp.pem",
                              "--snapshot-key", keys + "/snapshot.pem", "--publish", served])
            #expect(result.status == 1)
            #expect(!FileManager.default.fileExists(atPath: served + "/metadata/timestamp.json"))
            // Bob signs in turn; now it publishes.
            result = grokctl(["repo", "sign", "--repo", repo, "--role", "root", "--key", keys + "/bob.pem"])
            #expect(result.status == 0, "\(result.standardError)")
            result = grokctl(["repo", "publish", "--repo", repo, "--output", served, "--json"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("metadata/timestamp.json"))
            return served
        }

        // What the repository holds and who accepts it: GrokPublishTests' PublisherRepositoryTests.
        @Test("repo init, add, sign, status, timestamp and publish: exit codes and their --json forms")
        func exitCodesAndJSON() throws {
            _ = try makeRepository()
        }

        @Test("repo help and errors are localized")
        func localized() throws {
            let help = grokctl(["repo", "--help"], language: "de")
            #expect(help.standardOutput.contains("Schlüssel"))
            let repo = directory + "/work"
            try key("a"); try key("b")
            let result = grokctl([
                "repo", "init", "--repo", repo, "--root-key", keys + "/a.pub", "--root-threshold", "2", "--targets-key", keys + "/a.pub",
                "--snapshot-key", keys + "/a.pub", "--timestamp-key", keys + "/a.pub", "--channel-key", "release=" + keys + "/b.pub",
            ], language: "fr")
            #expect(result.status == 1)
            #expect(result.standardError.contains("Le dépôt ne peut pas être modifié"), "\(result.standardError)")
        }
    }
}
