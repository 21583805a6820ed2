import GrokLink
import GrokProtocol

/// One tag read as the reader reported it in slave mode (a first read or a subsequent one).
public struct VendorTagRead: Sendable, Hashable {
    public var epc: [UInt8]
    /// The first time this inventory reported the tag.
    public var isFirstFind: Bool
    /// The reader's find count for this report (1 for a first read without subsequent finds).
    public var numFinds: Int
    /// The two RSSI levels (I high nibble, Q low) when the inventory reports RSSI; the vendor
    /// library hands them to the application as two numbers 0-15 (``VendorRSSI``).
    public var rssi: (high: UInt8, low: UInt8)?
    public var perReads: [VendorPerRead]
    public var tid: [UInt8]
    public var user: [UInt8]
    public var reserved: [UInt8]
    /// Inventory rounds run when it was reported (the reader's 8-bit counter, unwrapped).
    public var rounds: Int

    public static func == (a: Self, b: Self) -> Bool {
        a.epc == b.epc && a.isFirstFind == b.isFirstFind && a.numFinds == b.numFinds && a.rssi?.high == b.rssi?.high
            && a.rssi?.low == b.rssi?.low && a.perReads == b.perReads && a.tid == b.tid && a.user == b.user
            && a.reserved == b.reserved && a.rounds == b.rounds
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(epc)
        hasher.combine(numFinds)
        hasher.combine(rounds)
    }

    /// The read as the ``InventoryTracker`` takes it. RSSI: the record's levels (else the
    /// newest per-read data's) in dBm on ``VendorRSSI``'s scale, nil when the reader sent
    /// none; frequency: the channel of
    /// the region's hop table when `channelsKHz` is given, else 0; time: the reader's
    /// "ms ago" subtracted from `atMilliseconds`.
    public func report(atMilliseconds now: Int, channelsKHz: [Int] = []) -> TagReport {
        let last = perReads.first
        let frequency: UInt32 = last.flatMap { read in
            channelsKHz.indices.contains(Int(read.channelIndex)) ? UInt32(channelsKHz[Int(read.channelIndex)]) : nil
        } ?? 0
        let ms = max(0, now - Int(last?.msAgo ?? 0))
        var words: [UInt16] = []
        if let pair = last?.words { words = [pair.0, pair.1] }
        let pcWords = UInt16(epc.count / 2)
        let levels = rssi.map { $0.high << 4 | $0.low & 0x0f } ?? last?.rssi
        let dBm = levels.map(VendorRSSI.dBm(byte:))
        func tenths(_ value: Double?) -> Int16? { value.map { Int16(($0 * 10).rounded()) } }
        return TagReport(epc: epc, pc: pcWords << 11, rssiITenthsDBm: tenths(dBm?.i),
                         rssiQTenthsDBm: tenths(dBm?.q), frequencyKHz: frequency, milliseconds: UInt32(ms),
                         tid: tid, user: user, reserved: reserved, readData: words)
    }
}

/// Where an inventory on the vendor protocol stands (what the inventory-state listeners hear).
public enum VendorInventoryState: Sendable, Hashable {
    /// The start was sent; the reader has not taken it yet.
    case starting
    /// The reader took it (ACK_0) and drives the link (slave mode).
    case running
    /// The host asked it to stop (ACK_1 in the next answer).
    case stopping
    /// The reader said it ended (reader packet 00), with the vendor's completion code.
    case completed(InventoryStopReason)
    /// The reader refused the start with this one-byte error.
    case refused(UInt8)
    /// Slave mode ended without a completion (the reader went quiet, the link dropped).
    case interrupted
}

/// A tag access (or power change) the host asked for and the reader's answer to it.
public struct VendorTagAccessOutcome: Sendable, Hashable {
    public var request: VendorTagAccessRequest
    /// The vendor's result code (``VendorTagAccessResult``; 0 OK).
    public var result: UInt8
    /// The bytes read (read) or the custom command's reply.
    public var data: [UInt8]
}

/// The host's side of slave mode, pure: it answers each packet the reader sends during an
/// inventory exactly as the vendor host library answers it (0x12c00, 0x13438) and keeps what
/// the packets said: tag reads, rounds, tag-access results, the completion.
///
/// - a first read (01/02) is answered with the acknowledgement mask, every record flagged
///   (`78 01 02 e3` for one record), or with a short ACK_0 when its flags bit 0 says no mask
///   is wanted;
/// - subsequent reads (03), pings (05) and tag-access results (06) get ACK_0 (`f0`);
/// - a packet that does not decode gets ACK_7 (`87`): the vendor answers a 06 result for a
///   power change so;
/// - a stop rides in the next answer (ACK_1, `e1`, after the mask on a first read), a tag
///   access likewise (answer codes 2, 4, 5, 6);
/// - the completion (00) is answered ACK_0 and ends slave mode.
public final class VendorInventoryHost {
    public let start: VendorInventoryStart
    public let context: VendorSlaveContext
    /// Stop after the first tag (``UgiRfidConfiguration/singleFindMode`` without
    /// ``UgiRfidConfiguration/singleFindContinueInventory``).
    public let stopAfterFirstTag: Bool

    public private(set) var state: VendorInventoryState = .starting
    /// Reads not yet taken with ``takeReads()``.
    private var reads: [VendorTagRead] = []
    /// Rounds run, from the reader's 8-bit counter.
    public private(set) var rounds = 0
    private var lastRoundByte: UInt8?
    /// The reader's tag ids (with subsequent finds) to their EPCs.
    public private(set) var tagsByID: [UInt8: [UInt8]] = [:]
    /// Every EPC seen in this inventory.
    public private(set) var seen: Set<[UInt8]> = []
    public private(set) var packetsAnswered = 0
    public private(set) var nacksSent = 0

    private var stopWanted = false
    private var stopSent = false
    private var queuedAccess: VendorTagAccessRequest?
    /// The access sent and waiting for its 06 result.
    public private(set) var accessInFlight: VendorTagAccessRequest?
    private var outcomes: [VendorTagAccessOutcome] = []
    /// Called on every change of ``state``.
    public var onStateChange: ((VendorInventoryState) -> Void)?

    public init(start: VendorInventoryStart, stopAfterFirstTag: Bool = false) {
        self.start = start
        context = VendorSlaveContext(start)
        self.stopAfterFirstTag = stopAfterFirstTag
    }

    func set(_ new: VendorInventoryState) {
        guard new != state else { return }
        state = new
        onStateChange?(new)
    }

    /// The reader took the start (slave mode on).
    public func started() { set(.running) }

    /// Slave mode ended; without a completion that is an interruption.
    public func slaveModeEnded() {
        if case .completed = state { return }
        set(.interrupted)
    }

    /// Asks the reader to stop, in the next answer.
    public func requestStop() {
        guard !stopSent, isActive else { return }
        stopWanted = true
        set(.stopping)
    }

    /// Whether the reader is still running this inventory.
    public var isActive: Bool {
        switch state {
        case .starting, .running, .stopping: true
        default: false
        }
    }

    /// Queues a tag access for the next answer. One at a time.
    public func queue(_ access: VendorTagAccessRequest) -> Bool {
        guard queuedAccess == nil, accessInFlight == nil, isActive, !stopWanted else { return false }
        queuedAccess = access
        return true
    }

    /// Whether an access is queued or waiting for its result.
    public var accessPending: Bool { queuedAccess != nil || accessInFlight != nil }

    /// Reads gathered since the last call, oldest first.
    public func takeReads() -> [VendorTagRead] {
        defer { reads.removeAll(keepingCapacity: true) }
        return reads
    }

    /// Tag-access outcomes since the last call, oldest first.
    public func takeOutcomes() -> [VendorTagAccessOutcome] {
        defer { outcomes.removeAll(keepingCapacity: true) }
        return outcomes
    }

    /// The answer to one packet from the reader.
    public func answer(_ request: RequestPacket) -> VendorReply {
        packetsAnswered += 1
        guard let packet = decode(request) else {
            nacksSent += 1
            return .nack
        }
        var mask: [UInt8] = []
        switch packet {
        case .completed(let result, _):
            set(.completed(InventoryStopReason(rawValue: result) ?? .errorSending))
            return VendorReply(.ack, endsSlaveMode: true)
        case .firstRead(let flags, let roundByte, let records, _):
            if let roundByte { count(roundByte) }
            for record in records { noteFirst(record) }
            if flags & 0x01 == 0 {
                mask = (try? VendorAckMask.encode(flagged: records.map { _ in true }, anyBit0: false)) ?? []
            }
            if stopAfterFirstTag, !records.isEmpty { requestStop() }
        case .subsequentRead(let roundByte, let records):
            count(roundByte)
            for record in records { noteSubsequent(record) }
        case .ping(let roundByte):
            count(roundByte)
        case .tagAccessResult(let result, let epc, let data):
            guard let access = accessInFlight, access.epc == epc else {
                // A result for a tag access the host does not know: taken and dropped, as the vendor does.
                return .ack
            }
            accessInFlight = nil
            outcomes.append(VendorTagAccessOutcome(request: access, result: result, data: data))
        }
        return reply(mask: mask)
    }

    /// The packet as the context says it is laid out. A subsequent read with one byte per
    /// record more than that (an RSSI byte while RSSI is off) is taken as carrying RSSI: the
    /// vendor host answers such packets ACK_0 and reports the tags (inventory-presets
    /// fixtures: `83 04 [rounds][id][finds] 5a` with RSSI off).
    private func decode(_ request: RequestPacket) -> VendorReaderPacket? {
        if let packet = try? VendorReaderPacket(opcode: request.command, payload: request.payload, context: context) {
            return packet
        }
        guard request.command == VendorReaderOpcode.subsequentRead.rawValue, !context.reportRssi else { return nil }
        var lenient = context
        lenient.reportRssi = true
        return try? VendorReaderPacket(opcode: request.command, payload: request.payload, context: lenient)
    }

    private func reply(mask: [UInt8]) -> VendorReply {
        let answer: VendorSlaveAnswer
        if stopWanted, !stopSent {
            stopSent = true
            stopWanted = false
            answer = .stop(mask: mask)
        } else if let access = queuedAccess {
            queuedAccess = nil
            answer = .access(mask: mask, access)
            if case .changePower = access {
                // Nothing comes back for a power change: done once it is sent.
                outcomes.append(VendorTagAccessOutcome(request: access, result: 0, data: []))
            } else {
                accessInFlight = access
            }
        } else {
            answer = .ack(mask: mask)
        }
        guard let data = try? answer.encodeData() else { return .nack }
        return VendorReply(ResponsePacket(id: answer.code, data: data))
    }

    private func count(_ byte: UInt8) {
        if let last = lastRoundByte {
            rounds += Int(byte &- last)
        } else {
            rounds = Int(byte)
        }
        lastRoundByte = byte
    }

    private func noteFirst(_ record: VendorTagRecord) {
        if let id = record.id { tagsByID[id] = record.epc }
        let first = seen.insert(record.epc).inserted
        reads.append(VendorTagRead(epc: record.epc, isFirstFind: first, numFinds: Int(record.numFinds ?? 1),
                                   rssi: record.rssi.map { ($0 >> 4, $0 & 0x0f) }, perReads: record.perReads ?? [],
                                   tid: record.tid ?? [], user: record.user ?? [], reserved: record.reserved ?? [],
                                   rounds: rounds))
    }

    private func noteSubsequent(_ record: VendorSubsequentRecord) {
        guard let epc = tagsByID[record.id] else { return }
        // RSSI only when asked for (a lenient decode may have read a byte the vendor ignores).
        let rssi = context.reportRssi ? record.rssi : nil
        reads.append(VendorTagRead(epc: epc, isFirstFind: false, numFinds: Int(record.numFinds),
                                   rssi: rssi.map { ($0 >> 4, $0 & 0x0f) }, perReads: record.perReads ?? [],
                                   tid: [], user: [], reserved: [], rounds: rounds))
    }
}

extension VendorTagAccessRequest {
    /// The EPC the access addresses (empty for a power change).
    public var epc: [UInt8] {
        switch self {
        case .read(let epc, _, _, _, _), .custom(let epc, _, _, _, _, _), .write(let epc, _, _, _, _),
             .programEpc(let epc, _, _), .lock(let epc, _, _):
            epc
        case .changePower:
            []
        }
    }
}
