import GrokBasics
import Foundation
import GrokAudio
import GrokProtocol
import Testing

@testable import GrokkerEmulator

/// Builders shared by the RF tests.
enum RFFixtures {
    /// A 96-bit EPC numbered `n` (an SGTIN-96-looking header, the number in the last bytes).
    static func epc(_ n: Int) -> [UInt8] {
        [0x30, 0x34, 0x25, 0x7B, 0xF4, 0x00, 0x00, 0x00] + [UInt8((n >> 24) & 0xFF), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
    }

    /// `count` tags all behind the same path loss (equal RSSI: no capture possible).
    static func uniformScene(count: Int, pathLossDB: Double = 40) -> RFScene {
        RFScene(tags: (0..<count).map { RFScene.Tag(epc: epc($0), placement: .pathLoss(dB: pathLossDB)) })
    }

    /// One channel, fixed power, S0, no target toggling unless asked.
    static func configuration(
        powerDBm: Double = 30, session: Gen2Session = .s0, toggleAfter: Int = 0, select: Gen2Select? = nil,
        seed: UInt64 = 1
    ) -> Gen2InventoryConfiguration {
        Gen2InventoryConfiguration(
            powerDBm: powerDBm, initialQ: 4, minQ: 0, maxQ: 15, session: session, roundsWithNoFindsToToggleAB: toggleAfter,
            select: select, channelsMHz: [915.25], seed: seed)
    }

    /// Runs rounds from `time` until every tag index in `expected` has been read or
    /// `maxRounds` have run. Returns the indices read, rounds, slot statistics and end time.
    static func inventoryUntilFound(
        _ expected: Set<Int>, field: inout RFField, inventory: inout Gen2Inventory, from time: Double = 0,
        maxRounds: Int
    ) -> (found: Set<Int>, rounds: Int, slots: Gen2SlotStatistics, end: Double) {
        var found: Set<Int> = []
        var rounds = 0
        var slots = Gen2SlotStatistics()
        let end = inventory.run(in: &field, from: time, maxRounds: maxRounds) { round in
            rounds += 1
            slots += round.slots
            for read in round.reads { found.insert(read.tagIndex) }
            return !expected.isSubset(of: found)
        }
        return (found, rounds, slots, end)
    }
}

/// The Gen2 inventory engine: slotted ALOHA with adaptive Q, SELECT, power, sessions, targets.
@Suite struct RFInventoryTests {
    /// Independent inventories pooled per population (about 60 000 slots each, so the pooled
    /// share has a standard deviation near 0.2 percentage points; one run alone varies by
    /// ±2.6 points at 100 tags). Measured: 34.6 % (100 tags), 34.9 % (300), 34.4 % (500),
    /// with no slot ending past the 400 ms dwell limit and frames after collisions sized by
    /// Schoute's estimate.
    static let populations: [(tags: Int, runs: Int)] = [(100, 200), (300, 80), (500, 48)]

    @Test("every tag is found in a bounded number of rounds and ≥ 34 % of slots succeed", arguments: populations)
    func slotEfficiency(tags: Int, runs: Int) {
        var pooled = Gen2SlotStatistics()
        for run in 0..<runs {
            var field = RFField(scene: RFFixtures.uniformScene(count: tags))
            var inventory = Gen2Inventory(configuration: RFFixtures.configuration(seed: UInt64(run + 1)))
            let result = RFFixtures.inventoryUntilFound(
                Set(0..<tags), field: &field, inventory: &inventory, maxRounds: 40)
            #expect(result.found == Set(0..<tags), "run \(run): \(result.found.count) of \(tags) found")
            #expect(result.slots.successful == tags, "a tag was read twice in run \(run)")
            pooled += result.slots
        }
        #expect(pooled.efficiency >= 0.34, "\(tags) tags: \(pooled) -> \(pooled.efficiency)")
    }

    @Test func selectYieldsExactlyTheMatchingTags() throws {
        // Half the tags get a different EPC header; select on the first two EPC bytes.
        var scene = RFFixtures.uniformScene(count: 60)
        for i in stride(from: 0, to: 60, by: 2) { scene.tags[i].epc[0...1] = [0x35, 0xFF] }
        var field = RFField(scene: scene)
        let select = try #require(Gen2Select.epcPrefix([0x35, 0xFF]))
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(select: select))
        let expected = Set(stride(from: 0, to: 60, by: 2))
        var found: Set<Int> = []
        inventory.run(in: &field, from: 0, maxRounds: 30) { round in
            found.formUnion(round.reads.map(\.tagIndex))
            return true
        }
        #expect(found == expected)
        // A TID select on the made-up TIDs' model number matches every tag; a mask longer
        // than the bank matches none.
        #expect(Gen2Select(bank: .tid, bitOffset: 0, bitLength: 32, mask: [0xE2, 0x80, 0x11, 0x60])!.matches(field.tags[1].memory))
        #expect(!Gen2Select(bank: .user, bitOffset: 0, bitLength: 8, mask: [0])!.matches(field.tags[1].memory))
        #expect(Gen2Select(bank: .reserved, bitOffset: 0, bitLength: 8, mask: [0]) == nil)
        #expect(Gen2Select(bank: .epc, bitOffset: 32, bitLength: 8 * 33, mask: [UInt8](repeating: 0, count: 33)) == nil)
    }

    /// The link budget computed here from first principles, independently of the field.
    static func reachable(distance: Double, powerDBm: Double, scene: RFScene, frequencyMHz: Double) -> Bool {
        let loss = max(0, 20 * log10(4 * Double.pi * distance * frequencyMHz * 1e6 / 299_792_458))
        let atTag = powerDBm + scene.antennaGainDBi - loss
        let rssi = powerDBm + 2 * scene.antennaGainDBi - 2 * loss - scene.backscatterLossDB
        return atTag >= scene.tagActivationThresholdDBm && rssi >= scene.readerSensitivityDBm
    }

    @Test("lowering the power removes exactly the tags the budget says", arguments: [30.0, 27.0, 22.0, 17.0, 12.0])
    func powerShrinksTheField(powerDBm: Double) {
        var generator = SplitMix64(seed: 7)
        let distances = (0..<80).map { _ in Double.random(in: 0.3...9, using: &generator) }
        var scene = RFScene(
            antennaGainDBi: 1, readerSensitivityDBm: -75, backscatterLossDB: 8, tagActivationThresholdDBm: -18,
            tags: distances.enumerated().map { RFScene.Tag(epc: RFFixtures.epc($0.offset), placement: .distance(meters: $0.element)) })
        scene.tags[0].placement = .distance(meters: 0.3)  // at least one tag at every power
        let expected = Set(
            scene.tags.indices.filter {
                Self.reachable(
                    distance: scene.tags[$0].placement.distance(at: 0)!, powerDBm: powerDBm, scene: scene, frequencyMHz: 915.25)
            })
        var field = RFField(scene: scene)
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(powerDBm: powerDBm, toggleAfter: 2))
        var found: Set<Int> = []
        inventory.run(in: &field, from: 0, maxRounds: 40) { round in
            found.formUnion(round.reads.map(\.tagIndex))
            return true
        }
        #expect(found == expected)
        #expect(!expected.isEmpty)
        if powerDBm == 30 { #expect(expected.count < 80, "some tags should be out of range even at full power") }
    }

    @Test func tagLimitedAndReaderLimitedTagsAreNotRead() {
        // Tag 0 wakes but is not heard (reader-limited); tag 1 is heard but does not wake.
        let scene = RFScene(
            antennaGainDBi: 0, readerSensitivityDBm: -60, backscatterLossDB: 10, tagActivationThresholdDBm: -18,
            tags: [
                RFScene.Tag(epc: RFFixtures.epc(0), placement: .pathLoss(dB: 45)),  // at tag -15, rssi -70
                RFScene.Tag(epc: RFFixtures.epc(1), placement: .pathLoss(dB: 20), activationThresholdDBm: 15),
                RFScene.Tag(epc: RFFixtures.epc(2), placement: .pathLoss(dB: 20)),
            ])
        var field = RFField(scene: scene)
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(toggleAfter: 1))
        var found: Set<Int> = []
        inventory.run(in: &field, from: 0, maxRounds: 10) { round in
            found.formUnion(round.reads.map(\.tagIndex))
            return true
        }
        #expect(found == [2])
        #expect(field.tags[0].isPowered)
        #expect(!field.tags[1].isPowered)
    }

    @Test func s1TagsWaitForTheirPersistenceTime() {
        var field = RFField(scene: RFFixtures.uniformScene(count: 20))
        var configuration = RFFixtures.configuration(session: .s1)
        configuration.maxRoundsPerSecond = 200
        var inventory = Gen2Inventory(configuration: configuration)
        var readTimes: [Int: [Double]] = [:]
        inventory.run(in: &field, from: 0, maxRounds: 10_000) { round in
            for read in round.reads { readTimes[read.tagIndex, default: []].append(read.time) }
            return round.startTime < 16
        }
        // Each tag keeps its own persistence, within Gen2's 0.5-5 s.
        let persistences = field.tags.map(\.s1Persistence)
        #expect(persistences.allSatisfy { Gen2Persistence.s1Bounds.contains($0) })
        #expect(persistences.max()! - persistences.min()! > 2, "\(persistences)")
        for i in 0..<20 {
            let persistence = field.tags[i].s1Persistence
            let times = readTimes[i] ?? []
            #expect(times.count >= 3, "tag \(i) read at \(times)")
            for (a, b) in zip(times, times.dropFirst()) {
                #expect(b - a >= persistence, "tag \(i) read again after \(b - a) s")
                #expect(b - a < persistence + 0.5, "tag \(i) waited \(b - a) s")
            }
        }
    }

    @Test func s0TagsThatLeaveAndComeBackAreReadAgain() {
        let away: [TagPlacement.Waypoint] = [
            .init(time: 0, distance: 1), .init(time: 1, distance: 1), .init(time: 1.2, distance: 60),
            .init(time: 3, distance: 60), .init(time: 3.2, distance: 1),
        ]
        let scene = RFScene(tags: [
            RFScene.Tag(epc: RFFixtures.epc(0), placement: .motion(away)),
            RFScene.Tag(epc: RFFixtures.epc(1), placement: .distance(meters: 1)),
        ])
        var field = RFField(scene: scene)
        var configuration = RFFixtures.configuration(session: .s0)
        configuration.maxRoundsPerSecond = 200
        var inventory = Gen2Inventory(configuration: configuration)
        var reads: [Int: [Double]] = [:]
        inventory.run(in: &field, from: 0, maxRounds: 10_000) { round in
            for read in round.reads { reads[read.tagIndex, default: []].append(read.time) }
            return round.startTime < 5
        }
        let moving = reads[0] ?? []
        #expect(moving.count == 2, "moving tag read at \(moving)")
        #expect(moving.first.map { $0 < 1 } == true)
        #expect(moving.last.map { $0 >= 3 } == true)
        // The tag that stayed powered keeps its S0 flag at B: read once.
        #expect(reads[1]?.count == 1)
    }

    @Test func s2FlagsSurviveShortPowerLossButNotLongOnes() {
        var field = RFField(scene: RFFixtures.uniformScene(count: 10))
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(session: .s2))
        var result = RFFixtures.inventoryUntilFound(Set(0..<10), field: &field, inventory: &inventory, maxRounds: 20)
        #expect(result.found.count == 10)
        // Carrier off for 1 s (shorter than the persistence): nothing is read again.
        field.setCarrier(nil, at: result.end)
        result = RFFixtures.inventoryUntilFound(Set(0..<10), field: &field, inventory: &inventory, from: result.end + 1, maxRounds: 5)
        #expect(result.found.isEmpty)
        // Off for longer than the persistence: all flags are back at A.
        field.setCarrier(nil, at: result.end)
        result = RFFixtures.inventoryUntilFound(
            Set(0..<10), field: &field, inventory: &inventory, from: result.end + field.persistence.s2s3Unpowered + 0.1, maxRounds: 20)
        #expect(result.found.count == 10)
    }

    @Test func togglingTheTargetFindsTheTagsAgain() {
        var field = RFField(scene: RFFixtures.uniformScene(count: 30))
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration(session: .s2, toggleAfter: 3))
        var rounds: [Gen2RoundResult] = []
        inventory.run(in: &field, from: 0, maxRounds: 200) { round in
            rounds.append(round)
            return rounds.filter(\.toggledTarget).count < 3
        }
        var readsPerTag = [Int](repeating: 0, count: 30)
        for round in rounds { for read in round.reads { readsPerTag[read.tagIndex] += 1 } }
        // Three passes (A, B, A) with the toggles in between.
        #expect(readsPerTag.allSatisfy { $0 == 3 }, "\(readsPerTag)")
        for (k, round) in rounds.enumerated() where round.toggledTarget {
            #expect(round.reads.isEmpty)
            // It follows exactly three rounds without finds.
            #expect(rounds[(k - 2)...k].allSatisfy { $0.reads.isEmpty })
            if k + 1 < rounds.count { #expect(rounds[k + 1].target != round.target) }
        }
        // Without toggling, the same field stays silent.
        var quiet = Gen2Inventory(configuration: RFFixtures.configuration(session: .s2, toggleAfter: 0))
        var later = 0
        quiet.run(in: &field, from: 100, maxRounds: 20) { round in
            later += round.reads.count
            return true
        }
        #expect(later == 0)  // every S2 flag is at B and stays there while powered
    }

    @Test func readsCarryFrequencyRSSIAndBankData() {
        var scene = RFFixtures.uniformScene(count: 5, pathLossDB: 30)
        scene.tags[3].user = [0xCA, 0xFE, 0xBA, 0xBE]
        var field = RFField(scene: scene)
        var configuration = RFFixtures.configuration()
        configuration.channelsMHz = [902.75, 915.25, 927.25]
        configuration.tidWordsToRead = 6
        configuration.userWordsToRead = 4
        var inventory = Gen2Inventory(configuration: configuration)
        var reads: [Gen2TagRead] = []
        var frequencies: [Double] = []
        // Three dwells of 0.4 s: the carrier stays on a channel across rounds (S0 flags stay at
        // B, nothing more is read there), and a hop drops it: every tag answers once per channel.
        var visits = 0
        inventory.run(in: &field, from: 0, maxRounds: 100_000) { round in
            if round.hopped { visits += 1 }
            guard visits <= 3 else { return false }
            reads += round.reads
            frequencies.append(round.frequencyMHz)
            return true
        }
        #expect(Set(frequencies) == [902.75, 915.25, 927.25])
        #expect(reads.count == 15)
        #expect(Dictionary(grouping: reads, by: \.frequencyMHz).values.allSatisfy { $0.count == 5 })
        #expect(Set(reads.map(\.tagIndex)) == Set(0..<5))
        for read in reads {
            #expect(configuration.channelsMHz.contains(read.frequencyMHz))
            #expect(read.tid == field.tags[read.tagIndex].memory.tid)
            #expect(read.tid.count == 6)
            #expect(read.pc == 0x3000 | (read.tagIndex == 3 ? 0x0400 : 0))
            // 30 dBm + 0 dBi − 2 × 30 dB − 8 dB
            #expect(abs(read.rssiDBm - -38) < 1e-9)
            let sum = pow(10, read.rssiIDBm / 10) + pow(10, read.rssiQDBm / 10)
            #expect(abs(10 * log10(sum) - read.rssiDBm) < 0.01)
        }
        #expect(reads.first { $0.tagIndex == 3 }?.user == [0xCAFE, 0xBABE])
        #expect(reads.first { $0.tagIndex == 0 }?.user == [])
    }

    @Test func roundDurationsComeFromLinkTimingAndTheRateCap() {
        var field = RFField(scene: RFFixtures.uniformScene(count: 1))
        var configuration = RFFixtures.configuration()
        configuration.initialQ = 0
        var inventory = Gen2Inventory(configuration: configuration)
        let round = inventory.runRound(in: &field, at: 0)
        #expect(round.reads.count == 1)
        #expect(round.slots == Gen2SlotStatistics(single: 1))
        // Query, RN16, ACK, 96-bit EPC at Tari 25 µs / BLF 250 kHz Miller 4: about 4.7 ms.
        let t = Gen2LinkTiming.denseReaderM4
        let expected = t.singleSlot(command: t.command(bits: 22, preamble: true), epcWords: 6, bankReads: []).total
        #expect(abs(round.airTime - expected) < 1e-12)
        #expect(round.airTime > 0.003 && round.airTime < 0.005)
        #expect(round.duration == round.airTime)

        configuration.maxRoundsPerSecond = 10
        var capped = Gen2Inventory(configuration: configuration)
        var field2 = RFField(scene: RFFixtures.uniformScene(count: 1))
        #expect(capped.runRound(in: &field2, at: 0).duration == 0.1)
    }

    @Test func aRoundStopsAtTheDwellLimit() {
        var field = RFField(scene: RFFixtures.uniformScene(count: 500))
        var inventory = Gen2Inventory(configuration: RFFixtures.configuration())
        let round = inventory.runRound(in: &field, at: 0)
        #expect(round.endedByDwellLimit)
        #expect(round.airTime <= 0.4 && round.airTime > 0.39)
        #expect(!round.reads.isEmpty && round.reads.count < 500)
    }

    @Test func varyingPowerSweepsATriangle() {
        var field = RFField(scene: RFFixtures.uniformScene(count: 1))
        var configuration = RFFixtures.configuration(powerDBm: 20)
        configuration.minPowerDBm = 18
        configuration.maxPowerDBm = 22
        configuration.powerStepDB = 2
        var inventory = Gen2Inventory(configuration: configuration)
        var powers: [Double] = []
        inventory.run(in: &field, from: 0, maxRounds: 7) { round in
            powers.append(round.powerDBm)
            return true
        }
        #expect(powers == [20, 22, 20, 18, 20, 22, 20])
    }

    @Test func theSameSeedGivesTheSameRounds() {
        func rounds(seed: UInt64) -> [Gen2RoundResult] {
            var field = RFField(scene: RFFixtures.uniformScene(count: 50))
            var configuration = RFFixtures.configuration(seed: seed)
            configuration.channelsMHz = Gen2InventoryConfiguration.fccChannelsMHz
            var inventory = Gen2Inventory(configuration: configuration)
            var all: [Gen2RoundResult] = []
            inventory.run(in: &field, from: 0, maxRounds: 5) { all.append($0); return true }
            return all
        }
        #expect(rounds(seed: 9) == rounds(seed: 9))
        #expect(rounds(seed: 9) != rounds(seed: 10))
    }

    @Test func captureLetsTheStrongestThroughACollision() {
        // Two tags, Q fixed at 0: they always share the one slot.
        let scene = RFScene(tags: [
            RFScene.Tag(epc: RFFixtures.epc(0), placement: .pathLoss(dB: 20)),
            RFScene.Tag(epc: RFFixtures.epc(1), placement: .pathLoss(dB: 30)),
        ])
        var configuration = RFFixtures.configuration()
        configuration.initialQ = 0
        configuration.maxQ = 0
        configuration.captureMarginDB = nil
        var plain = Gen2Inventory(configuration: configuration)
        var field = RFField(scene: scene)
        let lost = plain.runRound(in: &field, at: 0)
        // The reader retries the colliders (QueryAdjust) until its time on the channel is up.
        #expect(lost.reads.isEmpty && lost.slots.collided == lost.slots.total && lost.endedByDwellLimit)

        configuration.captureMarginDB = 6  // the RSSIs differ by 20 dB
        var capturing = Gen2Inventory(configuration: configuration)
        var field2 = RFField(scene: scene)
        let first = capturing.runRound(in: &field2, at: 0)
        #expect(first.reads.map(\.tagIndex) == [0] && first.slots.captured == 1)
        let second = capturing.runRound(in: &field2, at: first.duration)
        #expect(second.reads.map(\.tagIndex) == [1] && second.slots.single == 1)
    }
}
