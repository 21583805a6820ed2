/// What a message is: a host's request, a Grokker's response to one, or an event the
/// Grokker sends on its own (inventory finds, battery reports; added by later versions).
public enum MessageKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Host to Grokker; answered by exactly one response with the same request id.
    case request = 1
    /// Grokker to host; echoes the opcode and request id of the request it answers.
    case response = 2
    /// Grokker to host, unsolicited; request id 0.
    case event = 3

    public var description: String {
        switch self {
        case .request: "request"
        case .response: "response"
        case .event: "event"
        }
    }
}

/// A command number. A struct rather than an enum so that opcodes this build does not know
/// (from a newer peer) can still be named in errors and answered.
///
/// Opcodes are grouped by area, leaving room for the later issues:
/// `0x00xx` session and device information, `0x01xx` inventory, `0x02xx` tag access,
/// `0x03xx` regions, `0x04xx` firmware and loader, `0x05xx` factory provisioning,
/// `0x06xx` battery and diagnostics, `0x07xx` sounds, `0x08xx` device authentication,
/// `0x09xx` antenna tuning.
/// Events use the same numbering in their own space (kind ``MessageKind/event``).
public struct Opcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// No opcode: used by a Grokker answering a message whose header it could not read.
    public static let unspecified = Opcode(rawValue: 0x0000)
    /// ``Command/identify``: the reader's identity and capabilities.
    public static let identify = Opcode(rawValue: 0x0001)
    /// ``Command/echo(_:)``: the payload comes back unchanged.
    public static let echo = Opcode(rawValue: 0x0002)
    /// ``Command/startInventory(_:)``; as an event, a batch of tag reads.
    public static let startInventory = Opcode(rawValue: 0x0101)
    /// ``Command/stopInventory``; as an event, the inventory ended on the reader's side.
    public static let stopInventory = Opcode(rawValue: 0x0102)
    /// As an event only: the running inventory's progress (``InventoryEvent/status(rounds:)``).
    public static let inventoryStatus = Opcode(rawValue: 0x0103)
    /// ``Command/changePower(_:)``: the running inventory's power.
    public static let changePower = Opcode(rawValue: 0x0104)
    /// ``Command/tagAccess(epc:_:)``: read, write, program, lock or kill one tag.
    public static let tagAccess = Opcode(rawValue: 0x0201)
    /// ``Command/getBattery``: the battery's state.
    public static let getBattery = Opcode(rawValue: 0x0601)
    /// ``Command/getDiagnostics(reset:)``: the reader's counters.
    public static let getDiagnostics = Opcode(rawValue: 0x0602)
    /// ``Command/setRegion(_:)``: store the region the reader operates in.
    public static let setRegion = Opcode(rawValue: 0x0301)
    /// ``Command/setGeigerSound(_:)``.
    public static let setGeigerSound = Opcode(rawValue: 0x0701)
    /// ``Command/setFoundSounds(_:)``.
    public static let setFoundSounds = Opcode(rawValue: 0x0702)
    /// ``Command/playSound(_:)``.
    public static let playSound = Opcode(rawValue: 0x0703)
    /// ``Command/setVolume(_:)``.
    public static let setVolume = Opcode(rawValue: 0x0704)
    /// ``Command/setGrokkerPassword(old:new:)``.
    public static let setGrokkerPassword = Opcode(rawValue: 0x0801)
    /// ``Command/authenticateGrokker(_:)``.
    public static let authenticateGrokker = Opcode(rawValue: 0x0802)
    /// ``Command/grokkerAuthenticationStatus``.
    public static let grokkerAuthenticationStatus = Opcode(rawValue: 0x0803)
    /// ``Command/startAntennaTuning``; as an event, one channel tuned (``AntennaTuningProgress``).
    public static let startAntennaTuning = Opcode(rawValue: 0x0901)
    /// ``Command/stopAntennaTuning``.
    public static let stopAntennaTuning = Opcode(rawValue: 0x0902)
    /// ``Command/getAntennaTuning``.
    public static let getAntennaTuning = Opcode(rawValue: 0x0903)

    /// The opcode's name when known, with its number: `identify (0x0001)`.
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        let number = "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        switch self {
        case .unspecified: return "unspecified (\(number))"
        case .identify: return "identify (\(number))"
        case .echo: return "echo (\(number))"
        case .setRegion: return "setRegion (\(number))"
        case .startInventory: return "startInventory (\(number))"
        case .stopInventory: return "stopInventory (\(number))"
        case .inventoryStatus: return "inventoryStatus (\(number))"
        case .tagAccess: return "tagAccess (\(number))"
        case .getBattery: return "getBattery (\(number))"
        case .getDiagnostics: return "getDiagnostics (\(number))"
        case .firmwareStatus: return "firmwareStatus (\(number))"
        case .enterLoader: return "enterLoader (\(number))"
        case .beginUpload: return "beginUpload (\(number))"
        case .uploadBlock: return "uploadBlock (\(number))"
        case .verifyUpload: return "verifyUpload (\(number))"
        case .activateImage: return "activateImage (\(number))"
        case .confirmImage: return "confirmImage (\(number))"
        case .leaveLoader: return "leaveLoader (\(number))"
        case .provisioningStatus: return "provisioningStatus (\(number))"
        case .provisioningMode: return "provisioningMode (\(number))"
        case .registerSerialNumber: return "registerSerialNumber (\(number))"
        case .setAntennaType: return "setAntennaType (\(number))"
        case .setHardwareRevision: return "setHardwareRevision (\(number))"
        case .setProvisioningStatus: return "setProvisioningStatus (\(number))"
        case .setUserHasSetRegion: return "setUserHasSetRegion (\(number))"
        case .setGeigerSound: return "setGeigerSound (\(number))"
        case .setFoundSounds: return "setFoundSounds (\(number))"
        case .playSound: return "playSound (\(number))"
        case .setVolume: return "setVolume (\(number))"
        case .changePower: return "changePower (\(number))"
        case .setGrokkerPassword: return "setGrokkerPassword (\(number))"
        case .authenticateGrokker: return "authenticateGrokker (\(number))"
        case .grokkerAuthenticationStatus: return "grokkerAuthenticationStatus (\(number))"
        case .startAntennaTuning: return "startAntennaTuning (\(number))"
        case .stopAntennaTuning: return "stopAntennaTuning (\(number))"
        case .getAntennaTuning: return "getAntennaTuning (\(number))"
        default: return number
        }
    }
}

/// The fixed 10-byte header at the start of every command-layer message (little-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | protocol major |
/// | 1 | 1 | protocol minor |
/// | 2 | 1 | kind (1 request, 2 response, 3 event) |
/// | 3 | 1 | flags (reserved: sent as 0, ignored) |
/// | 4 | 2 | opcode |
/// | 6 | 2 | request id |
/// | 8 | 2 | payload length (bytes after the header) |
///
/// This layout is frozen across protocol majors.
public struct MessageHeader: Sendable, Hashable {
    /// The header's size in bytes.
    public static let size = 10

    /// The protocol version the sender speaks.
    public var version: ProtocolVersion
    /// Request, response or event.
    public var kind: MessageKind
    /// Reserved flag bits (0 in 1.0).
    public var flags: UInt8
    /// The command (or event) number.
    public var opcode: Opcode
    /// Matches a response to its request; 0 for events and unreadable requests.
    public var requestID: UInt16
    /// Bytes that follow the header.
    public var payloadLength: UInt16

    /// Creates a header.
    public init(
        version: ProtocolVersion = .current, kind: MessageKind, flags: UInt8 = 0,
        opcode: Opcode, requestID: UInt16, payloadLength: UInt16
    ) {
        self.version = version
        self.kind = kind
        self.flags = flags
        self.opcode = opcode
        self.requestID = requestID
        self.payloadLength = payloadLength
    }

    /// Reads the header of a complete message, whatever its version, and checks that the
    /// declared payload length matches the message's size. Use it to route a message (by
    /// kind and request id) or to answer a request whose body cannot be decoded.
    public static func decode(_ message: some Collection<UInt8>) throws(ProtocolError) -> MessageHeader {
        let count = message.count
        guard count <= WireLimits.maxMessageBytes else {
            throw .messageTooLong(length: count, limit: WireLimits.maxMessageBytes)
        }
        return try decode(from: Array(message))
    }

    static func decode(from bytes: [UInt8]) throws(ProtocolError) -> MessageHeader {
        guard bytes.count <= WireLimits.maxMessageBytes else {
            throw .messageTooLong(length: bytes.count, limit: WireLimits.maxMessageBytes)
        }
        var reader = ByteReader(bytes)
        let major = try reader.u8("header.major")
        let minor = try reader.u8("header.minor")
        let kindByte = try reader.u8("header.kind")
        let flags = try reader.u8("header.flags")
        let opcode = try reader.u16("header.opcode")
        let requestID = try reader.u16("header.requestID")
        let length = try reader.u16("header.payloadLength")
        if Int(length) != reader.remaining {
            if Int(length) > reader.remaining {
                throw .truncated(field: "payload", needed: Int(length), available: reader.remaining)
            }
            throw .lengthMismatch(declared: Int(length), actual: reader.remaining)
        }
        guard let kind = MessageKind(rawValue: kindByte) else { throw .unknownKind(kindByte) }
        return MessageHeader(
            version: ProtocolVersion(major: major, minor: minor), kind: kind, flags: flags,
            opcode: Opcode(rawValue: opcode), requestID: requestID, payloadLength: length)
    }

    func write(to writer: inout ByteWriter) {
        writer.u8(version.major)
        writer.u8(version.minor)
        writer.u8(kind.rawValue)
        writer.u8(flags)
        writer.u16(opcode.rawValue)
        writer.u16(requestID)
        writer.u16(payloadLength)
    }

    /// Checks that this side can decode the body; returns whether the sender's minor is
    /// newer (so unknown trailing fields are to be ignored).
    func checkVersion() throws(ProtocolError) -> Bool {
        guard version.major == ProtocolVersion.current.major else {
            throw .unsupportedVersion(received: version, supported: .current)
        }
        return version.minor > ProtocolVersion.current.minor
    }
}
