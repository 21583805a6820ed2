/// One tag-access operation, addressed to a tag by its EPC (vendor: `programTag`,
/// `writeTag`, `readTag`, `setTagAccessPassword`, `setTagKillPassword`, `lockUnlockTag`,
/// `killTag`). Pointers and counts are in 16-bit words; `password` is the access password
/// (0: none).
public enum TagOperation: Sendable, Hashable {
    case read(bank: MemoryBank, wordPointer: UInt16, wordCount: UInt16, password: UInt32)
    case write(bank: MemoryBank, wordPointer: UInt16, words: [UInt16], password: UInt32)
    case programEPC(newEPC: [UInt8], password: UInt32)
    case setAccessPassword(UInt32, password: UInt32)
    case setKillPassword(UInt32, password: UInt32)
    /// The 20-bit Gen2 Lock payload (mask bits 19-10, action bits 9-0).
    case lock(payload: UInt32, password: UInt32)
    case kill(killPassword: UInt32)

    var code: UInt8 {
        switch self {
        case .read: 1
        case .write: 2
        case .programEPC: 3
        case .setAccessPassword: 4
        case .setKillPassword: 5
        case .lock: 6
        case .kill: 7
        }
    }

    func write(to w: inout ByteWriter) {
        w.u8(code)
        switch self {
        case .read(let bank, let pointer, let count, let password):
            w.u8(bank.rawValue); w.u16(pointer); w.u16(count); w.u32(password)
        case .write(let bank, let pointer, let words, let password):
            w.u8(bank.rawValue); w.u16(pointer); w.u8(UInt8(words.count)); for word in words { w.u16(word) }; w.u32(password)
        case .programEPC(let epc, let password):
            w.u8(UInt8(epc.count)); w.raw(epc); w.u32(password)
        case .setAccessPassword(let new, let password), .setKillPassword(let new, let password):
            w.u32(new); w.u32(password)
        case .lock(let payload, let password):
            w.u32(payload); w.u32(password)
        case .kill(let password):
            w.u32(password)
        }
    }

    static func readBank(from r: inout ByteReader) throws(ProtocolError) -> MemoryBank {
        let raw = try r.u8("tagAccess.bank")
        guard let bank = MemoryBank(rawValue: raw) else { throw .invalidValue(field: "tagAccess.bank", value: Int(raw)) }
        return bank
    }

    static func read(from r: inout ByteReader) throws(ProtocolError) -> TagOperation {
        let code = try r.u8("tagAccess.operation")
        switch code {
        case 1:
            let bank = try readBank(from: &r)
            return .read(bank: bank, wordPointer: try r.u16("tagAccess.wordPointer"),
                         wordCount: try r.u16("tagAccess.wordCount"), password: try r.u32("tagAccess.password"))
        case 2:
            let bank = try readBank(from: &r)
            let pointer = try r.u16("tagAccess.wordPointer")
            let count = try r.u8("tagAccess.wordCount")
            var words: [UInt16] = []
            for _ in 0..<count { words.append(try r.u16("tagAccess.words")) }
            return .write(bank: bank, wordPointer: pointer, words: words, password: try r.u32("tagAccess.password"))
        case 3:
            let count = try r.u8("tagAccess.newEPC.length")
            guard (2...62).contains(count) else { throw .invalidValue(field: "tagAccess.newEPC.length", value: Int(count)) }
            return .programEPC(newEPC: try r.raw(count: Int(count), "tagAccess.newEPC"), password: try r.u32("tagAccess.password"))
        case 4:
            return .setAccessPassword(try r.u32("tagAccess.newPassword"), password: try r.u32("tagAccess.password"))
        case 5:
            return .setKillPassword(try r.u32("tagAccess.newPassword"), password: try r.u32("tagAccess.password"))
        case 6:
            let payload = try r.u32("tagAccess.lockPayload")
            guard payload < 1 << 20 else { throw .invalidValue(field: "tagAccess.lockPayload", value: Int(payload)) }
            return .lock(payload: payload, password: try r.u32("tagAccess.password"))
        case 7:
            return .kill(killPassword: try r.u32("tagAccess.killPassword"))
        default:
            throw .invalidValue(field: "tagAccess.operation", value: Int(code))
        }
    }
}

/// The vendor's tag-access results (`UGI_TAG_ACCESS_*`).
public enum TagAccessStatus: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case ok = 0
    case wrongPassword = 1
    case passwordRequired = 2
    case memoryOverrun = 3
    case tagNotFound = 4
    case generalError = 5
    /// Tag access needs a running inventory (later vendor SDKs).
    case inventoryStopped = 6
    case requiresAuthentication = 7

    public var description: String {
        switch self {
        case .ok: "OK"
        case .wrongPassword: "WRONG_PASSWORD"
        case .passwordRequired: "PASSWORD_REQUIRED"
        case .memoryOverrun: "MEMORY_OVERRUN"
        case .tagNotFound: "TAG_NOT_FOUND"
        case .generalError: "GENERAL_ERROR"
        case .inventoryStopped: "INVENTORY_STOPPED"
        case .requiresAuthentication: "REQUIRES_AUTHENTICATION"
        }
    }
}
