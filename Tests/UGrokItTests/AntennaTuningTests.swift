import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
@testable import UGrokIt

/// Antenna tuning on the vendor protocol: TuneAntenna 0x0d runs in slave mode (the reader
/// sends one packet per channel, then "completed"); GetAntennaTuning 0x10 gives two averages.
@Suite("Antenna tuning")
struct AntennaTuningTests {
    /// A reader that takes TuneAntenna and reports `channels` (50 kHz units), then completes.
    static func tuningReader(_ channels: [UInt16]) throws -> (ScriptedGrokker, ReaderSession) {
        var packets: [ScriptedPacket] = [.response(.ack)]
        for (i, channel) in channels.enumerated() {
            let packet = VendorTuneAntennaPacket.oneFrequency(channel: channel, reflectedPower: UInt16(100 + i), values: [1, 2, 3, 4, 5])
            packets.append(.request(RequestPacket(command: packet.opcode, payload: try packet.encode())))
        }
        let done = VendorTuneAntennaPacket.completed(result: 0, value: 0)
        packets.append(.request(RequestPacket(command: done.opcode, payload: try done.encode())))
        let device = try ScriptedGrokker(packets: packets)
        let session = try ReaderSession(port: SimulatedCablePort(name: "tune", sampleRate: 44_100, configuration: .clean, peer: device))
        let version = try VendorReaderVersion(decoding: hexBytes("061405000601080001fa550480004001112233445566778887d61200000800"))
        try session.handshake(samplesPerBit: session.samplesPerBit, timeout: 3)
        session.setVersionForTesting(version)
        return (device, session)
    }

    @Test("tuneAntenna reports each channel the reader tunes, in its order, and returns once it completes")
    func tunesInSlaveMode() throws {
        let channels: [UInt16] = [17_314, 17_326, 17_338]
        let (device, session) = try Self.tuningReader(channels)
        var events: [UgiAntennaTuningProgress] = []
        let result = try session.tuneAntenna { events.append($0); return true }
        #expect(result.tuned == 3)
        #expect(events.map(\.frequencyKHz) == channels.map { Int($0) * 50 })
        #expect(events.map(\.numTuned) == [1, 2, 3])
        #expect(events.map(\.reflectedPowerDBm) == [10.0, 10.1, 10.2])
        #expect(device.script.isEmpty)
        #expect(!session.link.packets.isInSlaveMode)
        // Every reader packet was answered ACK_0 (`f0`).
        #expect(device.hostPackets.filter { $0 == "f0" }.count == 4)
    }

    @Test("returning false from the progress asks the reader to stop (ACK_1 in the next answer)")
    func stopsEarly() throws {
        let (device, session) = try Self.tuningReader([17_314, 17_326])
        _ = try session.tuneAntenna { _ in false }
        #expect(device.hostPackets.contains("e1"))
    }

    @Test("GetAntennaTuning gives the reader's two averages; the emulated reader refuses TuneAntenna (ACK_7)")
    func againstTheEmulator() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("etsi")
        let tuning = try rig.session.antennaTuning()
        #expect(tuning.channels.isEmpty)
        #expect(tuning.staticAverageDBm.isFinite)
        #expect(throws: ReaderError.self) { try rig.session.tuneAntenna { _ in true } }
        // The session stays usable.
        try rig.session.connect()
        #expect(try rig.session.identify().serialNumber == rig.grokker.store.state.serialNumber)
    }

    @Test("not while an inventory runs; nothing is sent")
    func notDuringInventory() throws {
        let rig = try TagAccessTests.scanning()
        #expect(throws: ReaderError.inventoryRunning(port: "sim:0")) { try rig.session.tuneAntenna { _ in true } }
        try rig.session.stopInventory()
    }
}
