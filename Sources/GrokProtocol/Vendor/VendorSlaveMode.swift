/// What the inventory start asked for, which decides the optional fields of every reader
/// packet in slave mode (the library keeps these from `CommandInventory`: 0x2b9d2-0x2b9d6,
/// 0x2b8c4-0x2b8c6).
public struct VendorSlaveContext: Sendable, Hashable {
    public var reportSubsequentFinds: Bool
    public var reportRssi: Bool
    public var detailedPerReadData: Bool
    /// Per-read data carries the two per-read words.
    public var perReadWords: Bool
    /// A `[len][TID]` field follows the EPC (max TID bytes > 0).
    public var readsTid: Bool
    public var readsUser: Bool
    public var readsReserved: Bool

    public init(reportSubsequentFinds: Bool = false, reportRssi: Bool = false, detailedPerReadData: Bool = false,
                perReadWords: Bool = false, readsTid: Bool = false, readsUser: Bool = false, readsReserved: Bool = false) {
        self.reportSubsequentFinds = reportSubsequentFinds
        self.reportRssi = reportRssi
        self.detailedPerReadData = detailedPerReadData
        self.perReadWords = perReadWords
        self.readsTid = readsTid
        self.readsUser = readsUser
        self.readsReserved = readsReserved
    }

    /// The context an inventory start sets up.
    public init(_ start: VendorInventoryStart) {
        self.init(reportSubsequentFinds: start.reportSubsequentFinds, reportRssi: start.reportRssi,
                  detailedPerReadData: start.detailedPerReadData, perReadWords: start.perReadWords != nil,
                  readsTid: start.maxTidBytes > 0, readsUser: start.maxUserBytes > 0,
                  readsReserved: start.maxReservedBytes > 0)
    }
}

/// One read inside detailed per-read data: `[ms ago LE16][channel index][rssi nibbles]`
/// then, with per-read words, `[word1 LE16][word2 LE16]` (parser at 0x12a60).
public struct VendorPerRead: Sendable, Hashable {
    public var msAgo: UInt16
    /// Index into the region's channel table (frequency = channel x 50 kHz).
    public var channelIndex: UInt8
    /// Two nibbles; the library passes high and low as two doubles (units unconfirmed).
    public var rssi: UInt8
    public var words: (UInt16, UInt16)?

    public init(msAgo: UInt16, channelIndex: UInt8, rssi: UInt8, words: (UInt16, UInt16)? = nil) {
        self.msAgo = msAgo
        self.channelIndex = channelIndex
        self.rssi = rssi
        self.words = words
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.msAgo == b.msAgo && a.channelIndex == b.channelIndex && a.rssi == b.rssi
            && a.words?.0 == b.words?.0 && a.words?.1 == b.words?.1
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(msAgo)
        hasher.combine(channelIndex)
        hasher.combine(rssi)
    }

    /// The most reads one tag record may carry (the library refuses more than 62).
    public static let maxReads = 62
}

/// One tag in a first-read packet (reader opcode 01 or 02).
public struct VendorTagRecord: Sendable, Hashable {
    /// With subsequent finds reported: the reader's one-byte id for the tag and its find count
    /// (the library uses id 0xffff and 0 finds otherwise).
    public var id: UInt8?
    public var numFinds: UInt8?
    /// With RSSI reported: two nibbles (high, low).
    public var rssi: UInt8?
    /// With detailed per-read data.
    public var perReads: [VendorPerRead]?
    /// 4...27 bytes; exactly 12 in opcode 02 packets.
    public var epc: [UInt8]
    /// Present when the inventory reads that bank (may be empty).
    public var tid: [UInt8]?
    public var user: [UInt8]?
    public var reserved: [UInt8]?

    public init(id: UInt8? = nil, numFinds: UInt8? = nil, rssi: UInt8? = nil, perReads: [VendorPerRead]? = nil,
                epc: [UInt8], tid: [UInt8]? = nil, user: [UInt8]? = nil, reserved: [UInt8]? = nil) {
        self.id = id
        self.numFinds = numFinds
        self.rssi = rssi
        self.perReads = perReads
        self.epc = epc
        self.tid = tid
        self.user = user
        self.reserved = reserved
    }
}

/// One tag in a subsequent-read packet (reader opcode 03).
public struct VendorSubsequentRecord: Sendable, Hashable {
    public var id: UInt8
    public var numFinds: UInt8
    public var rssi: UInt8?
    public var perReads: [VendorPerRead]?

    public init(id: UInt8, numFinds: UInt8, rssi: UInt8? = nil, perReads: [VendorPerRead]? = nil) {
        self.id = id
        self.numFinds = numFinds
        self.rssi = rssi
        self.perReads = perReads
    }
}

/// A request the reader sends to the host in slave mode. Layouts from the library's slave
/// handler (0x12c00); which optional fields appear is fixed by ``VendorSlaveContext``.
public enum VendorReaderPacket: Sendable, Hashable {
    /// 00: `[result][value LE16]`, exactly 3 bytes; ends slave mode. `result` is the vendor's
    /// `UgiInventoryCompletedReturnValues` (0 OK, 1-10 reader errors). The 2-byte value's meaning
    /// is unconfirmed.
    case completed(result: UInt8, value: UInt16)
    /// 01/02: `[flags]`, `[rounds]` only when subsequent finds are reported, then one or more
    /// records. Flags bit 0 set: the host sends no acknowledgement mask back.
    case firstRead(flags: UInt8, rounds: UInt8?, records: [VendorTagRecord], fixed96: Bool)
    /// 03: `[rounds]` then one or more `[id][numFinds]([rssi])(per-read data)`.
    case subsequentRead(rounds: UInt8, records: [VendorSubsequentRecord])
    /// 05: `[rounds]`, exactly 1 byte.
    case ping(rounds: UInt8)
    /// 06: `[result][epcLen][EPC][data]`.
    case tagAccessResult(result: UInt8, epc: [UInt8], data: [UInt8])

    public var opcode: VendorReaderOpcode {
        switch self {
        case .completed: .completed
        case .firstRead(_, _, _, let fixed96): fixed96 ? .firstRead96 : .firstRead
        case .subsequentRead: .subsequentRead
        case .ping: .ping
        case .tagAccessResult: .tagAccessResult
        }
    }

    public func encode(context: VendorSlaveContext) throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter(capacity: 64)
        switch self {
        case .completed(let result, let value):
            w.u8(result)
            w.u16(value)
        case .firstRead(let flags, let rounds, let records, let fixed96):
            guard !records.isEmpty else { throw .outOfRange(field: "firstRead.records", value: "0", allowed: "1 or more") }
            w.u8(flags)
            guard (rounds != nil) == context.reportSubsequentFinds else {
                throw .inconsistent(field: "firstRead.rounds present (subsequent finds reported)",
                                    declared: context.reportSubsequentFinds ? 1 : 0, actual: rounds == nil ? 0 : 1)
            }
            if let rounds { w.u8(rounds) }
            for record in records {
                try Self.write(record, fixed96: fixed96, context: context, into: &w)
            }
        case .subsequentRead(let rounds, let records):
            guard !records.isEmpty else { throw .outOfRange(field: "subsequentRead.records", value: "0", allowed: "1 or more") }
            w.u8(rounds)
            for record in records {
                w.u8(record.id)
                w.u8(record.numFinds)
                try Self.writeRssiAndPerReads(rssi: record.rssi, perReads: record.perReads, context: context, into: &w)
            }
        case .ping(let rounds):
            w.u8(rounds)
        case .tagAccessResult(let result, let epc, let data):
            try checkEpc("tagAccessResult.epc", epc)
            w.u8(result)
            w.u8(UInt8(epc.count))
            w.raw(epc)
            w.raw(data)
        }
        guard w.bytes.count <= VendorWireLimits.maxPayloadBytes else {
            throw .tooLong(field: "reader packet", length: w.bytes.count, limit: VendorWireLimits.maxPayloadBytes)
        }
        return w.bytes
    }

    private static func write(_ record: VendorTagRecord, fixed96: Bool, context: VendorSlaveContext,
                              into w: inout VendorWriter) throws(VendorCommandError) {
        if context.reportSubsequentFinds {
            guard let id = record.id, let finds = record.numFinds else {
                throw .inconsistent(field: "tagRecord.id/numFinds present (subsequent finds reported)", declared: 1, actual: 0)
            }
            w.u8(id)
            w.u8(finds)
        } else if record.id != nil || record.numFinds != nil {
            throw .inconsistent(field: "tagRecord.id/numFinds present (subsequent finds reported)", declared: 0, actual: 1)
        }
        try writeRssiAndPerReads(rssi: record.rssi, perReads: record.perReads, context: context, into: &w)
        if fixed96 {
            guard record.epc.count == 12 else {
                throw .inconsistent(field: "tagRecord.epc bytes (opcode 02)", declared: 12, actual: record.epc.count)
            }
        } else {
            try checkEpc("tagRecord.epc", record.epc)
            w.u8(UInt8(record.epc.count))
        }
        w.raw(record.epc)
        for (name, wanted, bank) in [("tid", context.readsTid, record.tid), ("user", context.readsUser, record.user),
                                     ("reserved", context.readsReserved, record.reserved)] {
            guard wanted == (bank != nil) else {
                throw .inconsistent(field: "tagRecord.\(name) present (bank read)", declared: wanted ? 1 : 0, actual: bank == nil ? 0 : 1)
            }
            if let bank {
                try checkRange("tagRecord.\(name).count", bank.count, 0...Int(VendorInventoryStart.maxMemoryBankBytes))
                w.u8(UInt8(bank.count))
                w.raw(bank)
            }
        }
    }

    private static func writeRssiAndPerReads(rssi: UInt8?, perReads: [VendorPerRead]?, context: VendorSlaveContext,
                                             into w: inout VendorWriter) throws(VendorCommandError) {
        guard context.reportRssi == (rssi != nil) else {
            throw .inconsistent(field: "record.rssi present (RSSI reported)", declared: context.reportRssi ? 1 : 0, actual: rssi == nil ? 0 : 1)
        }
        if let rssi { w.u8(rssi) }
        guard context.detailedPerReadData == (perReads != nil) else {
            throw .inconsistent(field: "record.perReads present (detailed per-read data)",
                                declared: context.detailedPerReadData ? 1 : 0, actual: perReads == nil ? 0 : 1)
        }
        guard let perReads else { return }
        try checkRange("record.perReads.count", perReads.count, 0...VendorPerRead.maxReads)
        w.u8(UInt8(perReads.count))
        for read in perReads {
            w.u16(read.msAgo)
            w.u8(read.channelIndex)
            w.u8(read.rssi)
            guard context.perReadWords == (read.words != nil) else {
                throw .inconsistent(field: "perRead.words present (per-read words)", declared: context.perReadWords ? 1 : 0,
                                    actual: read.words == nil ? 0 : 1)
            }
            if let words = read.words {
                w.u16(words.0)
                w.u16(words.1)
            }
        }
    }

    public init(opcode: UInt8, payload: [UInt8], context: VendorSlaveContext) throws(VendorCommandError) {
        guard let op = VendorReaderOpcode(rawValue: opcode) else {
            throw .unknownValue(field: "readerPacket.opcode", value: Int(opcode))
        }
        var r = VendorReader(payload)
        switch op {
        case .completed:
            self = .completed(result: try r.u8("completed.result"), value: try r.u16("completed.value"))
        case .firstRead, .firstRead96:
            let flags = try r.u8("firstRead.flags")
            let rounds: UInt8? = context.reportSubsequentFinds ? try r.u8("firstRead.rounds") : nil
            var records: [VendorTagRecord] = []
            repeat {
                records.append(try Self.readRecord(&r, fixed96: op == .firstRead96, context: context))
            } while !r.isAtEnd
            self = .firstRead(flags: flags, rounds: rounds, records: records, fixed96: op == .firstRead96)
        case .subsequentRead:
            let rounds = try r.u8("subsequentRead.rounds")
            var records: [VendorSubsequentRecord] = []
            repeat {
                let id = try r.u8("subsequentRead.id")
                let finds = try r.u8("subsequentRead.numFinds")
                let (rssi, perReads) = try Self.readRssiAndPerReads(&r, context: context)
                records.append(VendorSubsequentRecord(id: id, numFinds: finds, rssi: rssi, perReads: perReads))
            } while !r.isAtEnd
            self = .subsequentRead(rounds: rounds, records: records)
        case .ping:
            self = .ping(rounds: try r.u8("ping.rounds"))
        case .tagAccessResult:
            let result = try r.u8("tagAccessResult.result")
            let length = Int(try r.u8("tagAccessResult.epcLength"))
            try checkRange("tagAccessResult.epcLength", length, VendorWireLimits.epcBytes)
            let epc = try r.raw(length, "tagAccessResult.epc")
            self = .tagAccessResult(result: result, epc: epc, data: r.rest())
        }
        try r.finish("reader packet \(op)")
    }

    private static func readRecord(_ r: inout VendorReader, fixed96: Bool,
                                   context: VendorSlaveContext) throws(VendorCommandError) -> VendorTagRecord {
        var record = VendorTagRecord(epc: [])
        if context.reportSubsequentFinds {
            record.id = try r.u8("tagRecord.id")
            record.numFinds = try r.u8("tagRecord.numFinds")
        }
        (record.rssi, record.perReads) = try readRssiAndPerReads(&r, context: context)
        let length = fixed96 ? 12 : Int(try r.u8("tagRecord.epcLength"))
        try checkRange("tagRecord.epcLength", length, VendorWireLimits.epcBytes)
        record.epc = try r.raw(length, "tagRecord.epc")
        func bank(_ name: String) throws(VendorCommandError) -> [UInt8] {
            let count = Int(try r.u8("tagRecord.\(name)Length"))
            try checkRange("tagRecord.\(name).count", count, 0...Int(VendorInventoryStart.maxMemoryBankBytes))
            return try r.raw(count, "tagRecord.\(name)")
        }
        if context.readsTid { record.tid = try bank("tid") }
        if context.readsUser { record.user = try bank("user") }
        if context.readsReserved { record.reserved = try bank("reserved") }
        return record
    }

    private static func readRssiAndPerReads(_ r: inout VendorReader, context: VendorSlaveContext)
        throws(VendorCommandError) -> (UInt8?, [VendorPerRead]?) {
        let rssi: UInt8? = context.reportRssi ? try r.u8("record.rssi") : nil
        guard context.detailedPerReadData else { return (rssi, nil) }
        let count = Int(try r.u8("perReads.count"))
        try checkRange("perReads.count", count, 0...VendorPerRead.maxReads)
        var reads: [VendorPerRead] = []
        for _ in 0..<count {
            var read = VendorPerRead(msAgo: try r.u16("perRead.msAgo"), channelIndex: try r.u8("perRead.channel"),
                                     rssi: try r.u8("perRead.rssi"))
            if context.perReadWords { read.words = (try r.u16("perRead.word1"), try r.u16("perRead.word2")) }
            reads.append(read)
        }
        return (rssi, reads)
    }
}

/// Tag access results (reader opcode 06's first byte; the vendor's `UgiTagAccessReturnValues`).
public enum VendorTagAccessResult: UInt8, Sendable, Hashable, CaseIterable {
    case ok = 0
    case wrongPassword = 1
    case passwordRequired = 2
    case memoryOverrun = 3
    case tagNotFound = 4
    case generalError = 5
}

/// A tag-access request the host piggybacks on its answer to a reader packet.
public enum VendorTagAccessRequest: Sendable, Hashable {
    /// Answer id 6, sub-op 00: `00 epcLen EPC bank wordOffsetLE16 maxBytes minBytes` (the API
    /// takes a byte offset and the library halves it).
    case read(epc: [UInt8], bank: VendorMemoryBank, wordOffset: UInt16, maxBytes: UInt8, minBytes: UInt8)
    /// Answer id 6, sub-op 01: `01 epcLen EPC [u16 a][commandBits LE16][u8 b][u8 c][command]`,
    /// the command `(commandBits + 7) / 8` bytes. Which API argument (receive timeout, response
    /// bits without/with header bit) sits in `a`, `b`, `c` is inferred from the API's order,
    /// not confirmed.
    case custom(epc: [UInt8], receiveTimeout: UInt16, commandBits: UInt16, responseBitsNoHeader: UInt8,
                responseBitsWithHeader: UInt8, command: [UInt8])
    /// Answer id 6, sub-op 02 (not a tag access, but carried the same way): the new power
    /// range, power bytes `(dBm - 5) * 10`: `02 initial min max`.
    case changePower(initial: UInt8, min: UInt8, max: UInt8)
    /// Answer id 5: `epcLen EPC passwordLE32 bank wordOffsetLE16 byteCount data`.
    case write(epc: [UInt8], password: UInt32, bank: VendorMemoryBank, wordOffset: UInt16, data: [UInt8])
    /// Answer id 4: `epcLen oldEPC passwordLE32 newEPC` (the new EPC runs to the end).
    case programEpc(epc: [UInt8], password: UInt32, newEpc: [UInt8])
    /// Answer id 2: `epcLen EPC passwordLE32 maskAndActionLE32`. The first word is the slot the
    /// write and program requests use for the password (0xb14 of the pending request); the
    /// second holds the vendor's `UgiLockUnlockMaskAndAction` bits.
    case lock(epc: [UInt8], password: UInt32, maskAndAction: UInt32)

    public var answerCode: UInt8 {
        switch self {
        case .read, .custom, .changePower: 6
        case .write: 5
        case .programEpc: 4
        case .lock: 2
        }
    }

    func write(_ w: inout VendorWriter) throws(VendorCommandError) {
        switch self {
        case .read(let epc, let bank, let wordOffset, let maxBytes, let minBytes):
            try checkEpc("read.epc", epc)
            w.u8(0)
            w.u8(UInt8(epc.count))
            w.raw(epc)
            w.u8(bank.rawValue)
            w.u16(wordOffset)
            w.u8(maxBytes)
            w.u8(minBytes)
        case .custom(let epc, let timeout, let bits, let noHeader, let withHeader, let command):
            try checkEpc("custom.epc", epc)
            guard command.count == (Int(bits) + 7) / 8 else {
                throw .inconsistent(field: "custom.command bytes for commandBits", declared: (Int(bits) + 7) / 8, actual: command.count)
            }
            w.u8(1)
            w.u8(UInt8(epc.count))
            w.raw(epc)
            w.u16(timeout)
            w.u16(bits)
            w.u8(noHeader)
            w.u8(withHeader)
            w.raw(command)
        case .changePower(let initial, let minimum, let maximum):
            w.u8(2)
            w.u8(initial)
            w.u8(minimum)
            w.u8(maximum)
        case .write(let epc, let password, let bank, let wordOffset, let data):
            try checkEpc("write.epc", epc)
            try checkRange("write.data.count", data.count, 0...255)
            w.u8(UInt8(epc.count))
            w.raw(epc)
            w.u32(password)
            w.u8(bank.rawValue)
            w.u16(wordOffset)
            w.u8(UInt8(data.count))
            w.raw(data)
        case .programEpc(let epc, let password, let newEpc):
            try checkEpc("programEpc.epc", epc)
            try checkEpc("programEpc.newEpc", newEpc)
            w.u8(UInt8(epc.count))
            w.raw(epc)
            w.u32(password)
            w.raw(newEpc)
        case .lock(let epc, let password, let maskAndAction):
            try checkEpc("lock.epc", epc)
            w.u8(UInt8(epc.count))
            w.raw(epc)
            w.u32(password)
            w.u32(maskAndAction)
        }
    }

    static func read(code: UInt8, _ r: inout VendorReader) throws(VendorCommandError) -> VendorTagAccessRequest {
        func epc(_ r: inout VendorReader, _ field: String) throws(VendorCommandError) -> [UInt8] {
            let length = Int(try r.u8(field + "Length"))
            try checkRange(field + "Length", length, VendorWireLimits.epcBytes)
            return try r.raw(length, field)
        }
        func bank(_ r: inout VendorReader, _ field: String) throws(VendorCommandError) -> VendorMemoryBank {
            let byte = try r.u8(field)
            guard let bank = VendorMemoryBank(rawValue: byte) else { throw .unknownValue(field: field, value: Int(byte)) }
            return bank
        }
        switch code {
        case 6:
            let subOp = try r.u8("answer6.subOp")
            switch subOp {
            case 0:
                let tag = try epc(&r, "read.epc")
                return .read(epc: tag, bank: try bank(&r, "read.bank"), wordOffset: try r.u16("read.wordOffset"),
                             maxBytes: try r.u8("read.maxBytes"), minBytes: try r.u8("read.minBytes"))
            case 1:
                let tag = try epc(&r, "custom.epc")
                let timeout = try r.u16("custom.receiveTimeout")
                let bits = try r.u16("custom.commandBits")
                let noHeader = try r.u8("custom.responseBitsNoHeader")
                let withHeader = try r.u8("custom.responseBitsWithHeader")
                let command = try r.raw((Int(bits) + 7) / 8, "custom.command")
                return .custom(epc: tag, receiveTimeout: timeout, commandBits: bits, responseBitsNoHeader: noHeader,
                               responseBitsWithHeader: withHeader, command: command)
            case 2:
                return .changePower(initial: try r.u8("changePower.initial"), min: try r.u8("changePower.min"),
                                    max: try r.u8("changePower.max"))
            default:
                throw .unknownValue(field: "answer6.subOp", value: Int(subOp))
            }
        case 5:
            let tag = try epc(&r, "write.epc")
            let password = try r.u32("write.password")
            let memory = try bank(&r, "write.bank")
            let offset = try r.u16("write.wordOffset")
            let count = Int(try r.u8("write.byteCount"))
            return .write(epc: tag, password: password, bank: memory, wordOffset: offset, data: try r.raw(count, "write.data"))
        case 4:
            let tag = try epc(&r, "programEpc.epc")
            let password = try r.u32("programEpc.password")
            let newEpc = r.rest()
            try checkEpc("programEpc.newEpc", newEpc)
            return .programEpc(epc: tag, password: password, newEpc: newEpc)
        case 2:
            let tag = try epc(&r, "lock.epc")
            return .lock(epc: tag, password: try r.u32("lock.password"), maskAndAction: try r.u32("lock.maskAndAction"))
        default:
            throw .unknownValue(field: "answer.code", value: Int(code))
        }
    }
}

/// The host's answer to one reader packet in slave mode: a response code and its data (the
/// packet layer turns these into `f0`, `e1`, `87` or a long response `[code byte][len][data]`).
/// Built by the library at 0x13438.
public enum VendorSlaveAnswer: Sendable, Hashable {
    /// Code 0. After a first read (unless its flags bit 0 is set) the data is the
    /// acknowledgement mask (``VendorAckMask``; seen `78 01 02 e3`); otherwise empty (`f0`).
    case ack(mask: [UInt8])
    /// Code 1 (`e1` when short): the application stopped the inventory; the reader answers
    /// with 00 completed. Answering a first read, the mask still comes first (the stop check
    /// at 0x13438 runs after the mask is written), so the answer is then long.
    case stop(mask: [UInt8])
    /// Code 3: pause (`stopTemporarily`): `[ms LE16]`, the requested time plus the platform's
    /// pause latency; the host then pauses its connection.
    case pause(ms: UInt16)
    /// Codes 2, 4, 5, 6: a tag access (or power change), after the mask when answering a first read.
    case access(mask: [UInt8], VendorTagAccessRequest)
    /// Code 7 (`87`): the packet made no sense to the host.
    case nack

    public var code: UInt8 {
        switch self {
        case .ack: 0
        case .stop: 1
        case .pause: 3
        case .access(_, let request): request.answerCode
        case .nack: 7
        }
    }

    /// The answer's data bytes (empty for a short answer).
    public func encodeData() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter()
        switch self {
        case .ack(let mask):
            w.raw(mask)
        case .stop(let mask):
            w.raw(mask)
        case .nack:
            break
        case .pause(let ms):
            w.u16(ms)
        case .access(let mask, let request):
            w.raw(mask)
            try request.write(&w)
        }
        guard w.bytes.count <= VendorWireLimits.maxPayloadBytes else {
            throw .tooLong(field: "slave answer", length: w.bytes.count, limit: VendorWireLimits.maxPayloadBytes)
        }
        return w.bytes
    }

    /// Decodes an answer; `maskBytes` is how many mask bytes precede any request (the
    /// reader knows it from the first read it sent: ``VendorAckMask/byteCount(records:)``, 0 otherwise).
    public init(code: UInt8, data: [UInt8], maskBytes: Int) throws(VendorCommandError) {
        var r = VendorReader(data)
        switch code {
        case 0:
            self = .ack(mask: r.rest())
        case 1:
            self = .stop(mask: r.rest())
        case 3:
            self = .pause(ms: try r.u16("pause.ms"))
        case 2, 4, 5, 6:
            let mask = try r.raw(maskBytes, "answer.mask")
            self = .access(mask: mask, try VendorTagAccessRequest.read(code: code, &r))
        case 7:
            self = .nack
        default:
            throw .unknownValue(field: "answer.code", value: Int(code))
        }
        try r.finish("slave answer \(code)")
    }
}

/// The acknowledgement mask the host returns for a first-read packet (0x13650): bit 0 is set
/// when the application's callback set its bit 0 for any record, bit k+1 when it set bit 1 for
/// record k; `((records - 1) >> 3) + 1` bytes, little-endian (so with 8 records the last record's
/// bit falls off, as in the library).
public enum VendorAckMask {
    public static func byteCount(records: Int) -> Int { records <= 0 ? 0 : ((records - 1) >> 3) + 1 }

    /// The mask for `flagged` (one entry per record; at most 31 records are representable).
    public static func encode(flagged: [Bool], anyBit0: Bool) throws(VendorCommandError) -> [UInt8] {
        try checkRange("ackMask.records", flagged.count, 1...31)
        var value: UInt32 = anyBit0 ? 1 : 0
        for (index, flag) in flagged.enumerated() where flag { value |= 1 << UInt32(index + 1) }
        return (0..<byteCount(records: flagged.count)).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
    }
}
