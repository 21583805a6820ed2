/// How the reader runs an inventory: what the host's `UgiRfidConfiguration` becomes on the
/// wire (docs/protocol.md, "startInventory"). Powers are in 0.1 dBm; the reader clamps
/// nothing: the host validates first.
public struct InventoryParameters: Sendable, Hashable {
    /// Listen before talk on (`true`) or off (`false`), where the region allows changing it
    /// (vendor `setListenBeforeTalk` + `listenBeforeTalk`); `nil`: the region's default.
    /// On the wire an optional last byte (1 off, 2 on), absent for `nil`, so older
    /// readers and hosts keep working.
    public var listenBeforeTalk: Bool?
    public var initialPowerTenthsDBm: Int16 = 300
    public var minPowerTenthsDBm: Int16 = 300
    public var maxPowerTenthsDBm: Int16 = 300
    public var initialQ: UInt8 = 4
    public var minQ: UInt8 = 0
    public var maxQ: UInt8 = 15
    /// Gen2 session 0...3.
    public var session: UInt8 = 0
    /// Empty rounds before the reader toggles its target A/B (0: never).
    public var roundsWithNoFindsToToggleAB: UInt8 = 4
    /// Reader sensitivity, 0.1 dBm.
    public var sensitivityTenthsDBm: Int16 = -800
    /// Rounds per second at most (0: as fast as the air allows).
    public var maxRoundsPerSecond: UInt16 = 0
    /// Bytes of TID and USER to read with each find (0: none).
    public var tidBytes: UInt8 = 0
    public var userBytes: UInt8 = 0
    /// SELECT: only tags whose `bank` holds `mask` at `bitOffset` answer (empty mask: all).
    public var selectBank: UInt8 = 1
    public var selectBitOffset: UInt16 = 32
    public var selectBitLength: UInt16 = 0
    public var selectMask: [UInt8] = []
    /// Keep finding tags already found (false: each tag once per inventory).
    public var reportSubsequentFinds = true
    /// The vendor's sound type: 0 NONE, 1 GEIGER_COUNTER, 2 FIRST_FIND, 6 FIRST_FIND_AND_LAST.
    public var soundType: UInt8 = 0
    /// Speaker volume for this inventory, 0 (silent) to 255 (loudest).
    public var volume: UInt8 = 255
    /// EPCs the reader itself filters on (vendor `startInventory...withEpcs` with few
    /// EPCs): it reports only these, and with FIRST_FIND_AND_LAST plays the found-last sound
    /// once it has found them all. Empty: every tag. At most ``maxReaderEPCs``.
    public var epcs: [[UInt8]] = []

    /// The most EPCs a reader filters on by itself; longer lists are filtered by the host.
    public static let maxReaderEPCs = 8
    /// Words read with every read for the detailed per-read data (vendor
    /// `detailedPerReadNumReads` with its bank/word-offset pairs), at most
    /// ``maxDetailWords``; they arrive in ``TagReport/readData``.
    public var detailWords: [WordAddress] = []
    /// The most detail words per read (vendor: 2).
    public static let maxDetailWords = 2

    public init() {}

    func write(to writer: inout ByteWriter) {
        writer.i16(initialPowerTenthsDBm)
        writer.i16(minPowerTenthsDBm)
        writer.i16(maxPowerTenthsDBm)
        writer.u8(initialQ)
        writer.u8(minQ)
        writer.u8(maxQ)
        writer.u8(session)
        writer.u8(roundsWithNoFindsToToggleAB)
        writer.i16(sensitivityTenthsDBm)
        writer.u16(maxRoundsPerSecond)
        writer.u8(tidBytes)
        writer.u8(userBytes)
        writer.u8(selectBank)
        writer.u16(selectBitOffset)
        writer.u16(selectBitLength)
        writer.u8(UInt8(selectMask.count))
        writer.raw(selectMask)
        writer.u8(reportSubsequentFinds ? 1 : 0)
        writer.u8(soundType)
        writer.u8(volume)
        precondition(epcs.count <= Self.maxReaderEPCs, "too many EPCs for the reader to filter on")
        writer.u8(UInt8(epcs.count))
        for epc in epcs {
            writer.u8(UInt8(epc.count))
            writer.raw(epc)
        }
        precondition(detailWords.count <= Self.maxDetailWords, "too many detail words")
        writer.u8(UInt8(detailWords.count))
        for word in detailWords {
            writer.u8(word.bank.rawValue)
            writer.u16(word.wordOffset)
        }
        if let listenBeforeTalk { writer.u8(listenBeforeTalk ? 2 : 1) }
    }

    static func read(from reader: inout ByteReader) throws(ProtocolError) -> InventoryParameters {
        var p = InventoryParameters()
        p.initialPowerTenthsDBm = try reader.i16("inventory.initialPower")
        p.minPowerTenthsDBm = try reader.i16("inventory.minPower")
        p.maxPowerTenthsDBm = try reader.i16("inventory.maxPower")
        p.initialQ = try reader.u8("inventory.initialQ")
        p.minQ = try reader.u8("inventory.minQ")
        p.maxQ = try reader.u8("inventory.maxQ")
        p.session = try reader.u8("inventory.session")
        p.roundsWithNoFindsToToggleAB = try reader.u8("inventory.roundsWithNoFindsToToggleAB")
        p.sensitivityTenthsDBm = try reader.i16("inventory.sensitivity")
        p.maxRoundsPerSecond = try reader.u16("inventory.maxRoundsPerSecond")
        p.tidBytes = try reader.u8("inventory.tidBytes")
        p.userBytes = try reader.u8("inventory.userBytes")
        p.selectBank = try reader.u8("inventory.selectBank")
        p.selectBitOffset = try reader.u16("inventory.selectBitOffset")
        p.selectBitLength = try reader.u16("inventory.selectBitLength")
        let maskCount = try reader.u8("inventory.selectMask.length")
        guard maskCount <= 32 else { throw .invalidValue(field: "inventory.selectMask.length", value: Int(maskCount)) }
        p.selectMask = try reader.raw(count: Int(maskCount), "inventory.selectMask")
        guard Int(p.selectBitLength) <= 8 * p.selectMask.count else {
            throw .invalidValue(field: "inventory.selectBitLength", value: Int(p.selectBitLength))
        }
        guard p.session <= 3 else { throw .invalidValue(field: "inventory.session", value: Int(p.session)) }
        guard p.minQ <= p.initialQ, p.initialQ <= p.maxQ, p.maxQ <= 15 else {
            throw .invalidValue(field: "inventory.q", value: Int(p.initialQ))
        }
        p.reportSubsequentFinds = try reader.u8("inventory.reportSubsequentFinds") != 0
        p.soundType = try reader.u8("inventory.soundType")
        guard [0, 1, 2, 6].contains(p.soundType) else { throw .invalidValue(field: "inventory.soundType", value: Int(p.soundType)) }
        p.volume = try reader.u8("inventory.volume")
        let epcCount = try reader.u8("inventory.epcs.count")
        guard Int(epcCount) <= maxReaderEPCs else { throw .invalidValue(field: "inventory.epcs.count", value: Int(epcCount)) }
        for _ in 0..<epcCount {
            let length = try reader.u8("inventory.epcs.length")
            guard (2...62).contains(length) else { throw .invalidValue(field: "inventory.epcs.length", value: Int(length)) }
            p.epcs.append(try reader.raw(count: Int(length), "inventory.epcs"))
        }
        let words = try reader.u8("inventory.detailWords.count")
        guard Int(words) <= maxDetailWords else { throw .invalidValue(field: "inventory.detailWords.count", value: Int(words)) }
        for _ in 0..<words {
            let raw = try reader.u8("inventory.detailWords.bank")
            guard let bank = MemoryBank(rawValue: raw) else { throw .invalidValue(field: "inventory.detailWords.bank", value: Int(raw)) }
            p.detailWords.append(WordAddress(bank: bank, wordOffset: try reader.u16("inventory.detailWords.offset")))
        }
        if reader.remaining > 0 {
            let lbt = try reader.u8("inventory.listenBeforeTalk")
            guard lbt == 1 || lbt == 2 else { throw .invalidValue(field: "inventory.listenBeforeTalk", value: Int(lbt)) }
            p.listenBeforeTalk = lbt == 2
        }
        return p
    }
}

/// One word of tag memory: a bank and a word offset in it.
public struct WordAddress: Sendable, Hashable {
    public var bank: MemoryBank
    public var wordOffset: UInt16

    public init(bank: MemoryBank, wordOffset: UInt16) {
        self.bank = bank
        self.wordOffset = wordOffset
    }
}

/// One read of one tag, as the reader reports it (vendor detailed per-read data).
public struct TagReport: Sendable, Hashable {
    /// The EPC (4...62 bytes on the wire; the SDK checks 4...27).
    public var epc: [UInt8]
    /// The tag's protocol-control word.
    public var pc: UInt16
    /// Received signal strength, 0.1 dBm, in-phase and quadrature channels.
    public var rssiITenthsDBm: Int16
    public var rssiQTenthsDBm: Int16
    /// The channel it was read on, kHz.
    public var frequencyKHz: UInt32
    /// Milliseconds since the inventory started, on the reader's clock.
    public var milliseconds: UInt32
    /// TID and USER bytes read with the find, when asked for.
    public var tid: [UInt8]
    public var user: [UInt8]
    /// The detail words asked for (``InventoryParameters/detailWords``), in order, read
    /// with this very read (vendor `readData1`, `readData2`); it stops at the first word
    /// past the end of its bank.
    public var readData: [UInt16]

    public init(epc: [UInt8], pc: UInt16, rssiITenthsDBm: Int16, rssiQTenthsDBm: Int16, frequencyKHz: UInt32,
                milliseconds: UInt32, tid: [UInt8] = [], user: [UInt8] = [], readData: [UInt16] = []) {
        self.readData = readData
        self.epc = epc
        self.pc = pc
        self.rssiITenthsDBm = rssiITenthsDBm
        self.rssiQTenthsDBm = rssiQTenthsDBm
        self.frequencyKHz = frequencyKHz
        self.milliseconds = milliseconds
        self.tid = tid
        self.user = user
    }

    func write(to writer: inout ByteWriter) {
        writer.u8(UInt8(epc.count))
        writer.raw(epc)
        writer.u16(pc)
        writer.i16(rssiITenthsDBm)
        writer.i16(rssiQTenthsDBm)
        writer.u32(frequencyKHz)
        writer.u32(milliseconds)
        writer.u8(UInt8(tid.count))
        writer.raw(tid)
        writer.u8(UInt8(user.count))
        writer.raw(user)
        writer.u8(UInt8(readData.count))
        for word in readData { writer.u16(word) }
    }

    static func read(from reader: inout ByteReader) throws(ProtocolError) -> TagReport {
        let epcCount = try reader.u8("tag.epc.length")
        guard (4...62).contains(epcCount) else { throw .invalidValue(field: "tag.epc.length", value: Int(epcCount)) }
        let epc = try reader.raw(count: Int(epcCount), "tag.epc")
        let pc = try reader.u16("tag.pc")
        let i = try reader.i16("tag.rssiI")
        let q = try reader.i16("tag.rssiQ")
        let frequency = try reader.u32("tag.frequency")
        let ms = try reader.u32("tag.time")
        let tid = try reader.raw(count: Int(try reader.u8("tag.tid.length")), "tag.tid")
        let user = try reader.raw(count: Int(try reader.u8("tag.user.length")), "tag.user")
        let words = try reader.u8("tag.readData.count")
        guard Int(words) <= InventoryParameters.maxDetailWords else { throw .invalidValue(field: "tag.readData.count", value: Int(words)) }
        var readData: [UInt16] = []
        for _ in 0..<words { readData.append(try reader.u16("tag.readData")) }
        return TagReport(epc: epc, pc: pc, rssiITenthsDBm: i, rssiQTenthsDBm: q, frequencyKHz: frequency,
                         milliseconds: ms, tid: tid, user: user, readData: readData)
    }
}

/// How an inventory ended, in the vendor's numbering (`UGI_INVENTORY_COMPLETED_*`).
public enum InventoryStopReason: UInt8, Sendable, Hashable, CaseIterable {
    case ok = 0
    case spiNotWorking = 1
    case enablePinNotWorking = 2
    case interruptPinNotWorking = 3
    case wrongChipVersion = 4
    case crystalNotStable = 5
    case pllNotLocked = 6
    case batteryTooLow = 7
    case temperatureTooHigh = 8
    case notProvisioned = 9
    case regionNotSet = 10
    case errorSending = 98
    case lostConnection = 99
}

/// Events a Grokker sends unasked while an inventory runs.
public enum InventoryEvent: Sendable, Hashable {
    /// A batch of reads, oldest first (event opcode ``Opcode/startInventory``).
    case tagReports([TagReport])
    /// The inventory ended on the reader's side (event opcode ``Opcode/stopInventory``).
    case stopped(InventoryStopReason)
    /// How far the running inventory has got (event opcode ``Opcode/inventoryStatus``):
    /// Query rounds run since it started. Sent every ``statusInterval`` seconds of the
    /// reader's clock while it runs.
    case status(rounds: UInt32)

    /// Seconds between two ``status(rounds:)`` events.
    public static let statusInterval = 0.25

    /// Reports per event message at most: keeps a message well under the link's limit.
    public static let maxReportsPerEvent = 32

    public func encode() -> [UInt8] {
        switch self {
        case .tagReports(let reports):
            precondition(reports.count <= Self.maxReportsPerEvent, "too many reports for one event")
            return encodeMessage(version: .current, kind: .event, opcode: .startInventory, id: 0) { writer in
                writer.u8(UInt8(reports.count))
                for r in reports { r.write(to: &writer) }
            }
        case .stopped(let reason):
            return encodeMessage(version: .current, kind: .event, opcode: .stopInventory, id: 0) { $0.u8(reason.rawValue) }
        case .status(let rounds):
            return encodeMessage(version: .current, kind: .event, opcode: .inventoryStatus, id: 0) { $0.u32(rounds) }
        }
    }

    /// Decodes an inventory event. Pure and bounded; never traps.
    public static func decode(_ message: some Collection<UInt8>) throws(ProtocolError) -> InventoryEvent {
        let (header, newerMinor, bytes) = try decodeHeader(message, expecting: .event)
        var reader = ByteReader(bytes, from: MessageHeader.size)
        let event: InventoryEvent
        switch header.opcode {
        case .startInventory:
            let count = try reader.u8("tagReports.count")
            guard Int(count) <= maxReportsPerEvent else { throw .invalidValue(field: "tagReports.count", value: Int(count)) }
            var reports: [TagReport] = []
            for _ in 0..<count { reports.append(try TagReport.read(from: &reader)) }
            event = .tagReports(reports)
        case .stopInventory:
            let code = try reader.u8("inventoryStopped.reason")
            guard let reason = InventoryStopReason(rawValue: code) else {
                throw .invalidValue(field: "inventoryStopped.reason", value: Int(code))
            }
            event = .stopped(reason)
        case .inventoryStatus:
            event = .status(rounds: try reader.u32("inventoryStatus.rounds"))
        default:
            throw .unknownOpcode(header.opcode.rawValue)
        }
        try finishMessage(reader, newerMinor: newerMinor)
        return event
    }
}
