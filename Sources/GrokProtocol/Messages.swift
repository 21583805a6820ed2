/// A request as it travels: a ``Command`` with the id its response will carry.
///
/// ```swift
/// let bytes = RequestMessage(id: 7, command: .identify).encode()
/// // ... GrokLink delivers the response ...
/// let reply = try ResponseMessage.decode(received)
/// ```
public struct RequestMessage: Sendable, Hashable {
    /// Chosen by the host, echoed by the response. 0 is reserved for unreadable messages;
    /// hosts count 1...65535 and wrap.
    public var id: UInt16
    /// What to do.
    public var command: Command
    /// The version written in the header (``ProtocolVersion/current`` unless testing).
    public var version: ProtocolVersion

    /// Creates a request.
    public init(id: UInt16, command: Command, version: ProtocolVersion = .current) {
        self.id = id
        self.command = command
        self.version = version
    }

    /// The complete message: header and payload.
    public func encode() -> [UInt8] {
        encodeMessage(version: version, kind: .request, opcode: command.opcode, id: id) { command.writePayload(to: &$0) }
    }

    /// Decodes a complete request message. Pure and bounded; throws on anything that is
    /// not a request this build understands (never traps).
    public static func decode(_ message: some Collection<UInt8>) throws(ProtocolError) -> RequestMessage {
        let (header, newerMinor, bytes) = try decodeHeader(message, expecting: .request)
        var reader = ByteReader(bytes, from: MessageHeader.size)
        let command = try Command.read(opcode: header.opcode, from: &reader)
        try finishMessage(reader, newerMinor: newerMinor)
        return RequestMessage(id: header.requestID, command: command, version: header.version)
    }
}

/// A response as it travels: a ``Response`` with the id of the request it answers.
public struct ResponseMessage: Sendable, Hashable {
    /// The id of the request this answers (0: the request's header was unreadable).
    public var id: UInt16
    /// The result.
    public var response: Response
    /// The version written in the header (``ProtocolVersion/current`` unless testing).
    public var version: ProtocolVersion

    /// Creates a response.
    public init(id: UInt16, response: Response, version: ProtocolVersion = .current) {
        self.id = id
        self.response = response
        self.version = version
    }

    /// The complete message: header and payload.
    public func encode() -> [UInt8] {
        encodeMessage(version: version, kind: .response, opcode: response.opcode, id: id) { response.writePayload(to: &$0) }
    }

    /// Decodes a complete response message. Pure and bounded; never traps.
    public static func decode(_ message: some Collection<UInt8>) throws(ProtocolError) -> ResponseMessage {
        let (header, newerMinor, bytes) = try decodeHeader(message, expecting: .response)
        var reader = ByteReader(bytes, from: MessageHeader.size)
        let response = try Response.read(opcode: header.opcode, from: &reader)
        try finishMessage(reader, newerMinor: newerMinor)
        return ResponseMessage(id: header.requestID, response: response, version: header.version)
    }
}

func encodeMessage(
    version: ProtocolVersion, kind: MessageKind, opcode: Opcode, id: UInt16,
    payload: (inout ByteWriter) -> Void
) -> [UInt8] {
    var writer = ByteWriter()
    MessageHeader(version: version, kind: kind, opcode: opcode, requestID: id, payloadLength: 0).write(to: &writer)
    payload(&writer)
    let length = writer.bytes.count - MessageHeader.size
    precondition(writer.bytes.count <= WireLimits.maxMessageBytes, "message exceeds WireLimits.maxMessageBytes")
    writer.patchU16(UInt16(length), at: 8)
    return writer.bytes
}

func decodeHeader(
    _ message: some Collection<UInt8>, expecting kind: MessageKind
) throws(ProtocolError) -> (MessageHeader, Bool, [UInt8]) {
    let count = message.count
    guard count <= WireLimits.maxMessageBytes else {
        throw .messageTooLong(length: count, limit: WireLimits.maxMessageBytes)
    }
    let bytes = Array(message)
    let header = try MessageHeader.decode(from: bytes)
    let newerMinor = try header.checkVersion()
    guard header.kind == kind else { throw .unexpectedKind(expected: kind, received: header.kind) }
    return (header, newerMinor, bytes)
}

func finishMessage(_ reader: ByteReader, newerMinor: Bool) throws(ProtocolError) {
    if reader.remaining > 0 && !newerMinor {
        throw .trailingBytes(count: reader.remaining)
    }
}

/// The event a Grokker sends unasked when its link comes up (it rides in the handshake
/// answer): its reader information, so a host knows what it talks to without a round trip.
///
/// On the wire: kind ``MessageKind/event``, opcode ``Opcode/identify`` (the event carries
/// identify's result), request id 0, and the ``ReaderInfo`` layout as the whole payload
/// (events have no status byte).
public struct Announcement: Sendable, Hashable {
    /// What the Grokker says about itself.
    public var info: ReaderInfo
    /// The version written in the header (``ProtocolVersion/current`` unless testing).
    public var version: ProtocolVersion

    /// Creates an announcement.
    public init(info: ReaderInfo, version: ProtocolVersion = .current) {
        self.info = info
        self.version = version
    }

    /// The complete message: header and payload.
    public func encode() -> [UInt8] {
        encodeMessage(version: version, kind: .event, opcode: .identify, id: 0) { info.write(to: &$0) }
    }

    /// Decodes a complete announcement. Pure and bounded; never traps. Any other message
    /// (another kind or event) is an error: ``ProtocolError/unexpectedKind(expected:received:)``
    /// or ``ProtocolError/unknownOpcode(_:)``.
    public static func decode(_ message: some Collection<UInt8>) throws(ProtocolError) -> Announcement {
        let (header, newerMinor, bytes) = try decodeHeader(message, expecting: .event)
        guard header.opcode == .identify else { throw .unknownOpcode(header.opcode.rawValue) }
        var reader = ByteReader(bytes, from: MessageHeader.size)
        let info = try ReaderInfo.read(from: &reader)
        try finishMessage(reader, newerMinor: newerMinor)
        return Announcement(info: info, version: header.version)
    }
}
