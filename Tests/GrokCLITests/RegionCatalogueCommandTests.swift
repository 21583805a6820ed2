import Foundation
import GrokFirmware
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

@Suite("grokctl region catalogue")
struct RegionCatalogueCommandTests {
    @Test("make writes a checked catalogue of the 22 regions; update needs --repository; region set with the demo channel's catalogue sets the Grokker")
    func makeUpdateAndSet() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let made = try runBinary(["--json", "region", "catalogue", "make", "--version", "4", "--expires", "2099-01-01T00:00:00Z",
                                  "--revisions", "2,3", "--output", dir + "/regions.json"])
        #expect(made.status == 0, "\(made.standardError)")
        let catalogue = try RegionCatalogue.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/regions.json"))), file: "r")
        #expect(catalogue.version == 4 && catalogue.regions.count == 22)
        #expect(catalogue.regions(hardwareRevision: 3, serial: 1).count == 22 && catalogue.regions(hardwareRevision: 1, serial: 1).isEmpty)
        let bare = try runBinary(["region", "catalogue", "update"])
        #expect(bare.status == 64 && bare.standardError.contains("--repository"))

        let channel = checkout + "/firmware/demo-channel"
        let environment = ["HOME": dir, "XDG_CONFIG_HOME": dir + "/config"]
        let set = try runBinary(["--bench", dir + "/bench", "--json", "region", "set", "etsi", "--device", "sim:0",
                                 "--repository", "file://" + channel, "--trusted-root", channel + "/root.json", "--state", dir + "/state"],
                                environment: environment)
        #expect(set.status == 0, "\(set.standardOutput)\(set.standardError)")
        #expect(try jsonObjects(set.standardOutput).first?["region_code"] as? String == "etsi")
        let info = try runBinary(["--bench", dir + "/bench", "--json", "info", "--device", "sim:0"], environment: environment)
        #expect(try jsonObjects(info.standardOutput).first?["region"] as? String == "ETSI (EU)", "\(info.standardOutput)")
    }

    @Test("catalogue list gives either catalogue as SetRegion carries it: ours with Russia on both bands, the vendor's 22 entries")
    func listEitherCatalogue() throws {
        let ours = try runBinary(["--json", "region", "catalogue", "list"])
        #expect(ours.status == 0, "\(ours.standardError)")
        let oursRows = try jsonObjects(ours.standardOutput)
        #expect(oursRows.count == 23)
        let russia = oursRows.filter { $0["code"] as? String == "russia" }
        #expect(russia.compactMap { $0["band_mhz"] as? Int } == [860, 900])
        let vendor = try runBinary(["--json", "region", "catalogue", "list", "--catalogue", "vendor"])
        let vendorRows = try jsonObjects(vendor.standardOutput)
        #expect(vendorRows.count == 22)
        #expect(vendorRows.allSatisfy { $0["max_dwell_ms"] as? Int == 400 && $0["revision"] as? Int == 0 })
        #expect(vendorRows[17]["channels_khz"] as? [Int] == (0..<10).map { 916_250 + 500 * $0 })
        let bad = try runBinary(["region", "set", "fcc", "--device", "sim:0", "--catalogue", "theirs"])
        #expect(bad.status == 64 && bad.standardError.contains("theirs"), "\(bad.standardError)")
    }

    @Test("bad options are usage errors naming the value")
    func badOptions() {
        let result = try? runBinary(["region", "catalogue", "make", "--version", "zero", "--expires", "soon", "--output", "x.json"])
        #expect(result?.status == 64)
        #expect(result?.standardError.contains("zero") == true)
    }
}
