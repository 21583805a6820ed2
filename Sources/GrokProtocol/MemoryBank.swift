/// A tag memory bank of EPC Gen2, numbered as on the wire and in the vendor API
/// (`UGI_MEMORY_BANK_*`): the one type the command protocol, the emulated tag field
/// (`Gen2Bank`) and the SDK (`UgiMemoryBank`) share.
public enum MemoryBank: UInt8, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Kill password (words 0-1) and access password (words 2-3). Vendor: `UGI_MEMORY_BANK_RESERVED`.
    case reserved = 0
    /// StoredCRC (word 0), PC (word 1), then the EPC. Vendor: `UGI_MEMORY_BANK_EPC`.
    case epc = 1
    /// The tag identifier: class `E2`, mask designer, model, often a serial. Vendor: `UGI_MEMORY_BANK_TID`.
    case tid = 2
    /// User memory, if the chip has any. Vendor: `UGI_MEMORY_BANK_USER`.
    case user = 3

    /// The vendor's constant suffix: `RESERVED`, `EPC`, `TID`, `USER`.
    public var description: String {
        switch self {
        case .reserved: "RESERVED"
        case .epc: "EPC"
        case .tid: "TID"
        case .user: "USER"
        }
    }
}
