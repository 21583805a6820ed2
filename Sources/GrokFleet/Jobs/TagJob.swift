import UGrokIt

/// `grokctl tag read|write|program|lock`: one operation on one tag, by EPC, on one Grokker,
/// inside a short inventory (tag access needs the carrier on), as the vendor's apps did.
public struct TagJob: Sendable {
    /// What is done to the tag.
    public enum Operation: Sendable, Hashable {
        /// Reads `length` bytes of `bank` from `offset` (0: as much as the bank holds).
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
            // 0: as much as the bank holds (the vendor's read takes a minimum and a maximum: 2 to 254 bytes).
            let answer = length == 0 && password == 0
                ? try session.readTag(epc, bank: bank, offset: offset, minBytes: 2, maxBytes: 254)
                : try session.readTag(epc, bank: bank, offset: offset, maxBytes: length == 0 ? 254 : length, password: password)
            return Outcome(status: answer.status, data: answer.data)
        case .write(let bank, let offset, let data):
            return Outcome(status: try session.writeTag(epc, bank: bank, offset: offset, data: data, password: password))
        case .program(let newEpc):
            return Outcome(status: try session.programTag(epc, to: newEpc, password: password))
        case .lock(let payload):
            return Outcome(status: try session.lockUnlockTag(epc, payload: payload, password: password))
        }
    }
}
