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

    @Test("found sounds go to the reader as configurations 2 and 3; more tones than it takes are refused before sending")
    func foundSounds() throws {
        let rig = try Self.connected()
        let tones = Int(rig.session.info!.maxTonesInSound)
        let tone = UgiTone(frequencyHz: 2000, durationMs: 50)
        try rig.session.setFoundSounds(foundItem: Array(repeating: tone, count: tones), foundLast: [tone])
        #expect(try rig.session.configuration(.foundLastItemSound) == .tones(.foundLastItemSound, [VendorTone(frequencyHz: 2000, durationMs: 50)]))
        let sent = rig.session.linkStatistics.packetsSent
        let tooMany = Array(repeating: tone, count: tones + 1)
        #expect(throws: ReaderError.invalidArgument(field: "foundItem", value: "\(tones + 1) tones", allowed: "0 to \(tones) tones")) {
            try rig.session.setFoundSounds(foundItem: tooMany, foundLast: [])
        }
        #expect(rig.session.linkStatistics.packetsSent == sent)
        try rig.session.setGeigerCounterSound(UgiGeigerCounterSound(frequency: 3000, clickDurationMsec: 5, clickRate: 1,
                                                                    maxClicksPerSecond: 100, historyDepthMsec: 500))
        #expect(throws: ReaderError.invalidArgument(field: "volume", value: "1.5", allowed: "0 to 1")) {
            try rig.session.setVolume(1.5)
        }
    }

    @Test("playSound FOUND_LAST is sound 0 on the wire and plays; FOUND_ITEM has no vendor number and is refused")
    func play() throws {
        let rig = try Self.connected()
        try rig.session.playSound(.foundLast)
        #expect(rig.grokker.soundLog.foundLast == 1)
        #expect(rig.grokker.soundLog.last == .foundLast)
        #expect(throws: ReaderError.notSupported(port: "sim:0", feature: "playSound foundItem")) { try rig.session.playSound(.foundItem) }
        #expect(rig.grokker.soundLog.foundItem == 0)
    }

    @Test("playTones plays a melody as the found-last sound, then puts back the standard one, or the one the host set")
    func playTones() throws {
        let rig = try Self.connected()
        let melody = [UgiTone(frequencyHz: 3100, durationMs: 40), UgiTone(frequencyHz: 0, durationMs: 20), UgiTone(frequencyHz: 900, durationMs: 60)]
        let heard = melody.map { SoundTone(frequencyHz: $0.frequencyHz, durationMs: $0.durationMs) }
        try rig.session.playTones(melody)
        // What the unit plays for FOUND_LAST afterwards: its standard sound again.
        try rig.session.playSound(.foundLast)
        #expect(rig.grokker.soundLog.asked == [heard, FoundSounds.standard.foundLast])
        // The host's own found-last sound is put back, and still counts as set by it.
        let own = [UgiTone(frequencyHz: 2500, durationMs: 80)]
        try rig.session.setFoundLastItemSound(own)
        try rig.session.playTones(melody)
        try rig.session.playSound(.foundLast)
        #expect(rig.grokker.soundLog.asked.suffix(2) == [heard, [SoundTone(frequencyHz: 2500, durationMs: 80)]])
        #expect(try rig.session.configuration(.foundLastItemSound) == .tones(.foundLastItemSound, [VendorTone(frequencyHz: 2500, durationMs: 80)]))
        let most = Int(try #require(rig.session.info?.maxTonesInSound))
        #expect(throws: ReaderError.invalidArgument(field: "tones", value: "\(most + 1) tones", allowed: "0 to \(most) tones")) {
            try rig.session.playTones(Array(repeating: melody[0], count: most + 1))
        }
    }

    @Test("an inventory for a few EPCs sends them to the reader, as the vendor's host does: it reports and beeps only for them")
    func epcListOnTheReader() throws {
        let rig = try Self.connected()
        try rig.session.startInventory(Self.configuration(.firstFind))
        try rig.session.collect(forAtMost: 1)
        try rig.session.stopInventory()
        let field = Set(rig.session.takeReports().map(\.epc)).sorted { $0.lexicographicallyPrecedes($1) }
        try #require(field.count >= 3)
        let wanted = try field.prefix(2).map { try UgiEpc(bytes: $0) }
        let beeps = rig.grokker.soundLog.foundItem
        try rig.session.startInventory(Self.configuration(.firstFind), tags: .only(wanted))
        #expect(rig.session.inventory?.start.epcs == wanted.map(\.bytes))
        try rig.session.collect(forAtMost: 1)
        try rig.session.stopInventory()
        #expect(Set(rig.session.takeReports().map(\.epc)) == Set(wanted.map(\.bytes)))
        #expect(rig.grokker.soundLog.foundItem - beeps == 2)
        // With a select mask the list stays on the host (the vendor's rule): the start carries none.
        var selecting = Self.configuration(.firstFind)
        selecting.selectMask = [0x30]
        selecting.selectMaskBitLength = 4
        try rig.session.startInventory(selecting, tags: .only(wanted))
        #expect(rig.session.inventory?.start.epcs == [] && rig.session.inventory?.start.flag7 == false)
        try rig.session.stopInventory()
    }

    @Test("the volume is kept and sent in the inventory start: FIRST_FIND beeps per tag found, at volume 0 it is silent")
    func volumeRidesInTheInventoryStart() throws {
        let rig = try Self.connected()
        try rig.session.setVolume(1)
        try rig.session.startInventory(Self.configuration(.firstFind, volume: 0))
        // The volume set (1) wins over the configuration's (0): the loudest level.
        let loudest = try Self.configuration(.firstFind, volume: 1).vendorInventoryStart(volumeLevels: rig.session.version!.volumeLevels)
        #expect(rig.session.inventory?.start.volumeLevel == loudest.volumeLevel)
        #expect(loudest.volumeLevel > 0)
        try rig.session.collect(forAtMost: 2)
        try rig.session.stopInventory()
        let found = Set(rig.session.takeReports().map(\.epc)).count
        #expect(found > 0)
        #expect(rig.grokker.soundLog.foundItem == found)
        #expect(rig.grokker.soundLog.foundLast == 0 && rig.grokker.soundLog.clicks == 0)

        let quiet = try Self.connected()
        try quiet.session.setVolume(0)
        try quiet.session.startInventory(Self.configuration(.firstFind, volume: 1))
        #expect(quiet.session.inventory?.start.volumeLevel == 0)
        try quiet.session.collect(forAtMost: 1)
        try quiet.session.stopInventory()
        #expect(quiet.grokker.soundLog == SoundLog())
    }
}
