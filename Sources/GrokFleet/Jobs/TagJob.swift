import UGrokIt

/// `grokctl tag read|write|program|lock`: one operation on one tag, by EPC, on one Grokker,
/// inside a short inventory (tag access needs the carrier on), as the vendor's apps did.
public struct TagJob: Sendable {
    /// What is done to the tag.
    public enum Operation: Sendable, Hashable {
        /// Reads `length` bytes of `bank` from `offset` (0: to the end of the bank, see
        /// ``TagJob/readToEnd(of:from:_:)``).
        case read(bank: UgiMemoryBank, offset: Int, length: Int)
        case write(bank: UgiMemoryBank, offset: Int, data: [UInt8])
        /// Gives the tag a new EPC.
        case program(newEpc: UgiEpc)
        /// The Gen2 lock payload (20 bits).
        case lock(payload: UInt32)
    }

    /// The vendor's result, and the bytes a read returned.
    public struct Outcome: Sendable, Hashable {
        public var status: TagAccessStatus
        public var data: [UInt8]?
    }

    public var access: DeviceAccess
    /// The tag, by its EPC.
    public var epc: UgiEpc
    /// Its access password (0: none).
    public var password: UInt32

    public init(access: DeviceAccess, epc: UgiEpc, password: UInt32 = 0) {
        self.access = access
        self.epc = epc
        self.password = password
    }

    /// Connects to `device`, starts an inventory, performs `operation`, stops the inventory.
    /// - Throws: what the port, the link or the reader throws (``ReaderError``); a tag's
    ///   refusal is no error but the outcome's ``Outcome/status``.
    public func run(_ operation: Operation, on device: DeviceSpec) throws -> Outcome {
        try access.connected(device) { session, _ in
            try session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryDistance))
            let outcome = try perform(operation, session)
            _ = try session.stopInventory()
            return outcome
        }
    }

    private func perform(_ operation: Operation, _ session: ReaderSession) throws(ReaderError) -> Outcome {
        switch operation {
        case .read(let bank, let offset, let length):
            if length == 0 { return try readToEnd(of: bank, from: offset, session) }
            let answer = try session.readTag(epc, bank: bank, offset: offset, maxBytes: length, password: password)
            return Outcome(status: answer.status, data: answer.data)
        case .write(let bank, let offset, let data):
            return Outcome(status: try session.writeTag(epc, bank: bank, offset: offset, data: data, password: password))
        case .program(let newEpc):
            return Outcome(status: try session.programTag(epc, to: newEpc, password: password))
        case .lock(let payload):
            return Outcome(status: try session.lockUnlockTag(epc, payload: payload, password: password))
        }
    }

    /// Words a read to the end of a bank asks for at first (``readToEnd(of:from:_:)``).
    static let firstBlockWords = 8

    /// Reads `bank` from byte `offset` to its end. A read asks for an exact number of words
    /// and a Gen2 tag answers one that runs past its bank with MEMORY_OVERRUN, so the tag
    /// tells how long the bank is: the bank is read in blocks of ``firstBlockWords`` words,
    /// the block halved at each overrun; an overrun of a one-word block is the end. The
    /// outcome is OK with every byte up to the end; MEMORY_OVERRUN when `offset` is already
    /// past it; any other refusal (TAG_NOT_FOUND, PASSWORD_REQUIRED, ...) as the tag gave it,
    /// without the bytes read before it.
    func readToEnd(of bank: UgiMemoryBank, from offset: Int, _ session: ReaderSession) throws(ReaderError) -> Outcome {
        var data: [UInt8] = []
        var words = Self.firstBlockWords
        // The request's word offset is 16 bits: a bank cannot go on past it.
        while (offset + data.count) / 2 + words <= Int(UInt16.max) {
            let answer = try session.readTag(epc, bank: bank, offset: offset + data.count, maxBytes: words * 2, password: password)
            switch answer.status {
            case .ok:
                guard !answer.data.isEmpty else { return Outcome(status: .ok, data: data) }
                data += answer.data
            case .memoryOverrun where words > 1:
                words /= 2
            case .memoryOverrun:
                // One word past the end: the bank ends here.
                return data.isEmpty ? Outcome(status: .memoryOverrun, data: nil) : Outcome(status: .ok, data: data)
            default:
                return Outcome(status: answer.status, data: nil)
            }
        }
        return Outcome(status: .ok, data: data)
    }
}
