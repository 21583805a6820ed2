import Foundation
import GrokLink
import GrokAudio
import GrokProtocol
import Testing

@testable import GrokkerEmulator

/// The emulated Grokker obeys its region: channels, dwell, round period, power cap and
/// listen before talk (docs/regions.md, "What the emulated Grokker does").
@Suite("Region obedience")
struct RegionObedienceTests {
    static func setting(_ code: String) -> RegionSetting { RegionCatalog.find(code)!.setting }

    /// Runs an inventory in `region` on `scene` for `seconds` of device time; returns the
    /// runner (its round log kept) and every report taken.
    static func run(_ region: String, scene: RFScene, seconds: Double, parameters: InventoryParameters = InventoryParameters())
        -> (runner: InventoryRunner, reports: [TagReport]) {
        let runner = InventoryRunner(field: RFField(scene: scene))
        runner.keepsRounds = true
        runner.start(parameters, region: setting(region), at: 0, seed: 7)
        var reports: [TagReport] = []
        var t = 0.0
        while t < seconds {
            t += 0.05
            runner.advance(to: t)
            reports += runner.takeReports(limit: 1000)
        }
        return (runner, reports)
    }

    @Test("reads carry only the region's channels: FCC all 50, ETSI its 4, ETSI high its 3, China its 16, each visited for its dwell",
          arguments: [("fcc", 50), ("etsi", 4), ("etsi_high", 3), ("china", 16)])
    func hopsOnlyOnTheRegionsChannels(code: String, count: Int) throws {
        let entry = try #require(RegionCatalog.entry(for: Self.setting(code)))
        #expect(entry.channelsKHz.count == count)
        // One dwell per channel, and a little more: every channel once.
        let seconds = Double(count * entry.maxDwellMilliseconds) / 1000 + 0.2
        let (runner, reports) = Self.run(code, scene: RFFixtures.uniformScene(count: 3), seconds: seconds)
        let seen = Set(reports.map { Int($0.frequencyKHz) })
        #expect(!reports.isEmpty)
        #expect(seen.isSubset(of: Set(entry.channelsKHz)), "\(code): \(seen.sorted())")
        let hopped = Set(runner.roundLog.map { Int(($0.frequencyMHz * 1000).rounded()) })
        #expect(hopped == Set(entry.channelsKHz), "\(code) hops on every channel and nothing else")
    }

    @Test("no round stays on a frequency longer than the region's dwell, even with 500 tags to read",
          arguments: ["fcc", "china"])
    func neverDwellsTooLong(code: String) throws {
        let entry = try #require(RegionCatalog.entry(for: Self.setting(code)))
        let (runner, _) = Self.run(code, scene: RFFixtures.uniformScene(count: 500), seconds: 2 * Double(entry.maxDwellMilliseconds) / 1000)
        let dwell = Double(entry.maxDwellMilliseconds) / 1000
        #expect(runner.roundLog.contains { $0.endedByDwellLimit }, "the population is large enough to reach the limit")
        for round in runner.roundLog {
            #expect(round.airTime - round.listenTime <= dwell + 1e-12)
        }
    }

    @Test("the carrier stays on a channel across rounds for up to the region's dwell: S0 tags stay powered and answer once per visit",
          arguments: ["fcc", "china"])
    func dwellsPerChannel(code: String) throws {
        let entry = try #require(RegionCatalog.entry(for: Self.setting(code)))
        let dwell = Double(entry.maxDwellMilliseconds) / 1000
        var s0 = InventoryParameters()
        s0.roundsWithNoFindsToToggleAB = 0
        let (runner, _) = Self.run(code, scene: RFFixtures.uniformScene(count: 5), seconds: 3 * dwell + 0.05, parameters: s0)
        let rounds = runner.roundLog
        // Visits: runs of rounds on one channel, each starting with a hop.
        var visits: [[Gen2RoundResult]] = []
        for round in rounds {
            if round.hopped { visits.append([round]) } else { visits[visits.count - 1].append(round) }
        }
        #expect(rounds.first?.hopped == true)
        #expect(visits.count >= 3, "\(visits.count) visits")
        for visit in visits {
            let since = visit[0].channelSince
            #expect(visit.allSatisfy { $0.frequencyMHz == visit[0].frequencyMHz && $0.channelSince == since })
            // None transmitting past the channel's dwell.
            #expect(visit.allSatisfy { $0.startTime + $0.airTime - since <= dwell + 1e-9 })
        }
        // Every whole visit (the last is cut short by the end of the run): many rounds, lasting
        // close to the dwell (the last round stops when no slot fits), and the five tags,
        // powered all the while, read once.
        for visit in visits.dropLast() {
            let last = visit[visit.count - 1]
            #expect(visit.count > 10, "\(visit.count) rounds")
            #expect(last.startTime + last.airTime - visit[0].channelSince > dwell - 0.05)
            #expect(visit.flatMap(\.reads).count == 5, "\(visit.flatMap(\.reads).count) reads")
        }
    }

    @Test("without a SetRegion entry (a state written by hand), a unit runs its region's allocation for its own hardware band")
    func allocationForTheUnitsBand() throws {
        let russia = Self.setting("russia")
        let upper = try #require(RegionCatalog.entry(number: russia.number, band: .band900))
        #expect(InventoryRunner.rules(for: russia, band: .band900).channelsKHz == upper.channelsKHz)
        #expect(InventoryRunner.rules(for: russia, band: .band860).channelsKHz == [866_300, 866_900, 867_500])
        #expect(InventoryRunner.rules(for: russia).channelsKHz == [866_300, 866_900, 867_500])
        #expect(Set(InventoryRunner.hopTable(region: russia, table: nil, band: .band900)) == Set(upper.channelsKHz))
        // FCC has no 860 MHz allocation: its one stands.
        #expect(InventoryRunner.rules(for: Self.setting("fcc"), band: .band860).channelsKHz.count == 50)
    }

    @Test("rounds never start closer than the region's min ms per round")
    func respectsTheMinimumRound() throws {
        let entry = try #require(RegionCatalog.entry(number: 1))
        let minimum = Double(entry.minRoundMilliseconds) / 1000
        // An empty field: every round is one empty frame, far shorter than the minimum.
        let (runner, _) = Self.run("fcc", scene: RFScene(tags: []), seconds: 1)
        #expect(runner.roundLog.count > 50)
        #expect(runner.roundLog.allSatisfy { $0.airTime < minimum })
        for (a, b) in zip(runner.roundLog, runner.roundLog.dropFirst()) {
            #expect(b.startTime - a.startTime >= minimum - 1e-12)
        }
    }

    /// Tags at 1...6 m in free space; with 0 dBi the reader's conducted power is its EIRP.
    static let farScene = RFScene(tags: (0..<11).map { i in
        RFScene.Tag(name: "t\(i)", epc: RFFixtures.epc(i), placement: .distance(meters: 1 + 0.5 * Double(i)))
    })

    @Test("a configuration asking for 30 dBm is capped at the region's limit, and the cap decides which far tags answer")
    func powerIsCapped() throws {
        var p = InventoryParameters()
        p.initialPowerTenthsDBm = 300
        p.minPowerTenthsDBm = 300
        p.maxPowerTenthsDBm = 300
        let fcc = Self.run("fcc", scene: Self.farScene, seconds: 3, parameters: p)
        let japan = Self.run("japan_unlicensed", scene: Self.farScene, seconds: 3, parameters: p)
        #expect(fcc.runner.regionPowerCapDBm == 36)
        // Japan's licence-free class: 13 dBm EIRP (docs/regions.md), below the 30 dBm asked for.
        let japanCap = RegionCatalog.entries[5].maxEIRPDBm
        #expect(japanCap == 13)
        #expect(japan.runner.regionPowerCapDBm == japanCap)
        #expect(fcc.runner.roundLog.allSatisfy { $0.powerDBm == 30 })
        #expect(japan.runner.roundLog.allSatisfy { $0.powerDBm == japanCap })
        // The link budget decides, at the power actually used, on the region's channels.
        let field = RFField(scene: Self.farScene)
        func reachable(_ power: Double, on channels: [Double], all: Bool) -> Set<[UInt8]> {
            Set(field.tags.indices.filter { i in
                let each = channels.map { field.isReachable(i, at: 0, carrier: RFCarrier(powerDBm: power, frequencyMHz: $0)) }
                return all ? each.allSatisfy { $0 } : each.contains(true)
            }.map { field.tags[$0].epc })
        }
        let japanChannels = RegionCatalog.entries[5].channelsMHz
        let fccChannels = RegionCatalog.entries[0].channelsMHz
        let foundFCC = Set(fcc.reports.map(\.epc))
        let foundJapan = Set(japan.reports.map(\.epc))
        #expect(foundJapan.isSubset(of: reachable(japanCap, on: japanChannels, all: false)))
        #expect(reachable(japanCap, on: japanChannels, all: true).isSubset(of: foundJapan))
        #expect(reachable(30, on: fccChannels, all: true).isSubset(of: foundFCC))
        #expect(foundJapan.count < foundFCC.count, "\(foundJapan.count) vs \(foundFCC.count)")
        #expect(!foundFCC.isSubset(of: reachable(japanCap, on: japanChannels, all: false)), "FCC at 30 dBm reaches tags Japan's 13 dBm cannot")
    }

    @Test("listen before talk: every round listens the region's 5 ms before transmitting; exactly the channels a scene's interferer holds above the threshold are skipped")
    func listensBeforeTalking() throws {
        let japan = try #require(RegionCatalog.entry(number: 6))
        let listen = Double(japan.listenBeforeTalk.listenMilliseconds) / 1000
        let threshold = Double(japan.listenBeforeTalk.thresholdDBm)
        // Tags close enough to answer Japan's licence-free 13 dBm EIRP; one interferer 10 dB
        // above the threshold on 916.8 MHz, one 10 dB below it on 918.0 MHz.
        var near = RFFixtures.uniformScene(count: 5, pathLossDB: 25)
        near.interferers = [
            RFScene.Interferer(frequencyMHz: 916.8, powerDBm: threshold + 10),
            RFScene.Interferer(frequencyMHz: 918.0, powerDBm: threshold - 10),
        ]
        // Carrier sense before each channel's transmission (ARIB STD-T107): every hop listens,
        // rounds that go on on a channel do not. Every channel once: 19 visits of 4 s.
        let (runner, reports) = Self.run("japan_unlicensed", scene: near, seconds: 19 * 4 + 0.2)
        #expect(!reports.isEmpty)
        #expect(runner.roundLog.allSatisfy { $0.listenTime == ($0.hopped ? listen : 0) })
        #expect(Set(runner.roundLog.map(\.frequencyMHz)).count == 19)
        let busy = runner.roundLog.filter(\.channelBusy)
        #expect(!busy.isEmpty)
        #expect(runner.roundLog.allSatisfy { $0.channelBusy == (abs($0.frequencyMHz - 916.8) < 1e-6) })
        #expect(busy.allSatisfy { $0.reads.isEmpty && $0.slots.total == 0 })
        #expect(Set(reports.map(\.frequencyKHz)).contains(918_000) && !Set(reports.map(\.frequencyKHz)).contains(916_800))
        for round in runner.roundLog where !round.channelBusy {
            #expect(round.reads.allSatisfy { $0.time >= round.startTime + listen })
        }
        // Without interferers no channel is busy.
        let quiet = Self.run("japan_unlicensed", scene: RFFixtures.uniformScene(count: 5, pathLossDB: 25), seconds: 1)
        #expect(!quiet.runner.roundLog.contains { $0.channelBusy })
    }

    @Test("listening adds exactly the listen time to a round; it is on only where the region allows")
    func listeningAddsTheListenTime() {
        // S2: the flags outlast the 5 ms the carrier is off while the reader listens.
        var quiet = RFFixtures.configuration(session: .s2, toggleAfter: 1)
        quiet.minRoundSeconds = 0
        var listening = quiet
        listening.listenBeforeTalk = Gen2ListenBeforeTalk(listenSeconds: 0.005, thresholdDBm: -74)
        var a = Gen2Inventory(configuration: quiet)
        var b = Gen2Inventory(configuration: listening)
        var fieldA = RFField(scene: RFFixtures.uniformScene(count: 20))
        var fieldB = RFField(scene: RFFixtures.uniformScene(count: 20))
        var t = 0.0
        for i in 0..<5 {
            let ra = a.runRound(in: &fieldA, at: t)
            let rb = b.runRound(in: &fieldB, at: t)
            // The first round hops onto its channel and listens; the others go on on it.
            let listened = i == 0 ? 0.005 : 0
            #expect(rb.hopped == (i == 0) && abs(rb.airTime - ra.airTime - listened) < 1e-12)
            #expect(ra.reads.map(\.epc) == rb.reads.map(\.epc))
            #expect(zip(ra.reads, rb.reads).allSatisfy { abs($1.time - $0.time - listened) < 1e-12 })
            t += max(ra.duration, rb.duration)
        }
        // Japan (licensed): off by default, on when asked. FCC too (the vendor offered it, and
        // 47 CFR 15.247(h) lets a hopping reader avoid occupied channels).
        var on = InventoryParameters()
        on.listenBeforeTalk = true
        #expect(Self.run("japan_licensed", scene: RFScene(tags: []), seconds: 0.2).runner.roundLog.allSatisfy { $0.listenTime == 0 })
        #expect(Self.run("japan_licensed", scene: RFScene(tags: []), seconds: 0.2, parameters: on).runner.roundLog.allSatisfy { $0.listenTime == ($0.hopped ? 0.005 : 0) })
        #expect(Self.run("fcc", scene: RFScene(tags: []), seconds: 0.2).runner.roundLog.allSatisfy { $0.listenTime == 0 })
        #expect(Self.run("fcc", scene: RFScene(tags: []), seconds: 0.2, parameters: on).runner.roundLog.allSatisfy { $0.listenTime == ($0.hopped ? 0.005 : 0) })
        var off = InventoryParameters()
        off.listenBeforeTalk = false
        #expect(Self.run("japan_unlicensed", scene: RFScene(tags: []), seconds: 0.2, parameters: off).runner.roundLog.allSatisfy { $0.listenTime == ($0.hopped ? 0.005 : 0) })
    }

    @Test("over the link: inventory is refused (code 3) until SetRegion, then the rounds hop on the new region's channels only")
    func setRegionOverTheLinkIsObeyed() throws {
        let bench = try VendorHostBench { $0.region = nil; $0.provisioning.userHasSetRegion = false }
        try bench.connect()
        let start = try VendorRfidConfiguration.preset(.inventoryDistance).inventoryStart(volumeLevels: 8)
        #expect(try bench.call(.inventory(start, .full), slaveMode: .inventory)?.id == 3)
        let etsi = try #require(RegionCatalog.find("etsi"))
        let entry = try VendorRegionEntry(try #require(RegionCatalog.entry(number: etsi.setting.number)))
        #expect(try bench.call(.setRegion(try VendorSetRegion(entry: entry.encode())))?.id == 0)
        bench.grokker.inventory.keepsRounds = true
        #expect(try bench.call(.inventory(start, .full), slaveMode: .inventory)?.id == 0)
        try bench.run(seconds: 1)
        let rounds = bench.grokker.inventory.roundLog
        #expect(rounds.count > 5)
        let allowed = Set(InventoryRunner.rules(for: etsi.setting).channelsMHz)
        #expect(rounds.allSatisfy { allowed.contains($0.frequencyMHz) }, "\(Set(rounds.map(\.frequencyMHz)).sorted())")
    }
}
