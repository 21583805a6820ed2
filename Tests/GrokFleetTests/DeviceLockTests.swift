import Foundation
import GrokFleet
import Testing

/// Lock files are opened without following links (issue 27, item 1): whoever can write the
/// lock directory cannot make a run truncate and rewrite another file through it.
@Suite("Lock files")
struct DeviceLockTests {
    @Test("a lock file replaced by a symbolic link is refused and its target left as it was",
          arguments: ["serial", "port"])
    func symbolicLinkIsRefused(_ kind: String) throws {
        let bench = FleetBench()
        try FileManager.default.createDirectory(atPath: bench.lockDirectory, withIntermediateDirectories: true)
        let victim = bench.path + "/victim.txt"
        try "keep me\n".write(toFile: victim, atomically: false, encoding: .utf8)
        let name = kind == "serial" ? "GK-0001.lock" : DeviceLock.portLockName("sim:0")
        try FileManager.default.createSymbolicLink(atPath: bench.lockDirectory + "/" + name, withDestinationPath: victim)

        #expect(throws: FleetError.self) {
            if kind == "serial" {
                _ = try DeviceLock.acquire(directory: bench.lockDirectory, serial: "GK-0001")
            } else {
                _ = try DeviceLock.acquire(directory: bench.lockDirectory, port: "sim:0")
            }
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me\n")
    }

    @Test("a FIFO in a lock file's place is refused without blocking or writing")
    func fifoIsRefused() throws {
        let bench = FleetBench()
        try FileManager.default.createDirectory(atPath: bench.lockDirectory, withIntermediateDirectories: true)
        #expect(mkfifo(bench.lockDirectory + "/GK-0002.lock", 0o644) == 0)
        #expect(throws: FleetError.self) { _ = try DeviceLock.acquire(directory: bench.lockDirectory, serial: "GK-0002") }
    }

    @Test("a plain lock is taken, held against a second taker, and free again once unlocked")
    func plainLock() throws {
        let bench = FleetBench()
        let first = try #require(try DeviceLock.acquire(directory: bench.lockDirectory, serial: "GK-0003"))
        #expect(try DeviceLock.acquire(directory: bench.lockDirectory, serial: "GK-0003") == nil)
        first.unlock()
        let again = try #require(try DeviceLock.acquire(directory: bench.lockDirectory, serial: "GK-0003"))
        again.unlock()
    }
}
