import GrokBasics
import GrokAudio
import GrokProtocol

extension RFScene {
    /// The field an emulated Grokker sees when its directory holds no scene of its own:
    /// 24 SGTIN-96 retail tags (the GS1 Tag Data Standard's example company and item, serials
    /// drawn from `seed`) spread from 0.4 m to 5 m, plus one tag out of reach at 40 m. The
    /// same seed gives the same field, so a unit keeps its tags from run to run.
    public static func standardBench(seed: UInt64) -> RFScene {
        // urn:epc:tag:sgtin-96:3.0614141.812345.S: header, filter, partition, company and item
        // fill the first 58 bits (the TDS example's), the last 38 bits are the serial.
        let prefix: [UInt8] = [0x30, 0x74, 0x25, 0x7B, 0xF7, 0x19, 0x4E, 0x40]
        var random = SplitMix64(seed: seed &+ 0x5343_454E_45)
        var tags: [Tag] = []
        for i in 0..<25 {
            let serial = random.next() & ((1 << 38) - 1)
            var epc = prefix
            epc[7] |= UInt8(truncatingIfNeeded: serial >> 32) & 0x3F
            for shift in stride(from: 24, through: 0, by: -8) { epc.append(UInt8(truncatingIfNeeded: serial >> UInt64(shift))) }
            let meters = i == 24 ? 40.0 : 0.4 + 4.6 * Double(i) / 23
            tags.append(Tag(name: "item \(i + 1)", epc: epc, placement: .distance(meters: meters)))
        }
        return RFScene(tags: tags)
    }

    /// The EPCs the shipped profiles' smoke tests expect to read (`profiles/bench-us.json`,
    /// `profiles/verify-us.json`: `smoke_test.reference_tags`): the demo scene's nearest
    /// jeans, sneakers and t-shirt.
    public static let referenceTags: [(name: String, epc: String, meters: Double)] = [
        ("reference jeans", "3034257BF4789000000003E8", 0.3),
        ("reference sneakers", "3034257BF4DA1C00000003EF", 0.6),
        ("reference t-shirt", "3034257BF4789040000003ED", 1.2),
    ]

    /// The tag the README's examples name (`grokctl locate 3074257BF7194E4000001A85`): an
    /// item of the standard bench's company and product with serial 6789, at 1 m.
    public static let exampleTag = (name: "example item", epc: "3074257BF7194E4000001A85", meters: 1.0)

    /// The field of an emulated Grokker on the default bench (`sim:N` with no `scene.json`
    /// of its own): the ``standardBench(seed:)``, then the shipped profiles'
    /// ``referenceTags`` and the README's ``exampleTag``, so that the README's commands and
    /// the shipped profiles' smoke tests work on a bench nobody set up.
    public static func defaultBench(seed: UInt64) -> RFScene {
        var scene = standardBench(seed: seed)
        for tag in referenceTags + [exampleTag] {
            scene.tags.append(Tag(name: tag.name, epc: try! SceneDecoding.bytes(fromHex: tag.epc).get(), placement: .distance(meters: tag.meters)))
        }
        return scene
    }

}

/// The reader's side of an inventory on an emulated Grokker: runs Gen2 rounds on the field
/// as the device clock advances, and gathers the reads into reports for the link.
///
/// Reads wait here, one per tag (the newest wins), until the link has room: the report rate
/// follows what the audio link carries, as a real reader's must.
final class InventoryRunner {
    private(set) var field: RFField
    private var engine: Gen2Inventory?
    private var startTime = 0.0
    private var nextRound = 0.0
    private var minRoundInterval = 0.0
    private var pendingOrder: [[UInt8]] = []
    private var pending: [[UInt8]: TagReport] = [:]
    private var reportOnce = false
    private var detailWords: [WordAddress] = []
    private var reported: Set<[UInt8]> = []
    /// Rounds and reads since the diagnostics were last reset, across inventories.
    private(set) var totalRounds = 0
    private(set) var totalReads = 0
    /// EPC replies lost to bit errors (failed CRC) since the diagnostics were last reset.
    /// The vendor's diagnostics have no field for them (their CRC mismatches are the audio
    /// link's packets), so they are not sent.
    private(set) var totalCRCFailures = 0
    /// Distinct EPCs read since the diagnostics were last reset.
    private(set) var uniqueEPCs: Set<[UInt8]> = []
    /// Reads replaced by a newer read of the same tag while they waited for the link.
    private(set) var merged = 0
    /// Reads still waiting when the inventory stopped: never sent.
    private(set) var droppedUnsent = 0
    /// Query rounds of the running inventory (0 when none runs).
    private(set) var rounds = 0
    /// The EPCs the reader filters on (empty: all), and those of them found so far.
    private var wanted: Set<[UInt8]> = []
    private var found: Set<[UInt8]> = []
    /// Called after each round: reportable reads, first finds, whether the wanted EPCs have
    /// just all been found, and the time (the sounds follow this).
    var onRound: ((_ reads: Int, _ firstFinds: Int, _ foundAll: Bool, _ time: Double) -> Void)?
    /// Called after each round with its carrier (the antenna's reflected power follows this).
    var onCarrier: ((_ frequencyMHz: Double, _ powerDBm: Double) -> Void)?

    func resetTotals() {
        totalRounds = 0
        totalReads = 0
        totalCRCFailures = 0
        uniqueEPCs.removeAll()
        merged = 0
        droppedUnsent = 0
    }

    init(field: RFField) {
        self.field = field
    }

    var isRunning: Bool { engine != nil }

    func saveState(to path: String) throws(SceneError) {
        try field.saveState(to: path)
    }

    func loadState(from path: String) throws(SceneError) {
        try field.loadState(from: path)
    }

    /// Starts (or restarts) an inventory at `time` seconds of the device clock.
    func start(_ p: InventoryParameters, region: RegionSetting?, table: VendorRegionEntry? = nil, band: VendorFrequencyBand? = nil,
               at time: Double, seed: UInt64) {
        let select = p.selectMask.isEmpty ? nil
            : Gen2Select(bank: Gen2Bank(rawValue: p.selectBank) ?? .epc, bitOffset: Int(p.selectBitOffset),
                         bitLength: Int(p.selectBitLength), mask: p.selectMask)
        // The region's rules bound everything on the air: its channels, dwell, round period,
        // listen before talk and power (a configuration asking for more power gets the cap).
        let rules = Self.rules(for: region, table: table, band: band, antennaGainDBi: field.scene.antennaGainDBi)
        let cap = rules.maxConductedPowerDBm(antennaGainDBi: field.scene.antennaGainDBi)
        regionPowerCapDBm = cap
        func capped(_ tenths: Int16) -> Double { min(Double(tenths) / 10, cap) }
        let lbt = rules.listenBeforeTalk
        let configuration = Gen2InventoryConfiguration(
            powerDBm: capped(p.initialPowerTenthsDBm), minPowerDBm: capped(p.minPowerTenthsDBm),
            maxPowerDBm: capped(p.maxPowerTenthsDBm), initialQ: Int(p.initialQ), minQ: Int(p.minQ),
            maxQ: Int(p.maxQ), session: Gen2Session(rawValue: Int(p.session)) ?? .s0,
            roundsWithNoFindsToToggleAB: Int(p.roundsWithNoFindsToToggleAB), select: select,
            channelsMHz: rules.channelsMHz, maxRoundsPerSecond: p.maxRoundsPerSecond > 0 ? Double(p.maxRoundsPerSecond) : nil,
            maxDwellSeconds: Double(rules.maxDwellMilliseconds) / 1000,
            minRoundSeconds: Double(rules.minRoundMilliseconds) / 1000,
            listenBeforeTalk: lbt.isOn(requested: p.listenBeforeTalk)
                ? Gen2ListenBeforeTalk(listenSeconds: Double(lbt.listenMilliseconds) / 1000, thresholdDBm: Double(lbt.thresholdDBm))
                : nil,
            tidWordsToRead: (Int(p.tidBytes) + 1) / 2, userWordsToRead: (Int(p.userBytes) + 1) / 2,
            reservedWordsToRead: (Int(p.reservedBytes) + 1) / 2, seed: seed)
        engine = Gen2Inventory(configuration: configuration)
        field.reader = RFReaderSettings(
            sensitivityDBm: Double(p.sensitivityTenthsDBm) / 10, writePowerDBm: capped(p.writePowerTenthsDBm),
            writeSensitivityDBm: Double(p.writeSensitivityTenthsDBm) / 10)
        startTime = time
        nextRound = time
        minRoundInterval = p.maxRoundsPerSecond > 0 ? 1 / Double(p.maxRoundsPerSecond) : 0
        reportOnce = !p.reportSubsequentFinds
        reported.removeAll()
        wanted = Set(p.epcs)
        detailWords = p.detailWords
        found.removeAll()
        droppedUnsent += pending.count
        pending.removeAll()
        pendingOrder.removeAll()
        rounds = 0
    }

    func stop() {
        engine = nil
        droppedUnsent += pending.count
        pending.removeAll()
        pendingOrder.removeAll()
        rounds = 0
    }

    /// The regulatory values the reader obeys in `region` (the firmware's table,
    /// ``RegionCatalog/entry(for:)``): the region's allocation for the unit's hardware `band`
    /// when it has one (Russia: 866-868 or 916-921 MHz), else its first. A unit whose region
    /// is not set (only possible when its hardware does not enforce one) runs under FCC rules.
    static func rules(for region: RegionSetting?, band: VendorFrequencyBand? = nil) -> RegionEntry {
        guard let first = region.flatMap(RegionCatalog.entry(for:)) else { return RegionCatalog.entries[0] }
        return band.flatMap { RegionCatalog.entry(number: first.number, band: $0) } ?? first
    }

    /// The rules an inventory obeys: the entry the last SetRegion carried when there is one
    /// (its channels in the order sent, its dwell, round, listening and conducted power, as a
    /// reader keeps the table it was given), else those of ``rules(for:)``.
    static func rules(for region: RegionSetting?, table: VendorRegionEntry?, band: VendorFrequencyBand? = nil,
                      antennaGainDBi: Double) -> RegionEntry {
        guard let table = current(table, region), var entry = RegionEntry(vendor: table, antennaGainDBi: antennaGainDBi) else {
            return rules(for: region, band: band)
        }
        entry.channelsKHz = table.channelsKHz
        return entry
    }

    /// `table` when it is the entry of `region` (a region set since by other means, a state
    /// file edited by hand, leaves an older table behind: the built-in entry applies then).
    static func current(_ table: VendorRegionEntry?, _ region: RegionSetting?) -> VendorRegionEntry? {
        guard let table, let region, UInt16(table.index) + 1 == region.number else { return nil }
        return table
    }

    /// The hop table as the host knows it (per-read records name a channel by its index in
    /// it): the SetRegion entry's channels in the order sent, else the built-in entry's in
    /// the order the vendor's host sends them.
    static func hopTable(region: RegionSetting?, table: VendorRegionEntry?, band: VendorFrequencyBand? = nil) -> [Int] {
        if let table = current(table, region) { return table.channelsKHz }
        let entry = rules(for: region, band: band)
        return (try? VendorRegionEntry(entry))?.channelsKHz ?? entry.channelsKHz
    }

    /// The power cap of the running (or last) inventory's region, dBm at the antenna port.
    private(set) var regionPowerCapDBm: Double?
    /// The round results of the running inventory, newest last, when ``keepsRounds`` is set
    /// (tests check channels, dwell and listening).
    private(set) var roundLog: [Gen2RoundResult] = []
    /// Keep ``roundLog``.
    var keepsRounds = false

    /// The detail words of tag `index` as its memory holds them now, up to the first one
    /// past the end of its bank.
    private func detailData(ofTag index: Int) -> [UInt16] {
        var words: [UInt16] = []
        let memory = field.tags[index].memory
        for address in detailWords {
            let bank = memory.words(of: address.bank)
            guard Int(address.wordOffset) < bank.count else { break }
            words.append(bank[Int(address.wordOffset)])
        }
        return words
    }

    /// Runs every round due by `time`.
    func advance(to time: Double) {
        guard var engine else { return }
        while nextRound <= time {
            let round = engine.runRound(in: &field, at: nextRound)
            if keepsRounds { roundLog.append(round) }
            totalRounds += 1
            totalCRCFailures += round.slots.crcFailed
            rounds += 1
            var reads = 0
            var firstFinds = 0
            let allFoundBefore = !wanted.isEmpty && found.count == wanted.count
            for read in round.reads {
                totalReads += 1
                uniqueEPCs.insert(read.epc)
                if !wanted.isEmpty, !wanted.contains(read.epc) { continue }
                reads += 1
                if found.insert(read.epc).inserted { firstFinds += 1 }
                if reportOnce, reported.contains(read.epc) { continue }
                let report = TagReport(
                    epc: read.epc, pc: read.pc, rssiITenthsDBm: Int16(clamping: Int((read.rssiIDBm * 10).rounded())),
                    rssiQTenthsDBm: Int16(clamping: Int((read.rssiQDBm * 10).rounded())),
                    frequencyKHz: UInt32((read.frequencyMHz * 1000).rounded()),
                    milliseconds: UInt32(max(0, (read.time - startTime) * 1000)),
                    tid: TagMemory.bytes(fromWords: read.tid), user: TagMemory.bytes(fromWords: read.user),
                    reserved: TagMemory.bytes(fromWords: read.reserved), readData: detailData(ofTag: read.tagIndex))
                if pending.updateValue(report, forKey: read.epc) == nil {
                    pendingOrder.append(read.epc)
                } else {
                    merged += 1
                }
            }
            let foundAll = !allFoundBefore && !wanted.isEmpty && found.count == wanted.count
            onRound?(reads, firstFinds, foundAll, nextRound + round.airTime)
            onCarrier?(round.frequencyMHz, round.powerDBm)
            nextRound += max(round.duration, minRoundInterval, 1e-4)
        }
        self.engine = engine
    }

    /// Changes the running inventory's power (vendor `changePower`), from the next round.
    /// Returns `false` when no inventory runs.
    func changePower(_ range: PowerRange) -> Bool {
        guard engine != nil else { return false }
        engine!.changePower(powerDBm: Double(range.initialTenthsDBm) / 10, minPowerDBm: Double(range.minTenthsDBm) / 10,
                            maxPowerDBm: Double(range.maxTenthsDBm) / 10)
        return true
    }

    /// The running inventory's power for the next round, dBm.
    var powerDBm: Double? { engine?.powerDBm }

    /// One tag-access operation on the field at `time` (the carrier is on while the
    /// inventory runs): the tag's result and the words it answered (reads, custom commands).
    func access(epc: [UInt8], _ operation: TagOperation, at time: Double) -> (status: TagAccessStatus, words: [UInt16]) {
        switch operation {
        case .read(let b, let pointer, let count, let password):
            let result = field.read(epc: epc, bank: b, wordPointer: Int(pointer), wordCount: Int(count),
                                    password: password, at: time)
            return (result.result, words: Array(result.words.prefix(255)))
        case .write(let b, let pointer, let words, let password):
            return (field.write(epc: epc, bank: b, wordPointer: Int(pointer), words: words,
                                          password: password, at: time), words: [])
        case .programEPC(let newEPC, let password):
            return (field.programEPC(epc: epc, newEPC: newEPC, password: password, at: time), words: [])
        case .setAccessPassword(let new, let password):
            return (field.setAccessPassword(epc: epc, newPassword: new, password: password, at: time), words: [])
        case .setKillPassword(let new, let password):
            return (field.setKillPassword(epc: epc, newPassword: new, password: password, at: time), words: [])
        case .lock(let payload, let password):
            return (field.lock(epc: epc, payload: Gen2LockPayload(rawValue: payload), password: password,
                                         at: time), words: [])
        case .kill(let killPassword):
            return (field.kill(epc: epc, killPassword: killPassword, at: time), words: [])
        case .custom(let command):
            let result = field.customCommand(epc: epc, command, timing: engine?.configuration.timing ?? .denseReaderM4, at: time)
            return (result.result, words: Array(result.words.prefix(255)))
        }
    }

    /// Up to `limit` waiting reports, oldest tag first.
    func takeReports(limit: Int) -> [TagReport] {
        let n = min(limit, pendingOrder.count)
        guard n > 0 else { return [] }
        let taken = pendingOrder.prefix(n)
        pendingOrder.removeFirst(n)
        let reports = taken.compactMap { pending.removeValue(forKey: $0) }
        if reportOnce { for r in reports { reported.insert(r.epc) } }
        return reports
    }
}
