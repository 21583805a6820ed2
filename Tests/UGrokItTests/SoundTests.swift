import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Testing
import UGrokIt

/// Sounds: set on the Grokker, validated there, and played by inventories as the reads go.
@Suite("Sounds")
struct SoundTests {
    static func connected() throws -> Rig {
        let rig = try Rig()
        try rig.session.connect()
        try rig.session.setRegion("fcc")
        return rig
    }

    static func configuration(_ sound: UgiSoundType, volume: Double = 1) -> UgiRfidConfiguration {
        var c = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        c.soundType = sound
        c.volume = volume
        return c
    }

    @Test("the Grokker refuses sounds its piezo cannot play, and too many tones")
    func validation() throws {
        let rig = try Self.connected()
        let tones = Int(rig.session.info!.maxTonesInSound)
        let tone = UgiTone(frequencyHz: 2000, durationMs: 50)
        try rig.session.setFoundSounds(foundItem: Array(repeating: tone, count: tones), foundLast: [tone])
        let tooMany = Array(repeating: tone, count: tones + 1)
        #expect(throws: ReaderError.self) { try rig.session.setFoundSounds(foundItem: tooMany, foundLast: []) }
        for bad in [UgiTone(frequencyHz: 50, durationMs: 50), UgiTone(frequencyHz: 12_000, durationMs: 50),
                    UgiTone(frequencyHz: 2000, durationMs: 0)] {
            do {
                try rig.session.setFoundSounds(foundItem: [tone], foundLast: [bad])
                Issue.record("\(bad) was accepted")
            } catch {
                guard case .rejected(_, _, let status) = error else { Issue.record("\(error)"); continue }
                #expect(status.hasPrefix("invalid_argument"))
            }
        }
        var geiger = UgiGeigerCounterSound(frequency: 3000, clickDurationMsec: 5, clickRate: 1, maxClicksPerSecond: 100,
                                           historyDepthMsec: 500)
        try rig.session.setGeigerCounterSound(geiger)
        geiger.maxClicksPerSecond = 300   // 300 clicks of 5 ms do not fit in a second
        #expect(throws: ReaderError.self) { try rig.session.setGeigerCounterSound(geiger) }
        geiger.maxClicksPerSecond = 100
        geiger.frequency = 100
        #expect(throws: ReaderError.self) { try rig.session.setGeigerCounterSound(geiger) }
        #expect(throws: ReaderError.invalidArgument(field: "volume", value: "1.5", allowed: "0 to 1")) {
            try rig.session.setVolume(1.5)
        }
    }

    @Test("playSound plays at the volume set, mapped to the reader's steps; volume 0 is silent")
    func play() throws {
        let rig = try Self.connected()
        try rig.session.playSound(.foundLast)
        #expect(rig.grokker.soundLog.foundLast == 1)
        #expect(rig.grokker.soundLog.last == .foundLast)
        #expect(rig.grokker.soundLog.tones == 3)   // the standard figure: three notes and a rest
        #expect(rig.grokker.soundLog.lastVolumeLevel == Int(rig.session.info!.numVolumeLevels) - 1)
        try rig.session.setVolume(0.5)
        try rig.session.playSound(.foundItem)
        #expect(rig.grokker.soundLog.lastVolumeLevel == 4)   // 0.5 of steps 0...7, rounded
        try rig.session.setVolume(0)
        try rig.session.playSound(.foundItem)
        #expect(rig.grokker.soundLog.foundItem == 1)
    }

    @Test("sounds are refused as busy while a firmware update runs")
    func busy() throws {
        let rig = try Self.connected()
        _ = try rig.session.call(.firmware(.enterLoader))
        #expect(rig.grokker.ongoingOperation == .firmwareUpdate)
        do {
            try rig.session.playSound(.foundItem)
            Issue.record("played during a firmware update")
        } catch {
            guard case .rejected(_, _, let status) = error else { Issue.record("\(error)"); return }
            #expect(status.hasPrefix("busy"))
        }
        #expect(rig.grokker.soundLog.foundItem == 0)
        _ = try rig.session.call(.firmware(.leaveLoader))
        try rig.session.playSound(.foundItem)
        #expect(rig.grokker.soundLog.foundItem == 1)
    }

    @Test("GEIGER_COUNTER clicks follow the read rate, capped at the maximum click rate")
    func geiger() throws {
        // One click per ten reads, a cap high enough not to matter.
        let rig = try Self.connected()
        try rig.session.setGeigerCounterSound(UgiGeigerCounterSound(
            frequency: 3000, clickDurationMsec: 2, clickRate: 0.1, maxClicksPerSecond: 200, historyDepthMsec: 1000))
        try rig.session.startInventory(Self.configuration(.geigerCounter).inventoryParameters)
        try rig.session.collect(forAtMost: 1.5)
        try rig.session.stopInventory()
        let reads = try rig.session.diagnostics().rawTagFinds
        let clicks = rig.grokker.soundLog.clicks
        #expect(reads > 100)
        #expect(clicks <= reads / 10 && clicks >= reads / 10 - 1, "\(clicks) clicks for \(reads) reads")
        #expect(rig.grokker.soundLog.foundItem == 0)

        // Fewer tags in range, fewer reads, fewer clicks; and a cap of 5 per second holds.
        let sparse = try Self.connected()
        try sparse.session.setGeigerCounterSound(UgiGeigerCounterSound(
            frequency: 3000, clickDurationMsec: 2, clickRate: 0.1, maxClicksPerSecond: 200, historyDepthMsec: 1000))
        var one = Self.configuration(.geigerCounter)
        one.selectBank = .epc
        one.selectOffset = 32
        one.selectMask = sparse.grokker.field.tags[0].epc
        one.selectMaskBitLength = 96
        try sparse.session.startInventory(one.inventoryParameters)
        try sparse.session.collect(forAtMost: 1.5)
        try sparse.session.stopInventory()
        let fewer = try sparse.session.diagnostics().rawTagFinds
        #expect(fewer < reads)
        #expect(sparse.grokker.soundLog.clicks < clicks)
        #expect(sparse.grokker.soundLog.clicks >= fewer / 10 - 1)

        let capped = try Self.connected()
        try capped.session.setGeigerCounterSound(UgiGeigerCounterSound(
            frequency: 3000, clickDurationMsec: 2, clickRate: 1, maxClicksPerSecond: 5, historyDepthMsec: 1000))
        try capped.session.startInventory(Self.configuration(.geigerCounter).inventoryParameters)
        try capped.session.collect(forAtMost: 2)
        try capped.session.stopInventory()
        // The reader's clock ran about as long as the host's (plus the stop's round trip).
        #expect(capped.grokker.soundLog.clicks > 0 && capped.grokker.soundLog.clicks <= 5 * 3 + 1)
    }

    @Test("FIRST_FIND beeps once per tag found; at volume 0 it is silent")
    func firstFind() throws {
        let rig = try Self.connected()
        try rig.session.startInventory(Self.configuration(.firstFind).inventoryParameters)
        try rig.session.collect(forAtMost: 2)
        try rig.session.stopInventory()
        #expect(rig.grokker.soundLog.foundItem == 24)
        #expect(rig.grokker.soundLog.foundLast == 0 && rig.grokker.soundLog.clicks == 0)

        let quiet = try Self.connected()
        try quiet.session.startInventory(Self.configuration(.firstFind, volume: 0).inventoryParameters)
        try quiet.session.collect(forAtMost: 1)
        try quiet.session.stopInventory()
        #expect(quiet.grokker.soundLog == SoundLog())
    }
}

/// A delegate that only notes the tags found.
final class FoundTags: UgiInventoryDelegate, @unchecked Sendable {
    let lock = NSLock()
    var epcs: [UgiEpc] = []
    func inventoryTagFound(_ tag: UgiTag, withDetailedPerReadData data: [UgiDetailedPerReadData]?) {
        lock.withLock { epcs.append(tag.epc) }
    }
}

@Suite("Sounds with a reader-filtered EPC list")
struct FoundLastTests {
    @Test("withEpcs of a few EPCs and FIRST_FIND_AND_LAST: a beep per EPC, then the found-last sound once")
    func foundLast() throws {
        let bench = TempBench()
        let store = try DeviceStateStore.openOrCreate(directory: bench.path, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")!.setting }
        let grokker = try EmulatedGrokker(store: store)
        let box = QueueBox(grokker)
        let reader = Reader(name: "sim:0") {
            SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: box.value)
        }
        reader.openConnection()
        let wanted = grokker.field.tags[3...5].map { try! UgiEpc(bytes: $0.epc) }
        let delegate = FoundTags()
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.soundType = .firstFindAndLast
        let inventory = try reader.startInventory(delegate, withConfiguration: configuration, withEpcs: wanted)
        var waited = 0
        while delegate.lock.withLock({ delegate.epcs.count }) < 3, waited < 6000 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        let done = DispatchSemaphore(value: 0)
        inventory.stopInventory { done.signal() }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(Set(delegate.lock.withLock { delegate.epcs }) == Set(wanted))
        // Read the device's log once the reader's thread has let go of it.
        reader.closeConnection()
        waited = 0
        while reader.connectionState != .notConnected, waited < 6000 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        // The reader filtered on the three EPCs: it beeped for them only.
        let log = grokker.soundLog
        #expect(log.foundItem == 3)
        #expect(log.foundLast == 1)
        #expect(log.last == .foundLast)
    }
}
