import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// Antenna tuning: per channel of the region, on the Grokker's clock, persisted.
@Suite("Antenna tuning")
struct AntennaTuningTests {
    @Test("every channel of the region is tuned, its reflected power drops, and it is kept across a power cycle")
    func tuneAll() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("etsi")
        let before = try rig.session.antennaTuning()
        #expect(before.channels.map(\.frequencyKHz) == [865_700, 866_300, 866_900, 867_500])
        #expect(before.dynamicAverageDBm == nil)
        var events: [UgiAntennaTuningProgress] = []
        let result = try rig.session.tuneAntenna { events.append($0); return true }
        #expect(result.tuned == 4 && result.total == 4)
        #expect(events.map(\.numTuned) == [1, 2, 3, 4])
        #expect(events.allSatisfy { $0.total == 4 })
        #expect(events.map(\.frequencyKHz) == before.channels.map(\.frequencyKHz))
        let after = try rig.session.antennaTuning()
        for (old, new) in zip(before.channels, after.channels) {
            // Out of the box the tuner is at least 3 steps (3.6 dB) from each channel's best.
            #expect(new.reflectedPowerDBm <= old.reflectedPowerDBm - 3.5, "\(old.frequencyKHz) kHz")
        }
        #expect(after.staticAverageDBm < before.staticAverageDBm - 3.5)
        #expect(events.map(\.reflectedPowerDBm) == after.channels.map(\.reflectedPowerDBm))
        rig.session.close()

        let reopened = try EmulatedGrokker(benchDirectory: rig.bench.path, index: 0)
        let session = try GrokkerPasswordTests.reconnect(reopened)
        #expect(try session.antennaTuning() == after)
    }

    @Test("the callback stops a run early; the channels tuned by then stay tuned")
    func earlyStop() throws {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        let before = try rig.session.antennaTuning()
        #expect(before.channels.count == 50)
        var calls = 0
        let result = try rig.session.tuneAntenna { _ in calls += 1; return calls < 3 }
        #expect(calls == 3)
        #expect(result.total == 50)
        #expect(result.tuned >= 3 && result.tuned < 50)
        #expect(!rig.grokker.antennaTuningRunning)
        let after = try rig.session.antennaTuning()
        let changed = zip(before.channels, after.channels).filter { $0.reflectedPowerDBm != $1.reflectedPowerDBm }.count
        #expect(changed == result.tuned)
        #expect(rig.grokker.handler.store.state.antennaTuning.count == result.tuned)
    }

    @Test("refused before the region is set and while an inventory runs; an inventory measures the dynamic average")
    func refusals() throws {
        let rig = try Rig()
        try rig.session.connect()
        #expect(throws: ReaderError.regionNotSet(port: "sim:0")) { try rig.session.tuneAntenna { _ in true } }
        try rig.session.setRegion("etsi")
        // At a fixed 30 dBm (the vendor's distance preset ranges 23-29 dBm).
        var fullPower = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        (fullPower.initialPowerLevel, fullPower.minPowerLevel, fullPower.maxPowerLevel) = (30, 30, 30)
        try rig.session.startInventory(fullPower.inventoryParameters)
        #expect(throws: ReaderError.inventoryRunning(port: "sim:0")) { try rig.session.tuneAntenna { _ in true } }
        do {
            _ = try rig.session.call(.startAntennaTuning)
            Issue.record("the Grokker tuned while scanning")
        } catch {
            guard case .rejected(_, _, let status) = error else { Issue.record("\(error)"); return }
            #expect(status.hasPrefix("busy"))
        }
        try rig.session.collect(forAtMost: 0.5)
        try rig.session.stopInventory()
        let tuning = try rig.session.antennaTuning()
        // Inventory at 30 dBm on untuned channels: the same figure as the static one.
        let dynamic = try #require(tuning.dynamicAverageDBm)
        #expect(abs(dynamic - tuning.staticAverageDBm) < 3)
        // And an inventory cannot start while the antenna is being tuned.
        _ = try rig.session.call(.startAntennaTuning)
        #expect(rig.grokker.antennaTuningRunning)
        #expect(throws: ReaderError.self) {
            try rig.session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance).inventoryParameters)
        }
        _ = try rig.session.call(.stopAntennaTuning)
        #expect(!rig.grokker.antennaTuningRunning)
    }
}
