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
    /// A command the host composes bit by bit (vendor `customCommandToTag`), sent to the
    /// singulated tag in the access state; see ``CustomTagCommand``.
    case custom(CustomTagCommand)

    var code: UInt8 {
        switch self {
        case .read: 1
        case .write: 2
        case .programEPC: 3
        case .setAccessPassword: 4
        case .setKillPassword: 5
        case .lock: 6
        case .kill: 7
        case .custom: 8
        }
    }

}

/// A Gen2 command the host composes (vendor `customCommandToTag`): the reader singulates
/// the tag, sends `commandBits` bits of `command` (MSB first; the reader appends the
/// handle and CRC-16 as for any access command) and listens for the reply.
///
/// The two lengths say what reply to expect, counting the RN16 handle and the CRC-16 the
/// tag sends after its data: `responseBitsWithHeader` (vendor
/// `responseBitLengthWithHeaderBit`) for a delayed-style reply that starts with a header bit
/// (0 success, 1 error followed by an 8-bit Gen2 error code), the header bit included;
/// `responseBitsNoHeader` (vendor `responseBitLengthNoHeaderBit`) for a reply without one.
/// Exactly one of them is non-zero. A reply of another length fails its CRC
/// (GENERAL_ERROR); no reply within `receiveTimeoutMicroseconds` is TAG_NOT_FOUND.
/// The data bits (without header, handle and CRC) come back packed MSB first in 16-bit
/// words, the last one padded with zeros.
public struct CustomTagCommand: Sendable, Hashable {
    /// The command's bits, MSB first, in `(commandBits + 7) / 8` bytes.
    public var command: [UInt8]
    /// How many bits of `command` to send (1...``maxCommandBits``).
    public var commandBits: UInt16
    /// Reply length without a header bit (0: the reply has one).
    public var responseBitsNoHeader: UInt16
    /// Reply length with its header bit (0: the reply has none).
    public var responseBitsWithHeader: UInt16
    /// How long the reader listens for the reply after sending the command, µs.
    public var receiveTimeoutMicroseconds: UInt32

    /// The longest command the reader sends.
    public static let maxCommandBits: UInt16 = 256
    /// The longest reply the reader listens for (data, header, handle and CRC).
    public static let maxResponseBits: UInt16 = 1024
    /// The bits that follow a reply's data: RN16 handle and CRC-16.
    public static let trailerBits = 32

    public init(command: [UInt8], commandBits: UInt16, responseBitsNoHeader: UInt16, responseBitsWithHeader: UInt16,
                receiveTimeoutMicroseconds: UInt32) {
        self.command = command
        self.commandBits = commandBits
        self.responseBitsNoHeader = responseBitsNoHeader
        self.responseBitsWithHeader = responseBitsWithHeader
        self.receiveTimeoutMicroseconds = receiveTimeoutMicroseconds
    }

    /// The data bits the host gets back from a successful reply.
    public var dataBits: Int {
        responseBitsWithHeader > 0 ? max(0, Int(responseBitsWithHeader) - 1 - Self.trailerBits)
            : max(0, Int(responseBitsNoHeader) - Self.trailerBits)
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

/// Power settings of a running inventory (vendor `changePower`: initial, min, max), 0.1 dBm.
/// A range (min < max) makes the reader vary its power, starting at initial.
public struct PowerRange: Sendable, Hashable {
    public var initialTenthsDBm: Int16
    public var minTenthsDBm: Int16
    public var maxTenthsDBm: Int16

    public init(initialTenthsDBm: Int16, minTenthsDBm: Int16, maxTenthsDBm: Int16) {
        self.initialTenthsDBm = initialTenthsDBm
        self.minTenthsDBm = minTenthsDBm
        self.maxTenthsDBm = maxTenthsDBm
    }

    /// One fixed power.
    public init(fixed tenthsDBm: Int16) {
        self.init(initialTenthsDBm: tenthsDBm, minTenthsDBm: tenthsDBm, maxTenthsDBm: tenthsDBm)
    }

    /// min ≤ initial ≤ max, all within 0...`maxTenthsDBm` of the reader.
    public func isValid(readerMaxTenthsDBm: Int16) -> Bool {
        minTenthsDBm >= 0 && minTenthsDBm <= initialTenthsDBm && initialTenthsDBm <= maxTenthsDBm
            && maxTenthsDBm <= readerMaxTenthsDBm
    }
}
