import Foundation
import GrokAudio
import GrokProtocol
import Testing

@testable import GrokkerEmulator

/// The radio link as the reader's configuration sets it: receive sensitivity, write power
/// and write sensitivity, bit errors near the floor, capture (docs/scene.md, "The link
/// budget" and "What the simulation does with a scene").
@Suite("RF link")
struct RFLinkTests {
    /// Tags behind one-way path losses of 20, 25, ... 45 dB: at 30 dBm all wake, and their
    /// replies reach the reader at -18, -28, ... -68 dBm (30 − 2L − 8).
    static let ladder = RFScene(tags: (0..<6).map {
        RFScene.Tag(epc: RFFixtures.epc($0), placement: .pathLoss(dB: 20 + 5 * Double($0)))
    })

    @Test("the configured sensitivity is the reader's receive threshold, never below the hardware's floor",
          arguments: [(-85, 6), (-60, 5), (-45, 3), (-25, 1)])
    func readsFallOffAsTheSensitivityRises(sensitivityDBm: Int, expected: Int) {
        var parameters = InventoryParameters()
        parameters.sensitivityTenthsDBm = Int16(sensitivityDBm * 10)
        let (_, reports) = RegionObedienceTests.run("fcc", scene: Self.ladder, seconds: 0.3, parameters: parameters)
        // The strongest `expected` tags, and only they.
        #expect(Set(reports.map(\.epc)) == Set((0..<expected).map(RFFixtures.epc)))
    }

    /// Starts an FCC inventory on `scene` with the vendor presets' radio figures (read at
    /// 27 dBm, sensitivity -85 dBm, write at 24 dBm) and the given write sensitivity; runs it
    /// 0.3 s. Returns the runner and the EPCs read.
    static func presetRunner(scene: RFScene, writeSensitivityDBm: Int) -> (InventoryRunner, Set<[UInt8]>) {
        var p = InventoryParameters()
        (p.initialPowerTenthsDBm, p.minPowerTenthsDBm, p.maxPowerTenthsDBm) = (270, 270, 270)
        p.sensitivityTenthsDBm = -850
        p.writePowerTenthsDBm = 240
        p.writeSensitivityTenthsDBm = Int16(writeSensitivityDBm * 10)
        let runner = InventoryRunner(field: RFField(scene: scene))
        runner.start(p, region: RegionObedienceTests.setting("fcc"), at: 0, seed: 7)
        runner.advance(to: 0.3)
        return (runner, Set(runner.takeReports(limit: 100).map(\.epc)))
    }

    /// Writes one USER word to tag `n` of the runner's field at 0.3 s.
    static func write(_ runner: InventoryRunner, tag n: Int) -> TagAccessStatus {
        runner.access(epc: RFFixtures.epc(n), .write(bank: .user, wordPointer: 0, words: [0xBEEF], password: 0), at: 0.3).status
    }

    static func scene(pathLosses: [Double], chips: [TagChip?] = []) -> RFScene {
        RFScene(tags: pathLosses.enumerated().map { i, loss in
            RFScene.Tag(epc: RFFixtures.epc(i), user: [0, 0], placement: .pathLoss(dB: loss), chip: i < chips.count ? chips[i] : nil)
        })
    }

    @Test("a write needs more than a read: the write power, the write sensitivity and the chip's write threshold decide")
    func writesFailWhereReadsStillSucceed() {
        // Monza R6 (the default): wakes at -18 dBm, writes from -14.7 dBm (3.3 dB more).
        // Write sensitivity -60 dBm: at 24 dBm a reply is heard out to a path loss of 38 dB.
        let (presets, read) = Self.presetRunner(scene: Self.scene(pathLosses: [30, 36, 40]), writeSensitivityDBm: -60)
        #expect(read == Set((0..<3).map(RFFixtures.epc)), "every tag is read at 27 dBm")
        #expect(Self.write(presets, tag: 0) == .ok)
        #expect(Self.write(presets, tag: 1) == .ok)
        #expect(Self.write(presets, tag: 2) == .tagNotFound, "its reply at 24 dBm is -64 dBm, below the write sensitivity")
        #expect(presets.field.tags[2].memory.user == [0])

        // With the write sensitivity at the floor, the chip's write threshold decides: at a
        // 40 dB loss the tag gets -16 dBm at 24 dBm (awake, too little to write: the Gen2
        // "insufficient power" reply, GENERAL_ERROR); at 43 dB it does not even wake.
        let (floor, readToo) = Self.presetRunner(scene: Self.scene(pathLosses: [30, 40, 43]), writeSensitivityDBm: -85)
        #expect(readToo == Set((0..<3).map(RFFixtures.epc)))
        #expect(Self.write(floor, tag: 0) == .ok)
        #expect(Self.write(floor, tag: 1) == .generalError)
        #expect(Self.write(floor, tag: 2) == .tagNotFound)
        #expect(floor.field.tags[1].memory.user == [0] && floor.field.tags[0].memory.user == [0xBEEF])

        // The chip model sets the margin: at 38 dB (-14 dBm at the tag) a Monza R6 writes, a
        // UCODE 8 (5 dB between its read and write sensitivities) does not.
        let (chips, _) = Self.presetRunner(scene: Self.scene(pathLosses: [38, 38], chips: [.monzaR6, .ucode8]), writeSensitivityDBm: -85)
        #expect(Self.write(chips, tag: 0) == .ok)
        #expect(Self.write(chips, tag: 1) == .generalError)
    }

    @Test("a scene names its tags' chips and its interferers; an unknown chip or key is refused")
    func sceneChips() throws {
        let json = #"{"tag_chip": "ucode_8", "tags": [{"epc": "30340000", "distance_m": 1}, {"epc": "30340001", "distance_m": 1, "chip": "monza_4"}]}"#
        let scene = try RFScene.decode(Data(json.utf8), path: "s.json")
        let field = RFField(scene: scene)
        #expect(abs(field.tags[0].writeThresholdDBm - (-18 + 5)) < 1e-9)
        #expect(abs(field.tags[1].writeThresholdDBm - (-18 + 2.8)) < 1e-9)
        #expect(try RFScene.decode(scene.encoded(), path: "again") == scene)
        let loud = #"{"interferers": [{"frequency_mhz": 916.8, "power_dbm": -60}], "tags": []}"#
        #expect(try RFScene.decode(Data(loud.utf8), path: "s.json").interferers == [RFScene.Interferer(frequencyMHz: 916.8, powerDBm: -60)])
        let typo = #"{"interferers": [{"frequency": 916.8, "power_dbm": -60}], "tags": []}"#
        #expect(throws: SceneError.self) { try RFScene.decode(Data(typo.utf8), path: "s.json") }
        let bad = #"{"tags": [{"epc": "30340000", "distance_m": 1, "chip": "monza_9"}]}"#
        let error = #expect(throws: SceneError.self) { try RFScene.decode(Data(bad.utf8), path: "s.json") }
        #expect(error?.description.contains("tags[0].chip") == true && error?.description.contains("ucode_8") == true, "\(String(describing: error))")
    }

    @Test("bit errors grow as the link margin shrinks: failed CRCs are lost and counted")
    func bitErrorsGrowAsTheMarginShrinks() {
        // One tag, Q 0, target toggled after every round without a find: the S0 tag (powered
        // across rounds while the carrier dwells on a channel) answers every other round.
        // Floor -60 dBm; at 30 dBm the reply is 22 − 2L dBm, so L = (82 − margin) / 2.
        func failures(marginDB: Double) -> (failed: Int, read: Int) {
            let scene = RFScene(readerSensitivityDBm: -60, tags: [
                RFScene.Tag(epc: RFFixtures.epc(0), placement: .pathLoss(dB: (82 - marginDB) / 2)),
            ])
            var field = RFField(scene: scene)
            var configuration = RFFixtures.configuration()
            configuration.channelsMHz = [915.25, 915.75]
            (configuration.initialQ, configuration.maxQ) = (0, 0)
            configuration.roundsWithNoFindsToToggleAB = 1
            var inventory = Gen2Inventory(configuration: configuration)
            var slots = Gen2SlotStatistics()
            inventory.run(in: &field, from: 0, maxRounds: 800) { slots += $0.slots; return true }
            return (slots.crcFailed, slots.single)
        }
        let counts = [0.0, 1, 2, 10].map(failures(marginDB:))
        // The model: 12 % of 128-bit replies fail at the floor, 3.3 % 1 dB above, 0.6 % 2 dB
        // above, none 10 dB above.
        let atFloor = Double(counts[0].failed) / Double(counts[0].failed + counts[0].read)
        #expect(atFloor > 0.08 && atFloor < 0.16, "\(counts)")
        #expect(counts[0].failed > counts[1].failed && counts[1].failed >= counts[2].failed, "\(counts)")
        #expect(counts[3].failed == 0)
        #expect(Gen2BitErrors.bitErrorRate(marginDB: 0) > 0.99e-3 && Gen2BitErrors.bitErrorRate(marginDB: 0) < 1.01e-3)

        // The reader counts them (rounds, finds and CRC failures since the last reset).
        let near = RFScene(readerSensitivityDBm: -60, tags: [RFScene.Tag(epc: RFFixtures.epc(0), placement: .pathLoss(dB: 40.9))])
        let (runner, _) = RegionObedienceTests.run("fcc", scene: near, seconds: 2)
        #expect(runner.totalCRCFailures > 0 && runner.totalCRCFailures < runner.totalReads, "\(runner.totalCRCFailures) of \(runner.totalReads)")
        runner.resetTotals()
        #expect(runner.totalCRCFailures == 0)
    }

    @Test("capture is on by default: in a dense near/far field the strongest reply wins a collision")
    func captureInADenseNearFarField() {
        // 40 tags from 0.3 m to 4 m, a start Q too small for them: many slots hold several
        // replies of very different strength.
        let scene = RFScene(tags: (0..<40).map {
            RFScene.Tag(epc: RFFixtures.epc($0), placement: .distance(meters: 0.3 + 3.7 * Double($0) / 39))
        })
        var field = RFField(scene: scene)
        var configuration = RFFixtures.configuration()
        configuration.initialQ = 2
        #expect(configuration.captureMarginDB == Gen2BitErrors.floorEbN0DB)
        var inventory = Gen2Inventory(configuration: configuration)
        let result = RFFixtures.inventoryUntilFound(Set(0..<40), field: &field, inventory: &inventory, maxRounds: 20)
        #expect(result.found == Set(0..<40))
        #expect(result.slots.captured > 0, "\(result.slots)")

        // Equal replies are never captured (0 dB apart).
        var uniform = RFField(scene: RFFixtures.uniformScene(count: 40))
        var again = Gen2Inventory(configuration: configuration)
        let equal = RFFixtures.inventoryUntilFound(Set(0..<40), field: &uniform, inventory: &again, maxRounds: 20)
        #expect(equal.slots.captured == 0 && equal.slots.collided > 0)
    }
}
