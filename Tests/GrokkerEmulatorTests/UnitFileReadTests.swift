import Foundation
import GrokTestSupport
import Testing

@testable import GrokkerEmulator

/// `UnitFile.readAll`: whole files, bounded, read at their size.
@Suite("UnitFile.readAll")
struct UnitFileReadTests {

    @Test("reads every byte of files from empty to the limit, and refuses one byte more", arguments: [0, 1, 2047, 4096, 65_537])
    func exactBytes(size: Int) throws {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
        let scratch = TemporaryDirectory("readall")
        let path = scratch.file("file")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        #expect(try UnitFile.readAll(path, limit: size) == bytes)
        #expect(try UnitFile.readAll(path, limit: 16 << 20) == bytes)
        if size > 0 {
            #expect(throws: UnitFile.Failure.tooLarge(size: size)) { try UnitFile.readAll(path, limit: size - 1) }
        }
    }

    @Test("a missing file is nil")
    func missing() throws {
        #expect(try UnitFile.readAll("/nonexistent-\(UUID().uuidString)", limit: 10) == nil)
    }

    @Test("a file whose size fstat does not tell (a /proc file) is still read whole, up to the limit")
    func growing() throws {
        // /proc files report size 0 and then have bytes: the buffer must grow past fstat's size.
        let bytes = try #require(try UnitFile.readAll("/proc/self/status", limit: 1 << 20))
        #expect(String(decoding: bytes, as: UTF8.self).contains("VmHWM"))
        #expect(throws: UnitFile.Failure.self) { try UnitFile.readAll("/proc/self/status", limit: 16) }
    }
}
