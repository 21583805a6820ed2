import GrokProtocol

/// A Gen2 memory bank: the protocol's ``MemoryBank``.
public typealias Gen2Bank = MemoryBank

/// The lock state of all five fields of a tag.
public struct Gen2LockState: Sendable, Hashable {
    /// Kill password read/write lock.
    public var killPassword: Gen2LockAction
    /// Access password read/write lock.
    public var accessPassword: Gen2LockAction
    /// EPC bank write lock.
    public var epc: Gen2LockAction
    /// TID bank write lock.
    public var tid: Gen2LockAction
    /// USER bank write lock.
    public var user: Gen2LockAction

    /// Creates a lock state; by default everything is writable except the TID, which tag
    /// makers permalock at the factory.
    public init(
        killPassword: Gen2LockAction = .writable, accessPassword: Gen2LockAction = .writable,
        epc: Gen2LockAction = .writable, tid: Gen2LockAction = .permanentlyNotWritable,
        user: Gen2LockAction = .writable
    ) {
        self.killPassword = killPassword
        self.accessPassword = accessPassword
        self.epc = epc
        self.tid = tid
        self.user = user
    }

    /// The state of one field.
    public subscript(field: Gen2LockField) -> Gen2LockAction {
        get {
            switch field {
            case .killPassword: killPassword
            case .accessPassword: accessPassword
            case .epc: epc
            case .tid: tid
            case .user: user
            }
        }
        set {
            switch field {
            case .killPassword: killPassword = newValue
            case .accessPassword: accessPassword = newValue
            case .epc: epc = newValue
            case .tid: tid = newValue
            case .user: user = newValue
            }
        }
    }

    /// Applies a Lock payload as a Gen2 tag does, or returns `nil` when the tag must refuse
    /// it (it tries to change a permalocked field).
    ///
    /// Per field whose mask is non-zero: mask bit 1 (value 2) applies the action's
    /// pwd-write bit, mask bit 0 (value 1) its permalock bit. A field already permalocked
    /// cannot change: a payload that would deassert its permalock bit or change its
    /// pwd-write bit makes the whole Lock fail; one that only reasserts the permalock is
    /// ignored for that field (Gen2 v2, 6.3.2.12.3.5).
    public func applying(_ payload: Gen2LockPayload) -> Gen2LockState? {
        var result = self
        for field in Gen2LockField.allCases {
            let mask = payload.mask(for: field)
            guard mask != 0 else { continue }
            let current = self[field].rawValue
            let action = payload.action(for: field).rawValue
            if self[field].isPermanent {
                if mask & 1 != 0 {
                    if action & 1 == 0 { return nil }  // deasserting a permalock
                    continue  // reasserting it: this field's action is ignored
                }
                if action & 2 != current & 2 { return nil }  // changing a permalocked field
                continue
            }
            var bits = current
            if mask & 2 != 0 { bits = (bits & ~2) | (action & 2) }
            if mask & 1 != 0 { bits = (bits & ~1) | (action & 1) }
            result[field] = Gen2LockAction(rawValue: bits)!
        }
        return result
    }
}

/// The memory of one Gen2 tag: the four banks as 16-bit words and the lock state.
///
/// The EPC bank holds the StoredCRC at word 0, the PC at word 1 (EPC length in words in bits
/// 15-11) and then room for ``epcCapacityWords`` EPC words; the EPC is the first
/// *length* of them. The StoredCRC is recomputed whenever the PC or the EPC changes.
public struct TagMemory: Sendable, Hashable {
    /// Words per password.
    static let passwordWords = 2
    /// The longest EPC the PC's 5 length bits can describe.
    public static let maxEPCWords = 31

    /// RESERVED: kill password (words 0-1), access password (words 2-3).
    public internal(set) var reserved: [UInt16]
    /// EPC bank: StoredCRC, PC, EPC words (the full capacity).
    public internal(set) var epcBank: [UInt16]
    /// TID bank.
    public internal(set) var tid: [UInt16]
    /// USER bank (possibly empty).
    public internal(set) var user: [UInt16]
    /// Which fields are locked, and how.
    public internal(set) var locks: Gen2LockState

    /// Creates a tag's memory.
    /// - Parameters:
    ///   - epc: The EPC, a whole number of words (1...31).
    ///   - pc: The PC word; `nil` computes it: EPC length in bits 15-11, UMI (bit 10) set when
    ///     USER memory is present, everything else 0. A given PC keeps its bits as they are.
    ///   - epcCapacityWords: EPC words the bank has room for (at least the EPC's length).
    ///   - tid: TID bank words.
    ///   - user: USER bank words.
    ///   - accessPassword: The access password (0: none).
    ///   - killPassword: The kill password (0: the tag cannot be killed).
    ///   - locks: The lock state.
    public init(
        epc: [UInt8], pc: UInt16? = nil, epcCapacityWords: Int? = nil, tid: [UInt16], user: [UInt16] = [],
        accessPassword: UInt32 = 0, killPassword: UInt32 = 0, locks: Gen2LockState = Gen2LockState()
    ) {
        let epcWords = Self.words(fromBytes: epc)
        let capacity = max(epcCapacityWords ?? max(8, epcWords.count), epcWords.count)
        let computedPC = UInt16(epcWords.count) << 11 | (user.isEmpty ? 0 : 0x0400)
        reserved = [
            UInt16(killPassword >> 16), UInt16(killPassword & 0xFFFF),
            UInt16(accessPassword >> 16), UInt16(accessPassword & 0xFFFF),
        ]
        epcBank = [0, pc ?? computedPC] + epcWords + Array(repeating: 0, count: capacity - epcWords.count)
        self.tid = tid
        self.user = user
        self.locks = locks
        recomputeStoredCRC()
    }

    /// Creates memory from banks as stored (state files); the StoredCRC is recomputed.
    init(reserved: [UInt16], epcBank: [UInt16], tid: [UInt16], user: [UInt16], locks: Gen2LockState) {
        self.reserved = reserved
        self.epcBank = epcBank
        self.tid = tid
        self.user = user
        self.locks = locks
        recomputeStoredCRC()
    }

    /// The PC word.
    public var pc: UInt16 { epcBank[1] }
    /// The EPC length in words, from the PC's bits 15-11.
    public var epcWordCount: Int { Int(pc >> 11) }
    /// EPC words the bank has room for.
    public var epcCapacityWords: Int { epcBank.count - 2 }
    /// The StoredCRC (EPC bank word 0).
    public var storedCRC: UInt16 { epcBank[0] }
    /// The EPC as bytes (the words the PC's length bits cover).
    public var epc: [UInt8] {
        Self.bytes(fromWords: epcBank[2..<(2 + min(epcWordCount, epcCapacityWords))])
    }
    /// The access password (0: none).
    public var accessPassword: UInt32 { UInt32(reserved[2]) << 16 | UInt32(reserved[3]) }
    /// The kill password (0: the tag cannot be killed).
    public var killPassword: UInt32 { UInt32(reserved[0]) << 16 | UInt32(reserved[1]) }

    /// The words of one bank.
    public func words(of bank: Gen2Bank) -> [UInt16] {
        switch bank {
        case .reserved: reserved
        case .epc: epcBank
        case .tid: tid
        case .user: user
        }
    }

    /// Replaces words of a bank as they are (no lock or bound checks: callers check); keeps
    /// the StoredCRC in step with the PC and EPC.
    mutating func store(_ words: [UInt16], in bank: Gen2Bank, at pointer: Int) {
        let range = pointer..<(pointer + words.count)
        switch bank {
        case .reserved: reserved.replaceSubrange(range, with: words)
        case .epc:
            epcBank.replaceSubrange(range, with: words)
            recomputeStoredCRC()
        case .tid: tid.replaceSubrange(range, with: words)
        case .user: user.replaceSubrange(range, with: words)
        }
    }

    /// Recomputes the StoredCRC over the PC and the EPC words its length covers.
    mutating func recomputeStoredCRC() {
        let end = 2 + min(epcWordCount, epcCapacityWords)
        epcBank[0] = Gen2CRC16.checksum(words: epcBank[1..<end])
    }

    /// The bits `offset ..< offset + length` of a bank, most significant bit of word 0 first,
    /// compared with the first `length` bits of `mask`; `false` when the range runs past the
    /// bank (Gen2 Select).
    func matches(bank: Gen2Bank, bitOffset: Int, bitLength: Int, mask: [UInt8]) -> Bool {
        let words = words(of: bank)
        guard bitOffset >= 0, bitLength >= 0, bitOffset + bitLength <= words.count * 16 else { return false }
        for i in 0..<bitLength {
            let bit = bitOffset + i
            let memoryBit = (words[bit / 16] >> UInt16(15 - bit % 16)) & 1
            let maskBit = (mask[i / 8] >> UInt8(7 - i % 8)) & 1
            if UInt8(memoryBit) != maskBit { return false }
        }
        return true
    }

    /// Big-endian words from bytes (an odd last byte is padded with zero).
    public static func words(fromBytes bytes: [UInt8]) -> [UInt16] {
        stride(from: 0, to: bytes.count, by: 2).map { i in
            UInt16(bytes[i]) << 8 | (i + 1 < bytes.count ? UInt16(bytes[i + 1]) : 0)
        }
    }

    /// Bytes from big-endian words.
    public static func bytes(fromWords words: some Sequence<UInt16>) -> [UInt8] {
        words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
