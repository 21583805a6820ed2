import Foundation
import GrokAudio
import GrokBasics
import GrokProtocol
import GrokTestSupport
import Testing

@testable import GrokkerEmulator

@Suite("Temporary files left by killed processes")
struct TemporaryFileTests {
    @Test("opening a unit's directory removes state.json temp files of dead writers and keeps a live writer's")
    func staleStateTemporaries() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        var rng = SplitMix64(seed: 11)
        _ = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
        let dead = try exitedProcessID()
        let stale = temp.file("unit/state.json.tmp-\(dead)-12345")
        let live = temp.file("unit/state.json.tmp-\(getpid())-777")
        let other = temp.file("unit/notes.txt.tmp-\(dead)-1")
        for file in [stale, live, other] { #expect(FileManager.default.createFile(atPath: file, contents: Data("{".utf8))) }
        // Held by a writer whose process id looks dead (another PID namespace): kept.
        let lockedByOther = temp.file("unit/state.json.tmp-\(dead)-999")
        #expect(FileManager.default.createFile(atPath: lockedByOther, contents: Data()))
        let fd = open(lockedByOther, O_RDONLY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)

        let reopened = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: lockedByOther))
        #expect(FileManager.default.fileExists(atPath: other), "only the state file's temporaries are touched")
        // A save still works and leaves only the live writer's file behind.
        try reopened.update { $0.batteryPercent = 42 }
        let left = try FileManager.default.contentsOfDirectory(atPath: temp.file("unit")).filter { $0.contains(".tmp-") }.sorted()
        #expect(left == [URL(fileURLWithPath: lockedByOther).lastPathComponent, URL(fileURLWithPath: live).lastPathComponent,
                         URL(fileURLWithPath: other).lastPathComponent].sorted())
    }

    @Test("opening a unit removes a half-made flash.bin temporary of a dead process, keeps a live one's, and makes the flash")
    func staleFactoryFlash() throws {
        let temp = TemporaryDirectory("grok-emulator-tests")
        defer { temp.remove() }
        let dead = try exitedProcessID()
        let directory = temp.file("bench/sim-0")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let stale = directory + "/flash.bin.tmp-\(dead)-1"
        let live = directory + "/flash.bin.tmp-\(getppid())-2"
        for file in [stale, live] { #expect(FileManager.default.createFile(atPath: file, contents: Data(repeating: 0xFF, count: 100))) }
        let unit = try EmulatedGrokker(benchDirectory: temp.file("bench"), index: 0)
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: live))
        let flash = try #require(FileManager.default.contents(atPath: directory + "/flash.bin"))
        #expect(flash.count == VendorLoader.flashBytes)
        #expect(unit.softwareType == .application)
    }
}
