import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// A fresh bench directory, removed at the end.
final class TempBench {
    let path: String
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ugrokit-\(UUID().uuidString)").path
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A silent device: plugged in, never answers.
final class SilentPeer: CablePeer {
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        for i in output.indices { output[i] = 0 }
    }
}

struct Rig {
    let bench = TempBench()
    let grokker: EmulatedGrokker
    let cable: SimulatedCablePort
    let session: ReaderSession

    init(_ configuration: CableConfiguration = .clean, index: Int = 0, options: ReaderOptions = ReaderOptions()) throws {
        grokker = try EmulatedGrokker(benchDirectory: bench.path, index: index)
        cable = SimulatedCablePort(name: "sim:\(index)", sampleRate: 44_100, configuration: configuration, peer: grokker)
        session = ReaderSession(port: cable, options: options)
    }
}

@Suite("Reader session")
struct ReaderSessionTests {
    static let conditions: [(String, CableConfiguration)] = [
        ("SNR 15 dB", .symmetric(.noisy(snrDB: 15))),
        ("gain -20 dB", .symmetric(.quiet)),
        ("DC offset", .symmetric(.dcOffset)),
        ("inverted polarity", .symmetric(.inverted)),
        ("AC coupling + 4 kHz band limit", .symmetric(.phoneInput)),
        ("+500 ppm, 50 ppm drift", CableConfiguration(deviceClockPPM: 500, deviceClockDriftPPM: 50)),
        ("-500 ppm, 50 ppm drift", CableConfiguration(deviceClockPPM: -500, deviceClockDriftPPM: 50)),
        ("10 ms dropouts every second", .symmetric(.dropouts)),
    ]

    /// The acceptance figure: 1000 identify round trips, none lost, none wrong.
    @Test("1000 identify round trips through each impairment", arguments: 0..<8)
    func identifyRoundTrips(condition: Int) throws {
        let (name, configuration) = Self.conditions[condition]
        let rig = try Rig(configuration)
        let announced = try rig.session.connect()
        let expected = rig.grokker.handler.hardware.readerInfo(for: rig.grokker.handler.store.state)
        #expect(announced == expected, "\(name): the announcement")
        var wrong = 0, lost = 0
        for _ in 0..<1000 {
            do {
                if try rig.session.identify() != expected { wrong += 1 }
            } catch {
                lost += 1
            }
        }
        #expect(wrong == 0, "\(name)")
        #expect(lost == 0, "\(name)")
        let stats = rig.session.engine.statistics
        print("\(name): \(rig.session.engine.mode), retries \(stats.retries), crc \(stats.crcMismatches), header \(stats.internalCrcMismatches), skew \(stats.skewFactor)")
    }

    @Test("connecting reports the Grokker's identity within 250 ms of audio")
    func connectTime() throws {
        let rig = try Rig()
        #expect(rig.session.connectionState == .notConnected)
        let info = try rig.session.connect()
        #expect(rig.session.connectionState == .connected)
        #expect(info.hardwareType == .grokker1)
        #expect(info.region == nil)
        #expect(info.serialNumber == rig.grokker.handler.store.state.serialNumber)
        let ms = try #require(rig.session.connectMilliseconds)
        #expect(ms <= 250)
    }

    @Test("an unplugged jack is NOT_PLUGGED_IN, a silent device CANNOT_HANDSHAKE")
    func failures() throws {
        let rig = try Rig()
        rig.cable.plugged = false
        #expect(throws: ReaderError.notPluggedIn(port: "sim:0")) { try rig.session.connect() }

        let silent = SimulatedCablePort(name: "sim:9", sampleRate: 44_100, configuration: .clean, peer: SilentPeer())
        let session = ReaderSession(port: silent)
        #expect(throws: ReaderError.cannotHandshake(port: "sim:9", seconds: 3)) { try session.connect() }
        #expect(session.connectionState == .connecting)
    }

    @Test("unplugging drops the link to handshaking; plugging back in reconnects")
    func unplugAndReplug() throws {
        let rig = try Rig()
        try rig.session.connect()
        rig.cable.plugged = false
        #expect(throws: ReaderError.self) { try rig.session.identify() }
        // Loss of signal takes the link back to handshaking within the host link timeout.
        _ = try rig.session.driver.run(forAtMost: 5) { rig.session.connectionState == .connecting }
        #expect(rig.session.connectionState == .connecting)
        let events = rig.session.engine.drainEvents()
        #expect(events.contains(.connectionLost(.lossOfSignal, failedMessages: 0)) || events.contains { if case .connectionLost = $0 { true } else { false } })
        rig.cable.plugged = true
        _ = try rig.session.driver.run(forAtMost: 5) { rig.session.connectionState == .connected && !rig.session.engine.negotiating }
        #expect(rig.session.connectionState == .connected)
        #expect(try rig.session.identify().serialNumber == rig.grokker.handler.store.state.serialNumber)
    }

    @Test("the reported clock skew matches the device's clock error", arguments: [-300.0, -40, 0, 120, 450])
    func skew(ppm: Double) throws {
        let rig = try Rig(CableConfiguration(deviceClockPPM: ppm))
        try rig.session.connect()
        for _ in 0..<5 { _ = try rig.session.identify() }
        // A device clock fast by ppm makes its bits that much shorter in the host's samples.
        let measured = (rig.session.engine.statistics.skewFactor - 1) * 1e6
        #expect(abs(measured + ppm) < 15, "device clock \(ppm) ppm, skew \(measured) ppm")
    }

    @Test("a second run sees the state the first one left")
    func persistence() throws {
        let bench = TempBench()
        let first = try EmulatedGrokker(benchDirectory: bench.path, index: 2)
        try first.handler.store.update { $0.region = RegionCatalog.find("etsi")!.setting }
        let second = try EmulatedGrokker(benchDirectory: bench.path, index: 2)
        let cable = SimulatedCablePort(name: "sim:2", sampleRate: 44_100, configuration: .clean, peer: second)
        let info = try ReaderSession(port: cable).connect()
        #expect(info.region?.name == "ETSI (EU)")
        #expect(info.serialNumber == first.handler.store.state.serialNumber)
    }

    @Test("a bench at 48 kHz works: modes are bit rates, samples per bit become fractional")
    func at48kHz() throws {
        // 12 samples per bit at 44.1 kHz is 13.06 at 48 kHz; both ends render and track
        // fractional bit lengths.
        let bench = TempBench()
        let grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0, sampleRate: 48_000)
        let cable = SimulatedCablePort(name: "sim:0", sampleRate: 48_000, configuration: .clean, peer: grokker)
        let session = ReaderSession(port: cable)
        let info = try session.connect()
        #expect(info.hardwareType == .grokker1)
        for _ in 0..<20 { _ = try session.identify() }
    }
}

@Suite("Realtime pacing")
struct RealtimeTests {
    @Test("--realtime never runs ahead of the wall clock")
    func pacing() throws {
        let bench = TempBench()
        let grokker = try EmulatedGrokker(benchDirectory: bench.path, index: 0)
        let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
        var options = ReaderOptions()
        options.realtime = true
        let session = ReaderSession(port: cable, options: options)
        let start = Date()
        try session.connect()
        _ = try session.identify()
        let wall = Date().timeIntervalSince(start)
        let audio = session.elapsedMilliseconds / 1000
        // A lower bound only: a slow machine may take longer, never shorter.
        #expect(wall >= audio * 0.95 - 0.01, "wall \(wall) s for \(audio) s of audio")
    }
}

@Suite("Setting the region")
struct ReaderRegionTests {
    @Test("setRegion by name, code or number stores it on the Grokker; the next connection sees it")
    func setRegion() throws {
        let rig = try Rig()
        let info = try rig.session.connect()
        #expect(info.region == nil && info.userMustSetRegion)
        #expect(rig.session.regionNames().names.count == 22)
        #expect(rig.session.regionNames().selected == nil)
        for (given, expected) in [("ETSI (EU)", 2), ("fcc", 1), ("20", 20)] {
            let fresh = try rig.session.setRegion(given)
            #expect(fresh.region?.number == UInt16(expected))
            #expect(!fresh.userMustSetRegion)
            #expect(rig.session.regionNames().selected == expected - 1)
        }
        #expect(rig.grokker.handler.store.state.region?.name == "ETSI high")
        #expect(rig.grokker.handler.store.state.provisioning.userHasSetRegion)
        // A new connection to the same unit learns it from the announcement.
        let again = try EmulatedGrokker(benchDirectory: rig.bench.path, index: 0)
        let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: again)
        let session = ReaderSession(port: cable)
        #expect(try session.connect().region?.name == "ETSI high")
        // The longest region name costs nothing in the handshake: it travels as a number.
        #expect(try #require(session.connectMilliseconds) <= 250)
    }

    @Test("an unknown region is refused before anything is sent")
    func unknownRegion() throws {
        let rig = try Rig()
        try rig.session.connect()
        let sent = rig.session.engine.statistics.messagesSent
        #expect(throws: ReaderError.unknownRegion("Atlantis")) { try rig.session.setRegion("Atlantis") }
        #expect(rig.session.engine.statistics.messagesSent == sent)
    }

    @Test("a Grokker whose region is not set refuses inventory with REGION_NOT_SET")
    func inventoryNeedsRegion() throws {
        let rig = try Rig()
        try rig.session.connect()
        let parameters = UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters
        #expect(throws: ReaderError.regionNotSet(port: "sim:0")) { try rig.session.startInventory(parameters) }
        try rig.session.setRegion("fcc")
        try rig.session.startInventory(parameters)
        try rig.session.stopInventory()
    }

    @Test("a Grokker whose region is set at the factory refuses")
    func factoryRegion() throws {
        let rig = try Rig()
        try rig.grokker.handler.store.update { $0.provisioning.userCanSetRegion = false }
        try rig.session.connect()
        #expect(throws: ReaderError.self) { try rig.session.setRegion("etsi") }
        #expect(rig.grokker.handler.store.state.region == nil)
    }
}
