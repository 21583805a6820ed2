import Foundation
import GrokBasics
import GrokFleet
import GrokkerEmulator
import GrokProtocol
import Testing
import UGrokIt

/// The emulated bench's ports: Grokkers unplugged, moved to another port and plugged back,
/// seen by the ports the command line opens as a technician's hub of sound cards would show them.
@Suite("Bench ports")
struct BenchPortsTests {
    static func code(_ error: (any Error)?) -> String? { (error as? any CodedError)?.code }

    @Test("a bench that never changed: port N holds Grokker N, and no ports file is written")
    func defaults() throws {
        let bench = FleetBench()
        try bench.prepare(2, serial: 40_000_002)
        let ports = Bench(directory: bench.path)
        #expect(try ports.content(ofPort: 2) == .unit(2) && ports.content(ofPort: 40) == .unit(40))
        #expect(try ports.emulatedDevices() == [2])
        #expect(!FileManager.default.fileExists(atPath: ports.portsFile))
        try ports.plug(port: 2, unit: 2)  // already there: nothing to do
        #expect(!FileManager.default.fileExists(atPath: ports.portsFile))
    }

    @Test("an unplugged port is an empty jack: info says not plugged in, runs leave it out; plugged back, the same Grokker answers")
    func unplugAndBack() throws {
        let bench = FleetBench()
        for i in 0...1 { try bench.prepare(i, serial: 40_000_010 + UInt32(i)) }
        let ports = Bench(directory: bench.path)
        try ports.unplug(port: 1)
        #expect(try ports.content(ofPort: 1) == .empty && ports.emulatedDevices() == [0])
        let info = InfoJob(access: DeviceJobTests.access(bench))
        #expect(Self.code(info.query(.emulated(index: 1)).error) == "reader_not_plugged_in")
        try ports.plug(port: 1, unit: 1)
        #expect(!FileManager.default.fileExists(atPath: ports.portsFile), "back to the default: the file goes")
        #expect(info.query(.emulated(index: 1)).identity?.info.serialNumber == 40_000_011)
    }

    @Test("a Grokker moved to another port is the same Grokker there; a taken port and a Grokker plugged elsewhere are refused, naming what to unplug")
    func moveToAnotherPort() throws {
        let bench = FleetBench()
        for i in 3...5 { try bench.prepare(i, serial: 40_000_020 + UInt32(i)) }
        let ports = Bench(directory: bench.path)
        #expect(throws: FleetError.benchPortOccupied(port: "sim:5", unit: "5")) { try ports.plug(port: 5, unit: 3) }
        try ports.unplug(port: 5)
        #expect(throws: FleetError.benchUnitPluggedElsewhere(unit: "3", port: "sim:3")) { try ports.plug(port: 5, unit: 3) }
        try ports.unplug(port: 3)
        try ports.plug(port: 5, unit: 3)
        #expect(try ports.content(ofPort: 5) == .unit(3) && ports.port(holding: 3) == 5 && ports.port(holding: 5) == nil)
        #expect(try ports.emulatedDevices() == [4, 5])
        let info = InfoJob(access: DeviceJobTests.access(bench))
        #expect(info.query(.emulated(index: 5)).identity?.info.serialNumber == 40_000_023)
        #expect(Bench(directory: bench.path).unit(5).serial == "40000023")
        #expect(throws: FleetError.deviceOutOfRange(index: "64", spec: "sim:64")) { try ports.unplug(port: 64) }
        // A port whose own Grokker was never used is free: Grokker 4 moves to sim:20, and
        // Grokker 21, never used, is made when plugged into sim:21.
        try ports.unplug(port: 4)
        try ports.plug(port: 20, unit: 4)
        #expect(try ports.content(ofPort: 20) == .unit(4))
        try ports.plug(port: 21, unit: 21)
        #expect(FileManager.default.fileExists(atPath: ports.stateDirectory(for: 21)))
        #expect(try ports.emulatedDevices().contains(21))
    }

    @Test("a Grokker pulled out during a session: the host sees the jack empty at once, not after its retries")
    func pulledOutMidSession() throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 40_000_030)
        let ports = Bench(directory: bench.path)
        let access = DeviceJobTests.access(bench)
        let session = try access.session(.emulated(index: 0))
        defer { session.close() }
        _ = try access.connect(session, .emulated(index: 0))
        #expect(session.port.jackPlugged == true)
        try ports.unplug(port: 0)
        let before = session.elapsedMilliseconds
        #expect(throws: ReaderError.self) { _ = try session.call(.getVersion(VendorVersionRequest())) }
        #expect(session.port.jackPlugged == false)
        // Noticed within a quarter of a second of audio; the request fails on its tries
        // without a unit behind the cable, never reaching it.
        #expect(session.elapsedMilliseconds - before < 15_000)
    }

    @Test("a ports file that is not one is a clear error naming it, and nothing is changed")
    func brokenFile() throws {
        let bench = FleetBench()
        let ports = Bench(directory: bench.path)
        try FileManager.default.createDirectory(atPath: bench.path, withIntermediateDirectories: true)
        try Data("{\"format\": 1, \"ports\": {\"x\": 2}}".utf8).write(to: URL(fileURLWithPath: ports.portsFile))
        #expect(throws: FleetError.benchPortsUnreadable(path: ports.portsFile, detail: "not_a_ports_file")) { try ports.content(ofPort: 0) }
        #expect(throws: FleetError.benchPortsUnreadable(path: ports.portsFile, detail: "not_a_ports_file")) { try ports.unplug(port: 0) }
        #expect(try String(contentsOfFile: ports.portsFile, encoding: .utf8).contains("\"x\""))
    }
}
