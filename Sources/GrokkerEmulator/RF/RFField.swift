import GrokProtocol
import GrokBasics
import Foundation
import GrokAudio

/// A Gen2 session: which of the tag's four inventoried flags a Query round uses.
public enum Gen2Session: Int, Sendable, Hashable, CaseIterable, Codable {
    /// S0: the flag falls back to A as soon as the tag loses power.
    case s0 = 0
    /// S1: the flag falls back to A after the tag's ``SimulatedTag/s1Persistence``, powered or not.
    case s1 = 1
    /// S2: the flag persists while powered and ``Gen2Persistence/s2s3Unpowered`` after.
    case s2 = 2
    /// S3: like S2.
    case s3 = 3
}

/// The value of an inventoried flag, and a Query's target.
public enum Gen2Target: Sendable, Hashable, Codable {
    /// A (every flag's value after a reset).
    case a
    /// B.
    case b

    /// The other value.
    public var toggled: Gen2Target { self == .a ? .b : .a }
}

/// How long inventoried flags persist (Gen2 v2 table 6.20), in seconds. S1's persistence is
/// each tag's own (``SimulatedTag/s1Persistence``).
public struct Gen2Persistence: Sendable, Hashable {
    /// The bounds Gen2 sets for S1 flag persistence, powered or not: 0.5 to 5 s.
    public static let s1Bounds: ClosedRange<Double> = 0.5...5
    /// S2 and S3 flag persistence after the tag loses power (the standard: more than 2 s).
    public var s2s3Unpowered: Double

    /// Creates persistence times; by default 4 s for S2/S3.
    public init(s2s3Unpowered: Double = 4) {
        self.s2s3Unpowered = s2s3Unpowered
    }
}

/// One tag of a field: its memory, where it is, and its Gen2 state.
public struct SimulatedTag: Sendable, Hashable {
    /// The tag's place in the scene's list.
    public let index: Int
    /// The scene's label, if any.
    public let name: String?
    /// Where the tag is.
    public let placement: TagPlacement
    /// Power the tag needs to wake, dBm.
    public let activationThresholdDBm: Double
    /// Power the tag needs to write its memory, dBm: the activation threshold plus its
    /// chip's ``TagChip/writeMarginDB``.
    public let writeThresholdDBm: Double
    /// The tag's memory and locks.
    public internal(set) var memory: TagMemory
    /// Killed tags never answer again.
    public internal(set) var isKilled: Bool = false
    /// Whether the tag had power at the field's last ``RFField/refresh(at:)``.
    public internal(set) var isPowered: Bool = false

    /// Inventoried flags of S0...S3.
    var flags: [Gen2Target] = [.a, .a, .a, .a]
    /// When the S1 flag was last set to B.
    var s1SetAt: Double = 0
    /// When the tag was first seen without power since it last had power (`nil` while
    /// powered or before it ever had power).
    var unpoweredSince: Double?
    /// Backscatter phase offset of this tag's chip, radians (for the I/Q split).
    let phaseOffset: Double
    /// How long this tag's S1 flag stays B, seconds: Gen2 only bounds it
    /// (``Gen2Persistence/s1Bounds``) and chips differ, so each tag draws its own from its
    /// index, uniformly within the bounds.
    public let s1Persistence: Double

    /// The tag's current EPC.
    public var epc: [UInt8] { memory.epc }

    /// The inventoried flag of a session.
    public func inventoried(_ session: Gen2Session) -> Gen2Target {
        flags[session.rawValue]
    }
}

/// The simulated RF field around one emulated Grokker: the scene's tags with their memory
/// and Gen2 state, and the reader's carrier.
///
/// Deterministic: nothing here reads a clock or draws random numbers; every call takes the
/// time in seconds of the device's sample clock. Time should not run backwards.
public struct RFField: Sendable {
    /// The scene the field started from.
    public let scene: RFScene
    /// The tags, in scene order.
    public internal(set) var tags: [SimulatedTag]
    /// Flag persistence times.
    public var persistence: Gen2Persistence
    /// The reader's carrier; `nil` while it is off (no tag has power).
    public private(set) var carrier: RFCarrier?
    /// The time of the last ``refresh(at:)``.
    public private(set) var time: Double = 0
    /// How the reader's receiver is set (the running inventory's configuration).
    public var reader = RFReaderSettings()

    /// The weakest reply the reader takes, dBm: the configured sensitivity, never below the
    /// hardware's best (the scene's `reader_sensitivity_dbm`).
    public var receiveThresholdDBm: Double {
        max(scene.readerSensitivityDBm, reader.sensitivityDBm ?? scene.readerSensitivityDBm)
    }

    /// The weakest reply the reader takes while writing, dBm: the configured write
    /// sensitivity (else the receive threshold), never below the hardware's best.
    public var writeReceiveThresholdDBm: Double {
        max(scene.readerSensitivityDBm, reader.writeSensitivityDBm ?? receiveThresholdDBm)
    }

    /// A field in the scene's initial state, carrier off.
    public init(scene: RFScene, persistence: Gen2Persistence = Gen2Persistence()) {
        self.scene = scene
        self.persistence = persistence
        tags = scene.tags.enumerated().map { index, tag in
            var mixer = SplitMix64(seed: 0x5446_4945_4C44 &+ UInt64(index))
            let tid = tag.tid ?? Self.madeUpTID(serial: mixer.next())
            let memory = TagMemory(
                epc: tag.epc, pc: tag.pc, epcCapacityWords: tag.epcCapacityWords, tid: TagMemory.words(fromBytes: tid),
                user: TagMemory.words(fromBytes: tag.user), accessPassword: tag.accessPassword,
                killPassword: tag.killPassword, locks: tag.lock)
            let threshold = tag.activationThresholdDBm ?? scene.tagActivationThresholdDBm
            let phase = Double(mixer.next() >> 11) / Double(1 << 53) * 2 * Double.pi
            let bounds = Gen2Persistence.s1Bounds
            let s1 = bounds.lowerBound + Double(mixer.next() >> 11) / Double(1 << 53) * (bounds.upperBound - bounds.lowerBound)
            return SimulatedTag(
                index: index, name: tag.name, placement: tag.placement, activationThresholdDBm: threshold,
                writeThresholdDBm: threshold + (tag.chip ?? scene.tagChip).writeMarginDB, memory: memory,
                phaseOffset: phase, s1Persistence: s1)
        }
    }

    /// A TID like an Impinj Monza R6's: `E2`, mask designer `801`, model `160`, then a 48-bit
    /// serial.
    static func madeUpTID(serial: UInt64) -> [UInt8] {
        [0xE2, 0x80, 0x11, 0x60, 0x20, 0x00] + (0..<6).map { UInt8((serial >> (40 - 8 * UInt64($0))) & 0xFF) }
    }

    // MARK: Carrier and power

    /// Turns the carrier on (or changes power or channel) or off (`nil`) at `time`. Tags
    /// are brought up to date just before and just after.
    public mutating func setCarrier(_ carrier: RFCarrier?, at time: Double) {
        refresh(at: time)
        self.carrier = carrier
        refresh(at: time)
    }

    /// Brings every tag's power state and inventoried flags up to `time`: a tag without power
    /// loses its S0 flag at once and its S2/S3 flags after
    /// ``Gen2Persistence/s2s3Unpowered``; an S1 flag set to B reverts after the tag's
    /// ``SimulatedTag/s1Persistence`` whatever the power.
    public mutating func refresh(at time: Double) {
        self.time = time
        for i in tags.indices {
            refreshTag(i, at: time)
        }
    }

    private mutating func refreshTag(_ i: Int, at time: Double) {
        let powered: Bool
        if let carrier, !tags[i].isKilled {
            powered = powerAtTag(i, at: time, carrier: carrier) >= tags[i].activationThresholdDBm
        } else {
            powered = false
        }
        var tag = tags[i]
        if powered {
            if let since = tag.unpoweredSince, time - since >= persistence.s2s3Unpowered {
                tag.flags[2] = .a
                tag.flags[3] = .a
            }
            tag.unpoweredSince = nil
        } else {
            tag.flags[0] = .a
            if tag.isPowered || tag.unpoweredSince == nil { tag.unpoweredSince = time }
            if let since = tag.unpoweredSince, time - since >= persistence.s2s3Unpowered {
                tag.flags[2] = .a
                tag.flags[3] = .a
            }
        }
        if tag.flags[1] == .b, time - tag.s1SetAt >= tag.s1Persistence { tag.flags[1] = .a }
        tag.isPowered = powered
        tags[i] = tag
    }

    /// Sets a tag's inventoried flag (a successful read flips it).
    mutating func setFlag(_ i: Int, session: Gen2Session, to value: Gen2Target, at time: Double) {
        tags[i].flags[session.rawValue] = value
        if session == .s1, value == .b { tags[i].s1SetAt = time }
    }

    /// One-way path loss to tag `i` at `time` on `frequencyMHz`, dB.
    public func pathLoss(ofTag i: Int, at time: Double, frequencyMHz: Double) -> Double {
        RFLinkBudget.pathLoss(tags[i].placement, at: time, frequencyMHz: frequencyMHz)
    }

    /// Power reaching tag `i`, dBm.
    public func powerAtTag(_ i: Int, at time: Double, carrier: RFCarrier) -> Double {
        RFLinkBudget.powerAtTag(
            readerPowerDBm: carrier.powerDBm, antennaGainDBi: scene.antennaGainDBi,
            pathLossDB: pathLoss(ofTag: i, at: time, frequencyMHz: carrier.frequencyMHz))
    }

    /// Backscatter power of tag `i` at the reader, dBm.
    public func rssi(ofTag i: Int, at time: Double, carrier: RFCarrier) -> Double {
        RFLinkBudget.rssi(
            readerPowerDBm: carrier.powerDBm, antennaGainDBi: scene.antennaGainDBi,
            pathLossDB: pathLoss(ofTag: i, at: time, frequencyMHz: carrier.frequencyMHz),
            backscatterLossDB: scene.backscatterLossDB)
    }

    /// Whether tag `i` can be inventoried or accessed at `time` with `carrier`: not killed,
    /// awake (power at the tag ≥ its threshold) and heard (RSSI ≥ ``receiveThresholdDBm``).
    /// This is the link budget alone; session flags and SELECT are not considered.
    public func isReachable(_ i: Int, at time: Double, carrier: RFCarrier) -> Bool {
        !tags[i].isKilled && powerAtTag(i, at: time, carrier: carrier) >= tags[i].activationThresholdDBm
            && rssi(ofTag: i, at: time, carrier: carrier) >= receiveThresholdDBm
    }

    /// The I and Q parts of a reply's power, dBm: the backscatter's phase is the round trip
    /// 4πdf/c plus the chip's own offset; each part is floored 30 dB below the total.
    func iqSplit(ofTag i: Int, rssi: Double, at time: Double, frequencyMHz: Double) -> (i: Double, q: Double) {
        let distance = tags[i].placement.distance(at: time) ?? 0
        let phase = 4 * Double.pi * distance * frequencyMHz * 1e6 / RFLinkBudget.speedOfLight + tags[i].phaseOffset
        let c = cos(phase)
        let iShare = max(c * c, 0.001)
        let qShare = max(1 - c * c, 0.001)
        return (rssi + 10 * log10(iShare), rssi + 10 * log10(qShare))
    }

    // MARK: State files

    /// What the tags' memory, locks and kills are now, for saving.
    public var state: RFFieldState {
        RFFieldState(
            tags: tags.map { tag in
                RFFieldState.Tag(
                    reserved: tag.memory.reserved, epcBank: tag.memory.epcBank, tid: tag.memory.tid,
                    user: tag.memory.user, lock: tag.memory.locks, killed: tag.isKilled)
            })
    }

    /// Replaces the tags' memory, locks and kills with a saved state (session flags and
    /// power are not part of it). `path` names the source in errors.
    public mutating func restore(_ state: RFFieldState, path: String) throws(SceneError) {
        guard state.tags.count == tags.count else {
            throw .stateMismatch(path: path, detail: "it has \(state.tags.count) tags, the scene \(tags.count)")
        }
        for (i, saved) in state.tags.enumerated() {
            tags[i].memory = TagMemory(
                reserved: saved.reserved, epcBank: saved.epcBank, tid: saved.tid, user: saved.user, locks: saved.lock)
            tags[i].isKilled = saved.killed
        }
    }

    /// Saves ``state`` to `path` (temp file in the same directory, fsync, rename).
    public func saveState(to path: String) throws(SceneError) {
        do {
            try UnitFile.replace(path, with: Array(state.encoded()))
        } catch {
            throw .writeFailed(path: path, detail: error.detail)
        }
    }

    /// Loads a state saved by ``saveState(to:)``; returns `false`, changing nothing, when
    /// there is no file at `path`.
    @discardableResult
    public mutating func loadState(from path: String) throws(SceneError) -> Bool {
        let bytes: [UInt8]?
        do {
            bytes = try UnitFile.readAll(path, limit: RFScene.maxFileBytes)
        } catch {
            throw .unreadable(path: path, detail: error.detail)
        }
        guard let bytes else { return false }
        let state = try SceneDecoding.decode(RFFieldState.self, from: Data(bytes), path: path)
        try restore(state, path: path)
        return true
    }
}

/// How the reader's radio is set for receiving and writing (what an inventory start
/// configures: the vendor's `sensitivity`, `powerLevelWrite` and `sensitivityWrite`). The
/// scene holds what the hardware can do at best; these are what the configuration asks for.
public struct RFReaderSettings: Sendable, Hashable {
    /// Receive threshold, dBm: replies weaker than this are ignored. `nil`, or a value below
    /// the scene's `reader_sensitivity_dbm`, means the hardware's best.
    public var sensitivityDBm: Double?
    /// Transmit power while writing (write, program EPC, passwords, lock, kill), dBm; `nil`:
    /// the carrier's power.
    public var writePowerDBm: Double?
    /// Receive threshold while writing, dBm; `nil`: ``sensitivityDBm``.
    public var writeSensitivityDBm: Double?

    /// Creates settings (by default the hardware's best, writing at the carrier's power).
    public init(sensitivityDBm: Double? = nil, writePowerDBm: Double? = nil, writeSensitivityDBm: Double? = nil) {
        self.sensitivityDBm = sensitivityDBm
        self.writePowerDBm = writePowerDBm
        self.writeSensitivityDBm = writeSensitivityDBm
    }
}

/// The lasting part of an ``RFField``: each tag's memory, locks and whether it was killed,
/// in scene order. Saved as JSON: `{"format": 1, "tags": [{"reserved": hex, "epc_bank": hex,
/// "tid": hex, "user": hex, "lock": {...}, "killed": bool}]}`.
public struct RFFieldState: Sendable, Hashable, Codable {
    /// The newest `format` this build reads and the one it writes.
    public static let currentFormat = 1

    /// The tags, in scene order.
    public var tags: [Tag]

    /// One tag's lasting state.
    public struct Tag: Sendable, Hashable, Codable {
        /// RESERVED bank words.
        public var reserved: [UInt16]
        /// EPC bank words (StoredCRC, PC, EPC capacity).
        public var epcBank: [UInt16]
        /// TID bank words.
        public var tid: [UInt16]
        /// USER bank words.
        public var user: [UInt16]
        /// Lock state.
        public var lock: Gen2LockState
        /// Whether the tag was killed.
        public var killed: Bool

        enum CodingKeys: String, CodingKey, CaseIterable {
            case reserved, tid, user, lock, killed
            case epcBank = "epc_bank"
        }

        init(reserved: [UInt16], epcBank: [UInt16], tid: [UInt16], user: [UInt16], lock: Gen2LockState, killed: Bool) {
            self.reserved = reserved
            self.epcBank = epcBank
            self.tid = tid
            self.user = user
            self.lock = lock
            self.killed = killed
        }

        public init(from decoder: any Decoder) throws {
            try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func words(_ key: CodingKeys, count: ClosedRange<Int>) throws -> [UInt16] {
                let bytes = try c.sceneHex(key)
                guard bytes.count % 2 == 0, count.contains(bytes.count / 2) else {
                    throw SceneDecoding.Failure(
                        c.codingPath + [key], expected: "\(count.lowerBound) to \(count.upperBound) words",
                        found: "\(bytes.count) bytes")
                }
                return TagMemory.words(fromBytes: bytes)
            }
            reserved = try words(.reserved, count: 4...4)
            epcBank = try words(.epcBank, count: 3...(2 + TagMemory.maxEPCWords))
            guard Int(epcBank[1] >> 11) <= epcBank.count - 2 else {
                throw SceneDecoding.Failure(
                    c.codingPath + [CodingKeys.epcBank], expected: "a PC whose EPC length fits the bank",
                    found: "a PC saying \(epcBank[1] >> 11) words in a bank with room for \(epcBank.count - 2)")
            }
            tid = try words(.tid, count: 0...256)
            user = try words(.user, count: 0...4096)
            lock = try c.sceneValue(SceneLock.self, .lock, expected: "an object").state
            killed = try c.sceneValue(Bool.self, .killed, expected: "true or false")
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(SceneDecoding.hex(TagMemory.bytes(fromWords: reserved)), forKey: .reserved)
            try c.encode(SceneDecoding.hex(TagMemory.bytes(fromWords: epcBank)), forKey: .epcBank)
            try c.encode(SceneDecoding.hex(TagMemory.bytes(fromWords: tid)), forKey: .tid)
            try c.encode(SceneDecoding.hex(TagMemory.bytes(fromWords: user)), forKey: .user)
            try c.encode(SceneLock(state: lock), forKey: .lock)
            try c.encode(killed, forKey: .killed)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, tags
    }

    init(tags: [Tag]) {
        self.tags = tags
    }

    public init(from decoder: any Decoder) throws {
        try SceneDecoding.rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.sceneValue(Int.self, .format, expected: "an integer")
        guard format <= Self.currentFormat else { throw SceneDecoding.FormatTooNew(format: format) }
        tags = try c.sceneValue([Tag].self, .tags, expected: "an array of tag states")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.currentFormat, forKey: .format)
        try c.encode(tags, forKey: .tags)
    }

    /// The state as JSON.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }
}
