import GrokBasics
import Foundation
import GrokProtocol
import GrokAudio

/// A Gen2 Select: only tags whose `bank` bits `bitOffset ..< bitOffset + bitLength` equal the
/// first `bitLength` bits of `mask` take part in inventory (Select with action "assert SL,
/// deassert the others", then Query with Sel = SL).
///
/// Bit offsets count from the most significant bit of the bank's word 0, as in Gen2: in the
/// EPC bank the EPC starts at bit 32 (after StoredCRC and PC).
public struct Gen2Select: Sendable, Hashable {
    /// The most mask bytes a Select carries (vendor limit).
    public static let maxMaskBytes = 32

    /// EPC, TID or USER.
    public let bank: Gen2Bank
    /// First bit compared.
    public let bitOffset: Int
    /// Bits compared (0 matches every tag).
    public let bitLength: Int
    /// The mask, most significant bit first.
    public let mask: [UInt8]

    /// A Select, or `nil` when it cannot be sent: the RESERVED bank (Gen2 cannot select on
    /// it), more than ``maxMaskBytes`` mask bytes, a negative offset or length, or a length
    /// longer than the mask.
    public init?(bank: Gen2Bank, bitOffset: Int, bitLength: Int, mask: [UInt8]) {
        guard bank != .reserved, mask.count <= Self.maxMaskBytes, bitOffset >= 0, bitLength >= 0,
            bitLength <= mask.count * 8
        else { return nil }
        self.bank = bank
        self.bitOffset = bitOffset
        self.bitLength = bitLength
        self.mask = mask
    }

    /// A Select on the EPC's first bytes (`prefix`).
    public static func epcPrefix(_ prefix: [UInt8]) -> Gen2Select? {
        Gen2Select(bank: .epc, bitOffset: 32, bitLength: prefix.count * 8, mask: prefix)
    }

    /// Whether a tag with this memory matches.
    public func matches(_ memory: TagMemory) -> Bool {
        memory.matches(bank: bank, bitOffset: bitOffset, bitLength: bitLength, mask: mask)
    }
}

/// How the emulated reader inventories (vendor `UgiRfidConfiguration`'s RF part).
public struct Gen2InventoryConfiguration: Sendable, Hashable {
    /// Transmit power of the first round, dBm.
    public var powerDBm: Double
    /// Lowest power when varying (vendor minPower).
    public var minPowerDBm: Double
    /// Highest power when varying (vendor maxPower). With `minPowerDBm < maxPowerDBm` the
    /// power sweeps a triangle between them, ``powerStepDB`` per round, starting at
    /// ``powerDBm`` and going up first.
    public var maxPowerDBm: Double
    /// Power change per round when varying, dB.
    public var powerStepDB: Double
    /// Q of the first round.
    public var initialQ: Int
    /// Lowest Q (0...15).
    public var minQ: Int
    /// Highest Q (0...15).
    public var maxQ: Int
    /// Session S0...S3.
    public var session: Gen2Session
    /// The first target.
    public var target: Gen2Target
    /// Toggle the target after this many rounds in a row without a find; 0: never toggle.
    public var roundsWithNoFindsToToggleAB: Int
    /// Only tags matching this take part; `nil`: all tags.
    public var select: Gen2Select?
    /// Hop channels, MHz; the reader stays on one for up to ``maxDwellSeconds``, then hops to
    /// the next (shuffled per cycle).
    public var channelsMHz: [Double]
    /// At most this many rounds per second (a round is padded to 1/rate); `nil`: no cap.
    public var maxRoundsPerSecond: Double?
    /// Longest time on one channel (the region's dwell; FCC: 0.4 s): the carrier stays on the
    /// channel across rounds until then, no slot may end past it, and the carrier goes off
    /// at the end of the channel's last round.
    public var maxDwellSeconds: Double
    /// The shortest round period, seconds (the region's min ms per round): a shorter round
    /// is padded.
    public var minRoundSeconds: Double
    /// Listen before talk: before each round the reader listens on the channel, and skips
    /// a channel it hears busy; `nil`: transmit at once.
    public var listenBeforeTalk: Gen2ListenBeforeTalk?
    /// TID words (from word 0) to read with each find, 0...; fewer when the bank is shorter.
    public var tidWordsToRead: Int
    /// USER words (from word 0) to read with each find, 0...; fewer when the bank is shorter.
    public var userWordsToRead: Int
    /// RESERVED words (from word 0: kill then access password) to read with each find. A tag
    /// whose password fields are read-locked (``Gen2LockAction/needsSecuredState``: readable
    /// only in the secured state, which an inventory never enters) answers the Read with an
    /// error, so nothing comes back for it.
    public var reservedWordsToRead: Int
    /// When RN16s collide, the strongest is still decoded (capture) if it is this many dB
    /// above the sum of the others; `nil`: collisions are always lost, pure slotted ALOHA.
    /// By default ``Gen2BitErrors/floorEbN0DB``: the signal-to-noise ratio the receiver needs
    /// at its floor, with the other replies counted as noise.
    public var captureMarginDB: Double?
    /// Air-interface timing.
    public var timing: Gen2LinkTiming
    /// Seed of the slot and hop draws.
    public var seed: UInt64

    /// The 50 FCC channels, 902.75...927.25 MHz every 500 kHz.
    public static let fccChannelsMHz: [Double] = (0..<50).map { 902.75 + 0.5 * Double($0) }

    /// Creates a configuration (fixed power unless a min/max range is given).
    public init(
        powerDBm: Double = 30, minPowerDBm: Double? = nil, maxPowerDBm: Double? = nil, powerStepDB: Double = 1,
        initialQ: Int = 4, minQ: Int = 0, maxQ: Int = 15, session: Gen2Session = .s0, target: Gen2Target = .a,
        roundsWithNoFindsToToggleAB: Int = 4, select: Gen2Select? = nil,
        channelsMHz: [Double] = Gen2InventoryConfiguration.fccChannelsMHz, maxRoundsPerSecond: Double? = nil,
        maxDwellSeconds: Double = 0.4, minRoundSeconds: Double = 0, listenBeforeTalk: Gen2ListenBeforeTalk? = nil,
        tidWordsToRead: Int = 0, userWordsToRead: Int = 0, reservedWordsToRead: Int = 0,
        captureMarginDB: Double? = Gen2BitErrors.floorEbN0DB, timing: Gen2LinkTiming = .denseReaderM4, seed: UInt64 = 0
    ) {
        self.powerDBm = powerDBm
        self.minPowerDBm = minPowerDBm ?? powerDBm
        self.maxPowerDBm = maxPowerDBm ?? powerDBm
        self.powerStepDB = powerStepDB
        self.initialQ = initialQ
        self.minQ = minQ
        self.maxQ = maxQ
        self.session = session
        self.target = target
        self.roundsWithNoFindsToToggleAB = roundsWithNoFindsToToggleAB
        self.select = select
        self.channelsMHz = channelsMHz
        self.maxRoundsPerSecond = maxRoundsPerSecond
        self.maxDwellSeconds = maxDwellSeconds
        self.minRoundSeconds = minRoundSeconds
        self.listenBeforeTalk = listenBeforeTalk
        self.tidWordsToRead = tidWordsToRead
        self.userWordsToRead = userWordsToRead
        self.reservedWordsToRead = reservedWordsToRead
        self.captureMarginDB = captureMarginDB
        self.timing = timing
        self.seed = seed
    }
}

/// Listen before talk as the emulated reader does it: listen ``listenSeconds`` on the
/// channel before the carrier comes on; a busy channel is skipped (the round ends without
/// transmitting and the next round hops on).
///
/// The channel is busy when one of the scene's interferers (``RFScene/Interferer``)
/// transmits on it at or above ``thresholdDBm`` at the reader's antenna port.
public struct Gen2ListenBeforeTalk: Sendable, Hashable {
    /// How long the reader listens, seconds.
    public var listenSeconds: Double
    /// The level at which a channel counts as busy, dBm.
    public var thresholdDBm: Double

    /// Creates a listen-before-talk setting.
    public init(listenSeconds: Double, thresholdDBm: Double) {
        self.listenSeconds = listenSeconds
        self.thresholdDBm = thresholdDBm
    }

    /// Whether the reader hears `frequencyMHz` busy: an interferer within
    /// ``RFScene/Interferer/halfWidthMHz`` of it at or above the threshold.
    public func isBusy(frequencyMHz: Double, interferers: [RFScene.Interferer]) -> Bool {
        interferers.contains {
            abs($0.frequencyMHz - frequencyMHz) < RFScene.Interferer.halfWidthMHz && $0.powerDBm >= thresholdDBm
        }
    }
}

/// One tag read in a round.
public struct Gen2TagRead: Sendable, Hashable {
    /// The tag's index in the field (the simulation's identity, not on the air).
    public var tagIndex: Int
    /// The EPC backscattered.
    public var epc: [UInt8]
    /// The PC backscattered.
    public var pc: UInt16
    /// Reply power at the reader, dBm.
    public var rssiDBm: Double
    /// Its in-phase part, dBm.
    public var rssiIDBm: Double
    /// Its quadrature part, dBm.
    public var rssiQDBm: Double
    /// The channel, MHz.
    public var frequencyMHz: Double
    /// TID words read with the find.
    public var tid: [UInt16]
    /// USER words read with the find.
    public var user: [UInt16]
    /// RESERVED words read with the find (empty when the passwords are read-locked).
    public var reserved: [UInt16] = []
    /// When the EPC was received, seconds of the device clock.
    public var time: Double
}

/// Slot outcomes.
public struct Gen2SlotStatistics: Sendable, Hashable {
    /// Slots nobody answered (or only tags too weak to hear).
    public var empty = 0
    /// Slots with exactly one reply heard: a read.
    public var single = 0
    /// Slots with colliding replies and no read.
    public var collided = 0
    /// Slots with colliding replies where the strongest was still read (capture).
    public var captured = 0
    /// Slots where one tag was singulated but its EPC reply failed its CRC (bit errors):
    /// no read; the tag keeps its flag and answers again in a later frame.
    public var crcFailed = 0

    /// Creates statistics.
    public init(empty: Int = 0, single: Int = 0, collided: Int = 0, captured: Int = 0, crcFailed: Int = 0) {
        self.empty = empty
        self.single = single
        self.collided = collided
        self.captured = captured
        self.crcFailed = crcFailed
    }

    /// All slots.
    public var total: Int { empty + single + collided + captured + crcFailed }
    /// Slots that gave a read.
    public var successful: Int { single + captured }
    /// Share of slots that gave a read (0 when there were none).
    public var efficiency: Double { total == 0 ? 0 : Double(successful) / Double(total) }

    /// The sum of two counts.
    public static func + (a: Gen2SlotStatistics, b: Gen2SlotStatistics) -> Gen2SlotStatistics {
        Gen2SlotStatistics(
            empty: a.empty + b.empty, single: a.single + b.single, collided: a.collided + b.collided,
            captured: a.captured + b.captured, crcFailed: a.crcFailed + b.crcFailed)
    }

    /// Adds another count.
    public static func += (a: inout Gen2SlotStatistics, b: Gen2SlotStatistics) {
        a = a + b
    }
}

/// What one Query round did.
public struct Gen2RoundResult: Sendable, Hashable {
    /// When the round started, seconds of the device clock.
    public var startTime: Double
    /// How long the round took: listening (if any) plus the time the carrier was on.
    public var airTime: Double
    /// How long the reader listened before transmitting (0 without listen before talk).
    public var listenTime: Double
    /// Listen before talk heard the channel busy: nothing was transmitted on it.
    public var channelBusy: Bool
    /// How long until the next round may start: the air time, padded to the rounds-per-second
    /// cap.
    public var duration: Double
    /// The channel, MHz.
    public var frequencyMHz: Double
    /// The transmit power, dBm.
    public var powerDBm: Double
    /// Session and target of the Query.
    public var session: Gen2Session
    /// The target of the Query.
    public var target: Gen2Target
    /// Q of the Query.
    public var startQ: Int
    /// Q at the end of the round.
    public var endQ: Int
    /// QueryAdjusts sent.
    public var queryAdjusts: Int
    /// Tags that took part (awake, selected, flag = target).
    public var participants: Int
    /// Tags read, in order.
    public var reads: [Gen2TagRead]
    /// Slot outcomes.
    public var slots: Gen2SlotStatistics
    /// The round stopped because it reached the dwell limit.
    public var endedByDwellLimit: Bool
    /// The target was toggled after this round (for the next one).
    public var toggledTarget: Bool
    /// The round started on a new channel (it hopped there, listening first with listen
    /// before talk); `false`: it went on on the channel of the round before, carrier on.
    public var hopped: Bool
    /// When the carrier came on this round's channel (after listening), seconds of the
    /// device clock: the channel's dwell runs from here.
    public var channelSince: Double
}

/// A Gen2 reader's inventory engine: Query rounds of slotted ALOHA with the Q algorithm.
///
/// Each ``runRound(in:at:)`` stays on the channel while its dwell lasts (the carrier stays
/// on between rounds, so tags stay powered and keep their S0 flags), else hops to the next
/// channel (the carrier drops for the retune; with listen before talk the reader listens
/// first), sets the carrier, optionally sends a
/// Select, then a Query: every awake, selected tag whose inventoried flag in the session
/// equals the target draws a slot counter in 0...2^Q−1. Slot by slot (QueryRep), a slot with
/// no reply heard is empty, one reply heard is a read (ACK, EPC, optional TID/USER reads; the
/// tag's flag flips), several replies collide (unless ``Gen2InventoryConfiguration/captureMarginDB``
/// lets the strongest through). Tags too weak for the reader's sensitivity answer but are not
/// heard (their replies still interfere). A singulated tag's EPC reply fails its CRC with the
/// chance ``Gen2BitErrors`` gives at its margin; the reader NAKs it and the tag answers again
/// in a later frame.
///
/// Q adapts with the Qfp algorithm of Gen2 Annex D: empty slot Qfp −= C, collision Qfp += C,
/// single unchanged; Qfp stays within the Q bounds; when round(Qfp) differs from Q the reader
/// sends QueryAdjust and every tag still waiting (including those that collided) draws again.
/// C starts at 0.1 and grows by 0.1 per slot (up to 0.5) from the third identical outcome in
/// a row, so Q settles finely but climbs fast from a poor initial Q. When a frame's 2^Q slots
/// are done and some collided, a QueryAdjust gives the colliders new slots in a frame sized
/// for them: Qfp becomes log2(2.39 × collided slots), Schoute's estimate of the tags a
/// collided slot hides (it measured 34.6 / 34.9 / 34.4 % of slots successful at 100 / 300 /
/// 500 tags against 33.9 / 34.7 / 34.3 % with Annex D's steps alone); the round ends
/// after a frame without collisions, at the dwell limit, or after ``maxSlotsPerRound``
/// slots. Qfp carries over to the next round.
///
/// Deterministic for a given configuration seed and sequence of calls.
public struct Gen2Inventory: Sendable {
    /// The configuration (Q bounds and power clamped into range).
    public private(set) var configuration: Gen2InventoryConfiguration
    /// The floating-point Q.
    public private(set) var qfp: Double
    /// The target of the next round.
    public private(set) var target: Gen2Target
    /// Power of the next round, dBm.
    public private(set) var powerDBm: Double
    /// Rounds run so far.
    public private(set) var roundsRun = 0
    /// Rounds in a row that found nothing.
    public private(set) var roundsWithoutFinds = 0

    /// A round never runs more slots than this, whatever the dwell limit.
    public static let maxSlotsPerRound = 1 << 16

    private var rng: SplitMix64
    private var channelOrder: [Double] = []
    /// The channel the carrier is on and when it came on there; `nil`: the next round hops.
    private var dwelling: (frequencyMHz: Double, since: Double)?
    private var powerDirection: Double = 1
    private var lastOutcome = Outcome.single
    private var outcomeRun = 0

    private enum Outcome {
        case empty, single, collision
    }

    /// A fresh engine.
    public init(configuration: Gen2InventoryConfiguration) {
        var c = configuration
        c.minQ = min(max(c.minQ, 0), 15)
        c.maxQ = min(max(c.maxQ, c.minQ), 15)
        c.initialQ = min(max(c.initialQ, c.minQ), c.maxQ)
        if c.minPowerDBm > c.maxPowerDBm { swap(&c.minPowerDBm, &c.maxPowerDBm) }
        c.powerDBm = min(max(c.powerDBm, c.minPowerDBm), c.maxPowerDBm)
        c.powerStepDB = abs(c.powerStepDB)
        if c.channelsMHz.isEmpty { c.channelsMHz = [915] }
        c.tidWordsToRead = max(0, c.tidWordsToRead)
        c.userWordsToRead = max(0, c.userWordsToRead)
        c.reservedWordsToRead = max(0, c.reservedWordsToRead)
        c.roundsWithNoFindsToToggleAB = max(0, c.roundsWithNoFindsToToggleAB)
        self.configuration = c
        qfp = Double(c.initialQ)
        target = c.target
        powerDBm = c.powerDBm
        rng = SplitMix64(seed: c.seed ^ 0x4745_4E32_494E_56)
    }

    /// Changes the power while the inventory runs (vendor `changePower`): the next round
    /// runs at `powerDBm` (clamped into `minPowerDBm...maxPowerDBm`), and a range makes the
    /// power vary from there as at the start.
    public mutating func changePower(powerDBm: Double, minPowerDBm: Double, maxPowerDBm: Double) {
        let low = min(minPowerDBm, maxPowerDBm)
        let high = max(minPowerDBm, maxPowerDBm)
        configuration.minPowerDBm = low
        configuration.maxPowerDBm = high
        configuration.powerDBm = min(max(powerDBm, low), high)
        self.powerDBm = configuration.powerDBm
        powerDirection = 1
    }

    /// Q as the reader would send it now.
    public var q: Int { quantize(qfp) }

    /// Runs one Query round starting at `time` (seconds of the device clock) on `field`, and
    /// leaves the carrier on. The next round should start at `time + duration`.
    public mutating func runRound(in field: inout RFField, at time: Double) -> Gen2RoundResult {
        let c = configuration
        let timing = c.timing
        // Stay on the channel while its dwell lasts and the carrier is still on it; else hop.
        let frequency: Double
        let hops: Bool
        if let d = dwelling, field.carrier?.frequencyMHz == d.frequencyMHz, time - d.since < c.maxDwellSeconds {
            frequency = d.frequencyMHz
            hops = false
        } else {
            frequency = nextChannel()
            hops = true
            dwelling = nil
        }
        let power = powerDBm
        let listen = hops ? c.listenBeforeTalk?.listenSeconds ?? 0 : 0
        if hops, let lbt = c.listenBeforeTalk {
            // Carrier off while listening; a busy channel is skipped.
            field.setCarrier(nil, at: time)
            if lbt.isBusy(frequencyMHz: frequency, interferers: field.scene.interferers) {
                roundsRun += 1
                return Gen2RoundResult(
                    startTime: time, airTime: listen, listenTime: listen, channelBusy: true, duration: listen,
                    frequencyMHz: frequency, powerDBm: power, session: c.session, target: target, startQ: q, endQ: q,
                    queryAdjusts: 0, participants: 0, reads: [], slots: Gen2SlotStatistics(), endedByDwellLimit: false,
                    toggledTarget: false, hopped: true, channelSince: time + listen)
            }
        }
        let time = time + listen
        let carrier = RFCarrier(powerDBm: power, frequencyMHz: frequency)
        if hops {
            if let on = field.carrier, on.frequencyMHz != frequency {
                // A hop: the synthesizer retunes with the power amplifier off, so every tag
                // loses power for an instant and with it its S0 flag (Gen2 6.3.2.2: S0 persists
                // only while powered). On one channel the carrier stays on between rounds, so a
                // session-0 inventory that never toggles (the vendor's Locate presets) finds a
                // tag once per channel visit.
                field.setCarrier(nil, at: time)
            }
            dwelling = (frequency, time)
        }
        field.setCarrier(carrier, at: time)
        // Time already spent on this channel by earlier rounds.
        let since = dwelling?.since ?? time
        let dwelt = time - since
        var elapsed = 0.0
        if let select = c.select {
            elapsed += timing.command(bits: Gen2LinkTiming.Bits.select(maskBits: select.bitLength), preamble: false) + timing.t4
        }

        // Who takes part, and how loud each one is.
        let sensitivity = field.receiveThresholdDBm
        let floor = field.scene.readerSensitivityDBm
        var candidates: [Int] = []
        var rssi: [Double] = []
        for i in field.tags.indices {
            let tag = field.tags[i]
            guard tag.isPowered, !tag.isKilled, tag.inventoried(c.session) == target else { continue }
            if let select = c.select, !select.matches(tag.memory) { continue }
            candidates.append(i)
            rssi.append(field.rssi(ofTag: i, at: time, carrier: carrier))
        }

        // The longest a slot of this round can take: the longest EPC taking part, with the
        // bank reads (no slot may end past the dwell limit).
        let longestEPC = candidates.map { min(field.tags[$0].memory.epcWordCount, field.tags[$0].memory.epcCapacityWords) }.max() ?? 0
        let longestSlot = timing.singleSlot(
            command: timing.command(bits: Gen2LinkTiming.Bits.query, preamble: true), epcWords: longestEPC,
            bankReads: [c.tidWordsToRead, c.userWordsToRead, c.reservedWordsToRead].filter { $0 > 0 }).total
        var q = quantize(qfp)
        let startQ = q
        var frameSize = 1 << q
        // Tags still waiting, grouped by slot counter: the tags answering in slot j are
        // order[slotStart[j] ..< slotStart[j + 1]] (a counting sort, drawn again on QueryAdjust).
        var order: [Int] = []
        var slotStart: [Int] = []
        var counters: [Int] = []
        var done = [Bool](repeating: false, count: candidates.count)
        var unread = Array(candidates.indices)
        func draw() {
            unread.removeAll { done[$0] }
            counters.removeAll(keepingCapacity: true)
            slotStart = [Int](repeating: 0, count: frameSize + 1)
            for _ in unread {
                // The top q bits of a 64-bit draw: uniform over the 2^q slots.
                let counter = q == 0 ? 0 : Int(truncatingIfNeeded: rng.next() >> UInt64(64 - q))
                counters.append(counter)
                slotStart[counter + 1] += 1
            }
            for j in 0..<frameSize { slotStart[j + 1] += slotStart[j] }
            order = [Int](repeating: 0, count: unread.count)
            var fill = slotStart
            for (n, k) in unread.enumerated() {
                order[fill[counters[n]]] = k
                fill[counters[n]] += 1
            }
        }
        draw()
        var slot = 0
        var command = timing.command(bits: Gen2LinkTiming.Bits.query, preamble: true)
        var stats = Gen2SlotStatistics()
        var reads: [Gen2TagRead] = []
        var adjusts = 0
        var endedByDwell = false
        let bankReads = [(Gen2Bank.tid, c.tidWordsToRead), (.user, c.userWordsToRead), (.reserved, c.reservedWordsToRead)]

        var frameCollisions = 0
        var frameFailures = 0
        while stats.total < Self.maxSlotsPerRound {
            if slot >= frameSize {
                // The frame is over. Tags that collided or whose EPC failed its CRC wait (slot
                // counter 7FFFh): a QueryAdjust gives them new slots; with neither the round is over.
                guard frameCollisions > 0 || frameFailures > 0 else { break }
                // The colliders are about 2.39 tags per collided slot (Schoute), the failed
                // ones one each; size the next frame for them.
                let waiting = 2.39 * Double(frameCollisions) + Double(frameFailures)
                qfp = min(max(log2(waiting), Double(c.minQ)), Double(c.maxQ))
                q = quantize(qfp)
                frameSize = 1 << q
                draw()
                slot = 0
                frameCollisions = 0
                frameFailures = 0
                adjusts += 1
                command = timing.command(bits: Gen2LinkTiming.Bits.queryAdjust, preamble: false)
            }
            if dwelt + elapsed + longestSlot > c.maxDwellSeconds {
                endedByDwell = true
                break
            }
            // Replies in this slot, strongest first; the reader takes those above its threshold,
            // but every reply adds to the interference.
            let replies = order[slotStart[slot]..<slotStart[slot + 1]].sorted { rssi[$0] > rssi[$1] }
            var winner: Int?
            var captured = false
            let outcome: Outcome
            if replies.first.map({ rssi[$0] < sensitivity }) ?? true {
                outcome = .empty
                stats.empty += 1
                elapsed += timing.emptySlot(command: command)
            } else if replies.count == 1 {
                outcome = .single
                winner = replies[0]
            } else if let margin = c.captureMarginDB,
                rssi[replies[0]] - 10 * log10(replies.dropFirst().reduce(0) { $0 + pow(10, rssi[$1] / 10) }) >= margin
            {
                // Capture: the strongest RN16 is decoded through the others, the reader ACKs
                // it, and only that tag sends its EPC.
                outcome = .single
                winner = replies[0]
                captured = true
            } else {
                outcome = .collision
                stats.collided += 1
                frameCollisions += 1
                elapsed += timing.collidedSlot(command: command)
            }
            if let k = winner, Self.replyFails(rssiDBm: rssi[k], floorDBm: floor,
                                                   epcWords: min(field.tags[candidates[k]].memory.epcWordCount,
                                                                 field.tags[candidates[k]].memory.epcCapacityWords),
                                                   rng: &rng) {
                // The EPC reply failed its CRC: the reader NAKs, the tag keeps its flag and
                // waits for the next frame.
                let memory = field.tags[candidates[k]].memory
                stats.crcFailed += 1
                frameFailures += 1
                elapsed += timing.singleSlot(
                    command: command, epcWords: min(memory.epcWordCount, memory.epcCapacityWords), bankReads: []).epcDone
                winner = nil
            }
            if let k = winner {
                if captured { stats.captured += 1 } else { stats.single += 1 }
                let i = candidates[k]
                let memory = field.tags[i].memory
                var banks: [[UInt16]] = []
                for (bank, count) in bankReads where count > 0 {
                    let readLocked = bank == .reserved
                        && (memory.locks.killPassword.needsSecuredState || memory.locks.accessPassword.needsSecuredState)
                    banks.append(readLocked ? [] : Array(memory.words(of: bank).prefix(count)))
                }
                let slotTime = timing.singleSlot(
                    command: command, epcWords: min(memory.epcWordCount, memory.epcCapacityWords),
                    bankReads: banks.filter { !$0.isEmpty }.map(\.count))
                let readTime = time + elapsed + slotTime.epcDone
                let iq = field.iqSplit(ofTag: i, rssi: rssi[k], at: time, frequencyMHz: frequency)
                var bankIterator = banks.makeIterator()
                let tid = c.tidWordsToRead > 0 ? bankIterator.next() ?? [] : []
                let user = c.userWordsToRead > 0 ? bankIterator.next() ?? [] : []
                let reserved = c.reservedWordsToRead > 0 ? bankIterator.next() ?? [] : []
                reads.append(
                    Gen2TagRead(
                        tagIndex: i, epc: memory.epc, pc: memory.pc, rssiDBm: rssi[k], rssiIDBm: iq.i, rssiQDBm: iq.q,
                        frequencyMHz: frequency, tid: tid, user: user, reserved: reserved, time: readTime))
                field.setFlag(i, session: c.session, to: target.toggled, at: readTime)
                done[k] = true
                elapsed += slotTime.total
            }
            adapt(to: outcome)
            let newQ = quantize(qfp)
            if newQ != q {
                q = newQ
                frameSize = 1 << q
                draw()
                slot = 0
                frameCollisions = 0
                frameFailures = 0
                adjusts += 1
                command = timing.command(bits: Gen2LinkTiming.Bits.queryAdjust, preamble: false)
            } else {
                slot += 1
                command = timing.command(bits: Gen2LinkTiming.Bits.queryRep, preamble: false)
            }
        }

        let roundTarget = target
        var toggled = false
        if reads.isEmpty {
            roundsWithoutFinds += 1
            if c.roundsWithNoFindsToToggleAB > 0, roundsWithoutFinds >= c.roundsWithNoFindsToToggleAB {
                target = target.toggled
                roundsWithoutFinds = 0
                toggled = true
            }
        } else {
            roundsWithoutFinds = 0
        }
        roundsRun += 1
        stepPower()
        let duration = max(listen + elapsed, c.maxRoundsPerSecond.map { $0 > 0 ? 1 / $0 : 0 } ?? 0, c.minRoundSeconds)
        if endedByDwell || dwelt + duration - listen >= c.maxDwellSeconds {
            // The channel's last round: the carrier goes off as its air time ends (not after
            // the padding to the next round), and the next round hops. With one channel there
            // is nowhere to hop: the carrier stays.
            if c.channelsMHz.count > 1 { field.setCarrier(nil, at: time + elapsed) }
            dwelling = nil
        }
        return Gen2RoundResult(
            startTime: time - listen, airTime: listen + elapsed, listenTime: listen, channelBusy: false, duration: duration, frequencyMHz: frequency, powerDBm: power,
            session: c.session, target: roundTarget, startQ: startQ, endQ: q, queryAdjusts: adjusts,
            participants: candidates.count, reads: reads, slots: stats, endedByDwellLimit: endedByDwell,
            toggledTarget: toggled, hopped: hops, channelSince: since)
    }

    /// Runs rounds back to back from `time` until `body` returns `false` or `maxRounds` rounds
    /// have run; returns the time after the last round.
    @discardableResult
    public mutating func run(
        in field: inout RFField, from time: Double, maxRounds: Int, _ body: (Gen2RoundResult) -> Bool
    ) -> Double {
        var now = time
        for _ in 0..<maxRounds {
            let round = runRound(in: &field, at: now)
            now += round.duration
            if !body(round) { break }
        }
        return now
    }

    // MARK: Internals

    /// Whether an EPC reply (PC, `epcWords` EPC words, CRC-16) at `rssiDBm` fails its CRC,
    /// drawn from ``Gen2BitErrors`` at its margin above the hardware floor. Nothing is drawn
    /// when the chance is below 10⁻⁹, so strong links do not move the slot draws.
    static func replyFails(rssiDBm: Double, floorDBm: Double, epcWords: Int, rng: inout SplitMix64) -> Bool {
        let chance = Gen2BitErrors.replyErrorProbability(bits: 16 * (epcWords + 2), marginDB: rssiDBm - floorDBm)
        guard chance >= 1e-9 else { return false }
        return Double(rng.next() >> 11) / Double(1 << 53) < chance
    }

    private func quantize(_ value: Double) -> Int {
        min(max(Int(value.rounded()), configuration.minQ), configuration.maxQ)
    }

    /// The Qfp step of Gen2 Annex D with C growing on runs of the same outcome.
    private mutating func adapt(to outcome: Outcome) {
        outcomeRun = outcome == lastOutcome ? outcomeRun + 1 : 1
        lastOutcome = outcome
        let step = outcomeRun < 3 ? 0.1 : min(0.5, 0.1 + 0.1 * Double(outcomeRun - 2))
        let low = Double(configuration.minQ)
        let high = Double(configuration.maxQ)
        switch outcome {
        case .empty: qfp = max(low, qfp - step)
        case .collision: qfp = min(high, qfp + step)
        case .single: break
        }
    }

    private mutating func nextChannel() -> Double {
        if channelOrder.isEmpty {
            channelOrder = configuration.channelsMHz
            channelOrder.shuffle(using: &rng)
        }
        return channelOrder.removeLast()
    }

    private mutating func stepPower() {
        let c = configuration
        guard c.minPowerDBm < c.maxPowerDBm, c.powerStepDB > 0 else { return }
        var next = powerDBm + powerDirection * c.powerStepDB
        if next > c.maxPowerDBm {
            powerDirection = -1
            next = max(c.minPowerDBm, powerDBm - c.powerStepDB)
        } else if next < c.minPowerDBm {
            powerDirection = 1
            next = min(c.maxPowerDBm, powerDBm + c.powerStepDB)
        }
        powerDBm = next
    }
}
