import Foundation
import GrokCrypto
import GrokFirmware
import GrokProtocol
import GrokTUF
import Testing
import UGrokIt

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// The shipped demo channel (scripts/make-demo-channel.sh) and its trust root.
private let demoChannel = checkout + "/firmware/demo-channel"

/// The `{"error": {...}}` object a `--json` run wrote to standard error.
private func cliError(_ text: String) -> [String: Any]? {
    jsonLines(text).compactMap { $0["error"] as? [String: Any] }.first
}

extension CLI {
    @Suite("Firmware through the TUF channel: pack, list, download, refusals")
    struct FirmwareChannelCommandTests {
        /// A station with its own state directory and no trust root installed anywhere.
        func station(_ arguments: [String], state: String, language: String = "en") throws -> RunResult {
            try runBinary(arguments + ["--state", state], environment: ["HOME": state, "XDG_CONFIG_HOME": state + "/config", "LANG": language])
        }

        // That the image is the committed one byte for byte: GrokPublishTests' FirmwarePackTests.
        @Test("firmware pack --json: the image's facts and the custom file; a name that disagrees is a coded error, nothing written")
        func packMakesTheDemoImage() throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try """
            {"hardware_type": 5, "hardware_revisions": [3], "version": "1.8.0", "build_date": "2026-12-01T00:00:00Z",
             "reader_protocol": 20, "applies_to": [{"min": "1.0.0", "max": "1.7.65535"}], "notes": {"en": "Demo."}}
            """.write(toFile: dir + "/desc.json", atomically: true, encoding: .utf8)
            let result = try runBinary([
                "firmware", "pack", "--hex", checkout + "/firmware/demo/grokker-app-1.8.0.hex",
                "--loader", checkout + "/firmware/demo/grokker-loader-1.0.0.hex", "--base", "0x08007000", "--reader-bytes", "61440",
                "--comment", "demo channel image. LOADER: grokker-loader-1.0.0.hex; READER: the first 61440 bytes",
                "--comment", "of grokker-app-1.8.0.hex (base 0x08007000: the 64 KiB application does not fit",
                "--comment", "the vendor format's 16-bit address space beside a loader)",
                "--description", dir + "/desc.json", "--output", dir + "/GR-1_1-8-0_demo.ugif", "--custom-output", dir + "/custom.json",
                "--json",
            ])
            #expect(result.status == 0, "\(result.standardError)")
            let committed = try Data(contentsOf: URL(fileURLWithPath: checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif"))
            let facts = try #require(jsonLines(result.standardOutput).first)
            #expect(facts["sha256"] as? String == SHA256.hash([UInt8](committed)).hex && facts["version"] as? String == "1.8.0")
            #expect((facts["custom"] as? [String: Any])?["kind"] as? String == "firmware")
            let custom = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/custom.json"))) as? [String: Any])
            #expect(custom["kind"] as? String == "firmware" && custom["hardware_revisions"] as? [Int] == [3])
            // A file name that does not say the description's version is refused, naming the file; nothing is written.
            let wrong = try runBinary(["firmware", "pack", "--hex", checkout + "/firmware/demo/grokker-loader-1.0.0.hex",
                                       "--description", dir + "/desc.json", "--output", dir + "/GR-1_1-9-0_demo.ugif", "--json"])
            #expect(wrong.status != 0)
            let error = try #require(cliError(wrong.standardError))
            #expect(error["code"] as? String == "firmware_invalid_input")
            #expect(!FileManager.default.fileExists(atPath: dir + "/GR-1_1-9-0_demo.ugif"))
        }

        // What list and download do: GrokFleetTests' FirmwareQueryTests; here, their --json fields.
        @Test("the shipped demo channel: list and download --json, and the region catalogue update")
        func demoChannelVerifies() throws {
            let state = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: state) }
            let common = ["--repository", "file://" + demoChannel, "--trusted-root", demoChannel + "/root.json", "--json"]
            let list = try station(["firmware", "list"] + common, state: state)
            #expect(list.status == 0, "\(list.standardError)")
            let rows = jsonLines(list.standardOutput)
            #expect(rows.map { $0["name"] as? String } == ["GR-1_1-8-0_demo.ugif"])
            #expect(rows.first?["version"] as? String == "1.8.0" && rows.first?["cached"] as? Bool == false)
            let download = try station(["firmware", "download", "--all"] + common, state: state)
            #expect(download.status == 0, "\(download.standardError)")
            let done = try #require(jsonLines(download.standardOutput).first)
            let committed = try Data(contentsOf: URL(fileURLWithPath: checkout + "/firmware/demo/GR-1_1-8-0_demo.ugif"))
            #expect(done["sha256"] as? String == SHA256.hash([UInt8](committed)).hex)
            #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(done["path"] as? String))) == committed)
            let again = try station(["firmware", "list"] + common, state: state)
            #expect(jsonLines(again.standardOutput).first?["cached"] as? Bool == true)
            let regions = try station(["region", "catalogue", "update"] + common, state: state)
            #expect(regions.status == 0, "\(regions.standardError)")
            let catalogue = try #require(jsonLines(regions.standardOutput).first)
            #expect(catalogue["version"] as? Int == 1 && catalogue["regions"] as? Int == 22)
        }

        @Test("firmware check and list judge an emulated Grokker (revision 3, 1.7.3) against the demo channel: UPGRADE")
        func checkAgainstDemoChannel() throws {
            let state = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: state) }
            let common = ["--repository", "file://" + demoChannel, "--trusted-root", demoChannel + "/root.json",
                          "--device", "sim:0", "--bench", state + "/bench", "--json"]
            let check = try station(["firmware", "check"] + common, state: state)
            #expect(check.status == 100, "\(check.standardError)")
            let report = try #require(jsonLines(check.standardOutput).first)
            #expect(report["running"] as? String == "1.7.3" && report["update_available"] as? Bool == true)
            let update = try #require(report["update"] as? [String: Any])
            #expect(update["name"] as? String == "GR-1_1-8-0_demo.ugif" && update["compatibility"] as? String == "UPGRADE")
            let list = try station(["firmware", "list"] + common, state: state)
            #expect((jsonLines(list.standardOutput).first?["compatibility"] as? [String: String])?["sim:0"] == "UPGRADE")
        }

        // A tampered image refused by its signed hash: GrokFleetTests' FirmwareQueryTests.

        @Test("plain http is refused without --allow-insecure-http, naming the URL, in the user's language")
        func httpRefused() throws {
            let state = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: state) }
            let url = "http://127.0.0.1:9/fleet"
            let json = try station(["firmware", "list", "--repository", url, "--trusted-root", demoChannel + "/root.json", "--json"], state: state)
            #expect(json.status != 0)
            let error = try #require(cliError(json.standardError))
            #expect(error["code"] as? String == "tuf_insecure_transport")
            let german = try station(["firmware", "list", "--repository", url, "--trusted-root", demoChannel + "/root.json", "--lang", "de"],
                                     state: state, language: "de")
            #expect(german.status != 0 && german.standardError.contains(url) && german.standardError.contains("--allow-insecure-http"))
        }

        @Test("no trust root installed: a clear error saying to give --trusted-root")
        func noTrustRoot() throws {
            let state = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: state) }
            guard !FileManager.default.fileExists(atPath: "/etc/grokctl/root.json") else { return }
            let result = try station(["firmware", "list", "--repository", "file://" + demoChannel, "--json"], state: state)
            #expect(result.status != 0)
            let error = try #require(cliError(result.standardError))
            #expect(error["code"] as? String == "firmware_no_trust_root")
            #expect((error["message"] as? String ?? "\(error)").contains("--trusted-root"))
            #expect((error["message"] as? String ?? "\(error)").contains(state + "/config/grokctl/root.json"))
            let spanish = try station(["firmware", "list", "--repository", "file://" + demoChannel, "--lang", "es"], state: state)
            #expect(spanish.standardError.contains("raíz de confianza") && spanish.standardError.contains("--trusted-root"))
        }
    }
}

/// The SDK's vendor-named channel calls on the shipped demo channel.
@Suite("UGrokIt: the vendor's firmware-channel calls on the TUF channel")
struct VendorChannelCallTests {
    @Test("loadUpdatesFromChannel, loadUpdate, firmwareCheckCompatibility and the reload on the demo channel")
    func vendorCallsOnDemoChannel() async throws {
        let state = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let station = StationRepository(stateDirectory: state + "/state", trustedRootFile: demoChannel + "/root.json",
                                        repositoryURL: "file://" + demoChannel, fetcher: LocalFileFetcher())
        let channel = FirmwareChannel(repository: station, name: "release")
        #expect(try await channel.reload() == 1)
        func reader(revision: UInt8, minor: UInt8) -> VendorReaderVersion {
            VendorReaderVersion(protocolVersion: 20, hardwareType: 5, hardwareRevision: revision, firmwareMajor: 1, firmwareMinor: minor,
                                firmwareBuild: 3, antennaType: 0, maxPowerByte: 0, minusMaxSensitivity: 0, volumeLevels: 0, deviceFlags: 0,
                                softwareType: 0, maxProgramBytes: 0, provisioningStatus: 0, internalId: 0, serialNumber: 77,
                                initStatus: 0, maxTones: 0, regionIndex: 0)
        }
        let updates = try await channel.loadUpdates(for: reader(revision: 3, minor: 7))
        #expect(updates.map(\.listing.name) == ["GR-1_1-8-0_demo.ugif"] && updates.first?.compatibility == .upgrade)
        #expect(try await channel.loadUpdates().first?.compatibility == nil)
        #expect(try await channel.checkCompatibility("GR-1_1-8-0_demo.ugif", reader: reader(revision: 2, minor: 7)) == .incompatible)
        let release = try await channel.loadUpdate("GR-1_1-8-0_demo.ugif")
        #expect(release.ugif.reader.bytes.count == 61_440 && release.compatibility(with: reader(revision: 3, minor: 7)) == .upgrade)
        await #expect(throws: FirmwareError.updateNotListed(channel: "release", name: "GR-1_9-9-9_x.ugif")) {
            _ = try await channel.checkCompatibility("GR-1_9-9-9_x.ugif", reader: reader(revision: 3, minor: 7))
        }
    }
}
