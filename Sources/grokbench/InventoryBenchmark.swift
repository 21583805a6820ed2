import GrokBasics
import Foundation
import GrokAudio
import GrokkerEmulator
import GrokProtocol
import UGrokIt

/// The host side of inventory: how many tag reads the tracker aggregates per CPU second,
/// and how much memory 10,000 distinct tags take.
enum InventoryBenchmark {
    static func run() -> Figures {
        var figures = Figures()
        let tags = 10_000
        let reads = 2_000_000
        var configuration = UgiRfidConfiguration()
        configuration.reportSubsequentFinds = true
        configuration.detailedPerReadData = false
        // Reads are made in batches of 10,000 outside the timed part, so only the tracker is
        // timed and memory holds one batch: 10,000 tags, each read about 200 times over 100 s
        // of reader time (20,000 reads per second).
        var rng = SplitMix64(seed: 9)
        let tracker = InventoryTracker(start: Date(timeIntervalSince1970: 0), configuration: configuration)
        var events = 0
        var cpu = 0.0
        var batch: [TagReport] = []
        batch.reserveCapacity(10_000)
        var made = 0
        while made < reads {
            batch.removeAll(keepingCapacity: true)
            for _ in 0..<10_000 {
                let tag = Int(rng.next() % UInt64(tags))
                var epc = [UInt8](repeating: 0x30, count: 12)
                epc[8] = UInt8(tag >> 16 & 0xFF)
                epc[9] = UInt8(tag >> 8 & 0xFF)
                epc[10] = UInt8(tag & 0xFF)
                batch.append(TagReport(epc: epc, pc: 0x3000, rssiITenthsDBm: -600, rssiQTenthsDBm: -610,
                                       frequencyKHz: 902_750, milliseconds: UInt32(made / 20)))
                made += 1
            }
            let t0 = LinkBenchmark.cpuSeconds()
            for report in batch { tracker.take(report) }
            events += tracker.drainEvents().count
            cpu += LinkBenchmark.cpuSeconds() - t0
        }
        figures.set("host_reports_per_s", Double(reads) / cpu, digits: 0)
        figures.set("distinct_tags", Double(tracker.count))
        figures.set("events", Double(events))
        // The same seeds and run counts as the test suite's pooled check.
        for (tags, runs) in [(100, 200), (300, 80), (500, 48)] {
            let slots = slotEfficiency(tags: tags, runs: runs)
            figures.set("slot_efficiency_\(tags)_tags", slots.efficiency, digits: 4)
            figures.set("rounds_to_find_\(tags)_tags_max", Double(slots.maxRounds))
        }
        // End to end on the vendor stack: ReaderSession -> clean simulated cable -> EmulatedGrokker.
        if let session = try? sessionInventory(audioSeconds: 10) {
            figures.set("session_connect_audio_ms", session.connectMs, digits: 0)
            figures.set("session_reads_per_audio_s", Double(session.reads) / session.audioSeconds, digits: 1)
            figures.set("session_distinct_tags", Double(session.tags))
            figures.set("session_cpu_s_per_audio_s", session.cpu / session.audioSeconds, digits: 3)
        }
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        figures.set("peak_rss_mb", Double(usage.ru_maxrss) / 1024, digits: 1)
        return figures
    }

    /// The emulated reader's Gen2 engine alone: `tags` tags at equal strength (no capture), one
    /// channel, S0; each run inventories until every tag is read; slots pooled over `runs`
    /// seeds.
    static func slotEfficiency(tags: Int, runs: Int) -> (efficiency: Double, maxRounds: Int) {
        var pooled = Gen2SlotStatistics()
        var maxRounds = 0
        for run in 0..<runs {
            let scene = RFScene(tags: (0..<tags).map { (n: Int) -> RFScene.Tag in
                var epc: [UInt8] = [0x30, 0x34, 0x25, 0x7B, 0xF4, 0, 0, 0, 0, 0, 0, 0]
                epc[10] = UInt8(truncatingIfNeeded: n >> 8)
                epc[11] = UInt8(truncatingIfNeeded: n)
                return RFScene.Tag(epc: epc, placement: .pathLoss(dB: 40))
            })
            var field = RFField(scene: scene)
            var inventory = Gen2Inventory(configuration: Gen2InventoryConfiguration(
                powerDBm: 30, initialQ: 4, minQ: 0, maxQ: 15, session: .s0, roundsWithNoFindsToToggleAB: 0,
                channelsMHz: [915.25], seed: UInt64(run + 1)))
            var found = Set<Int>()
            var rounds = 0
            var time = 0.0
            while found.count < tags, rounds < 100 {
                let round = inventory.runRound(in: &field, at: time)
                time += round.duration
                rounds += 1
                pooled += round.slots
                for read in round.reads { found.insert(read.tagIndex) }
            }
            maxRounds = max(maxRounds, rounds)
        }
        return (pooled.efficiency, maxRounds)
    }

    /// An inventory through the host session on the vendor protocol: connect (handshake and
    /// GetVersion) to an emulated Grokker (its region set) over a clean cable, then
    /// `audioSeconds` of audio with every subsequent find reported. Counted in audio time (the
    /// sample clock), so the figures do not depend on the machine; the CPU seconds do.
    static func sessionInventory(audioSeconds: Double) throws
        -> (connectMs: Double, reads: Int, tags: Int, audioSeconds: Double, cpu: Double) {
        let bench = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-inventory-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: bench) }
        let store = try DeviceStateStore.openOrCreate(directory: bench, index: 0)
        try store.update { $0.region = RegionCatalog.find("fcc")?.setting; $0.provisioning.userHasSetRegion = true }
        let grokker = try EmulatedGrokker(store: store)
        let session = try ReaderSession(port: SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker))
        defer { session.close() }
        let t0 = LinkBenchmark.cpuSeconds()
        try session.connect()
        var configuration = UgiRfidConfiguration.config(inventoryType: .inventoryDistance)
        configuration.reportSubsequentFinds = true
        let start = session.elapsedMilliseconds
        try session.startInventory(configuration)
        try session.collect(forAtMost: audioSeconds)
        try session.stopInventory()
        let reports = session.takeReports()
        let cpu = LinkBenchmark.cpuSeconds() - t0
        let elapsed = (session.elapsedMilliseconds - start) / 1000
        return (session.connectMilliseconds ?? 0, reports.count, Set(reports.map(\.epc)).count, elapsed, cpu)
    }
}
