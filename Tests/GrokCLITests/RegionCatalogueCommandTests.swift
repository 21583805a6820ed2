import Foundation
import Testing

@testable import GrokCLI

@Suite("grokctl region catalogue")
struct RegionCatalogueCommandTests {
    @Test("make, sign with an openssl key, publish and fetch into a cache; a tampered catalogue is refused and the cache kept")
    func lifecycle() throws {
        let world = try FirmwareWorld()
        let root = world.root
        var result = world.run(["region", "catalogue", "make", "--version", "3", "--expires", "2099-01-01T00:00:00Z",
                                "--revisions", "1,3", "--output", root + "/regions.json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("22"))
        result = world.run(["region", "catalogue", "sign", "--catalogue", root + "/regions.json", "--key", world.key,
                            "--output", root + "/regions.signed.json"])
        #expect(result.status == 0, "\(result.standardError)")
        result = world.run(["region", "catalogue", "publish", "--catalogue", root + "/regions.signed.json",
                            "--root", world.server, "--trusted-keys", world.keys])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: world.server + "/regions.json"))
        result = world.run(["--json", "region", "catalogue", "update", "--cache", world.cache, "--trusted-keys", world.keys,
                            "--server", "file://" + world.server])
        #expect(result.status == 0, "\(result.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        #expect(report?["version"] as? Int == 3)
        #expect(report?["regions"] as? Int == 22)
        let cached = try Data(contentsOf: URL(fileURLWithPath: world.cache + "/regions.json"))

        // A tampered catalogue: publishing refuses, fetching refuses, the cache keeps version 3.
        var text = try String(contentsOfFile: root + "/regions.signed.json", encoding: .utf8)
        let payloadStart = try #require(text.range(of: "\"payload\""))
        let index = text.index(payloadStart.upperBound, offsetBy: 12)
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        try text.write(toFile: root + "/tampered.json", atomically: true, encoding: .utf8)
        result = world.run(["--lang", "de", "region", "catalogue", "publish", "--catalogue", root + "/tampered.json",
                            "--root", root + "/other", "--trusted-keys", world.keys])
        #expect(result.status == 1)
        #expect(result.standardError.hasPrefix("Fehler:"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: root + "/other/regions.json"))
        try FileManager.default.copyItem(atPath: root + "/tampered.json", toPath: root + "/srv2-regions.json")
        try FileManager.default.createDirectory(atPath: root + "/srv2", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: root + "/srv2-regions.json", toPath: root + "/srv2/regions.json")
        result = world.run(["region", "catalogue", "update", "--cache", world.cache, "--trusted-keys", world.keys,
                            "--server", "file://" + root + "/srv2"])
        #expect(result.status == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: world.cache + "/regions.json")) == cached)
    }

    @Test("bad options are usage errors naming the value")
    func badOptions() {
        let result = try? runBinary(["region", "catalogue", "make", "--version", "zero", "--expires", "soon", "--output", "x.json"])
        #expect(result?.status == 64)
        #expect(result?.standardError.contains("zero") == true)
    }
}
