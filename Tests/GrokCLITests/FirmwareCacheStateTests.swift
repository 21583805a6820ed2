import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

@Suite("firmware list: what the cache holds")
struct FirmwareCacheStateTests {
    // That a download fetches a corrupt image again: GrokFleetTests' FirmwareQueryTests.
    @Test("a corrupt cached image is listed as corrupt (text and --json), not 'yes'")
    func corruptImageIsShownCorrupt() throws {
        let world = try FleetWorld(devices: 0)
        let download = try world.run(["firmware", "download"] + world.repository)
        #expect(download.status == 0, "\(download.standardError)")
        let images = world.tufState + "/images"
        let files = try FileManager.default.contentsOfDirectory(atPath: images).filter { !$0.hasPrefix(".") }
        let file = try #require(files.first)
        // The download says where the image went.
        #expect(download.standardOutput.contains(": " + images + "/" + file), "\(download.standardOutput)")
        var bytes = try #require(FileManager.default.contents(atPath: images + "/" + file))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: images + "/" + file))

        let list = try world.run(["firmware", "list"] + world.repository)
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.standardOutput.contains(text(.listCachedCorrupt, .en)), "\(list.standardOutput)")
        let json = try world.run(["firmware", "list", "--json"] + world.repository)
        let corrupt = json.standardOutput.split(separator: "\n").filter { $0.contains(file) || $0.contains("\"cache\":\"corrupt\"") }
        #expect(corrupt.contains { $0.contains("\"cache\":\"corrupt\"") && $0.contains("\"cached\":false") }, "\(json.standardOutput)")

    }
}
