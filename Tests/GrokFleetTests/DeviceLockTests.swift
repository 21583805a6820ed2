import Foundation
import GrokAudio
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

    @Test("opening a held port waits the context's lockWait: refused as device_busy when the holder keeps it, opened when it lets go in time")
    func portWaitsItsLockWait() throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 0x0BAD_F00D)
        var context = DevicePortContext(bench: Bench(directory: bench.path), lockDirectory: bench.lockDirectory, lockWait: 0.1)
        let key = DevicePorts.portKey(.emulated(index: 0), context: context)
        let held = try #require(try DeviceLock.acquire(directory: bench.lockDirectory, port: key))
        do {
            _ = try DevicePorts.open(.emulated(index: 0), context: context)
            Issue.record("opened a port another process holds")
        } catch let error as FleetError {
            #expect(error.code == "device_busy", "\(error)")
        }
        // The holder lets go after 0.3 s, within a 10 s wait: the port opens.
        context.lockWait = 10
        let release = Thread { usleep(300_000); held.unlock() }
        release.start()
        let port = try DevicePorts.open(.emulated(index: 0), context: context)
        port.close()
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
