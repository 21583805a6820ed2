/// The vendor's packet layer: the two packet forms on the wire and their checksum.
///
/// Facts from the vendor's host library (U Grok It Android SDK 1.7.16, x86_64
/// `libugrokitapi.so`); offsets and evidence are in `docs/vendor-protocol.md`, section 4:
///
/// - A **request** is `[0x80 | retry << 6 | command][length 1...250][payload][crc8]`, or, when
///   the payload is empty, the one-byte form `[retry << 6 | command][crc8]` (bit 7 clear). The
///   vendor sender picks the form by the payload length alone.
/// - A **response** starts with `((~code) & 0xF) << 4 | code`. Code bit 3 set:
///   `[length 1...250][data][crc8]` follow and the response's id is `code & 7`; clear: the byte
///   is the whole response (no crc8), its id is `code`. `f0` is ACK_0 (success), `87` ACK_7
///   (NACK).
/// - **crc8** is the low byte of CRC-16/MCRF4XX (reflected polynomial 0x8408, init 0xFFFF, no
///   final xor) over every byte of the packet before it.
public enum VendorPacketCRC {
    static let table: [UInt16] = (0..<256).map { n in
        var c = UInt16(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x8408 : c >> 1 }
        return c
    }

    /// CRC-16/MCRF4XX of `bytes`, continuing from `seed` (0xFFFF starts a new one).
    /// Check value over "123456789": 0x6F91.
    public static func crc16(_ bytes: some Sequence<UInt8>, seed: UInt16 = 0xFFFF) -> UInt16 {
        var c = seed
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = (c >> 8) ^ t[Int((c ^ UInt16(b)) & 0xFF)] }
        }
        return c
    }

    /// The packet checksum: the low byte of ``crc16(_:seed:)``.
    public static func crc8(_ bytes: some Sequence<UInt8>) -> UInt8 {
        UInt8(truncatingIfNeeded: crc16(bytes))
    }
}

/// Limits of the vendor's packet layer.
public enum VendorPacketLimits {
    /// The largest payload of a request or response: the receiver refuses a length byte over 250.
    public static let maxPayload = 250
    /// Command numbers are 6 bits.
    public static let maxCommand: UInt8 = 0x3F
    /// Response ids are 3 bits (the long form keeps bit 3 of the code for itself).
    public static let maxResponseID: UInt8 = 7
}

/// A request: host to reader, or reader to host in slave mode.
public struct RequestPacket: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The command number, 0...63.
    public var command: UInt8
    /// The payload, 0...250 bytes; empty selects the one-byte form on the wire.
    public var payload: [UInt8]
    /// Bit 6 of the first byte: set on every resend of the same request.
    public var isRetry: Bool

    public init(command: UInt8, payload: [UInt8] = [], isRetry: Bool = false) {
        self.command = command
        self.payload = payload
        self.isRetry = isRetry
    }

    /// The bytes on the wire, crc8 included.
    public func encoded() throws(VendorPacketError) -> [UInt8] {
        guard command <= VendorPacketLimits.maxCommand else { throw .invalidCommand(Int(command)) }
        guard payload.count <= VendorPacketLimits.maxPayload else {
            throw .payloadTooLong(size: payload.count, limit: VendorPacketLimits.maxPayload)
        }
        let retry: UInt8 = isRetry ? 0x40 : 0
        var bytes: [UInt8]
        if payload.isEmpty {
            bytes = [retry | command]
        } else {
            bytes = [0x80 | retry | command, UInt8(payload.count)]
            bytes.reserveCapacity(payload.count + 3)
            bytes += payload
        }
        bytes.append(VendorPacketCRC.crc8(bytes))
        return bytes
    }

    public var description: String {
        "request \(hex(command))\(isRetry ? " (retry)" : "") [\(payload.map(hex).joined(separator: " "))]"
    }
}

/// A response: the answer to a request, from the reader, or from the host in slave mode.
public struct ResponsePacket: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The response id, 0...7: 0 is success (ACK_0), 7 a refusal (ACK_7, the vendor's NACK),
    /// 6 from a reader asks the host to stay quiet for a while (see ``PacketEndpoint``).
    public var id: UInt8
    /// The data, 0...250 bytes; empty selects the one-byte form on the wire.
    public var data: [UInt8]

    public init(id: UInt8, data: [UInt8] = []) {
        self.id = id
        self.data = data
    }

    /// ACK_0: success without data (`f0` on the wire).
    public static let ack = ResponsePacket(id: 0)
    /// ACK_7: the vendor's NACK (`87` on the wire).
    public static let nack = ResponsePacket(id: 7)

    /// Whether this is a refusal (id 7).
    public var isNack: Bool { id == 7 }

    /// The first byte of a response with this code: the code in the low nibble and its
    /// complement in the high one.
    public static func codeByte(_ code: UInt8) -> UInt8 {
        ((~code & 0x0F) << 4) | (code & 0x0F)
    }

    /// The bytes on the wire: one byte without data; code byte, length, data and crc8 with.
    public func encoded() throws(VendorPacketError) -> [UInt8] {
        guard id <= VendorPacketLimits.maxResponseID else { throw .invalidResponseID(Int(id)) }
        guard data.count <= VendorPacketLimits.maxPayload else {
            throw .payloadTooLong(size: data.count, limit: VendorPacketLimits.maxPayload)
        }
        if data.isEmpty { return [Self.codeByte(id)] }
        var bytes = [Self.codeByte(id | 0x08), UInt8(data.count)]
        bytes.reserveCapacity(data.count + 3)
        bytes += data
        bytes.append(VendorPacketCRC.crc8(bytes))
        return bytes
    }

    public var description: String {
        "response \(id) [\(data.map(hex).joined(separator: " "))]"
    }
}

private func hex(_ b: UInt8) -> String {
    let s = String(b, radix: 16)
    return b < 16 ? "0" + s : s
}

/// What the packet layer refuses or gives up on. `code` is stable for `--json` and the
/// message catalog; `arguments` fill the catalog's placeholders.
public enum VendorPacketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Command numbers are 6 bits (0...63).
    case invalidCommand(Int)
    /// Response ids are 3 bits (0...7).
    case invalidResponseID(Int)
    /// A payload or response data over 250 bytes.
    case payloadTooLong(size: Int, limit: Int)
    /// Requests can only be sent while the modem is connected.
    case notConnected
    /// One request at a time: one is still waiting for its answer, or the endpoint is in a
    /// state where it answers rather than asks (the vendor returns 0x65 then).
    case busy
    /// ``PacketEndpoint/answer(_:)`` was called with no request waiting for an answer.
    case noRequestWaiting
    /// The request went unanswered (or was refused with garbled answers) on every try.
    case retriesExhausted(command: Int, tries: Int)
    /// In slave mode the other side stopped sending: no packet within the allowed time, in
    /// samples. The vendor host resets the connection then.
    case slaveModeTimedOut(afterSamples: Int64)
    /// The connection dropped while a request was outstanding or slave mode was on.
    case connectionLost

    public var code: String {
        switch self {
        case .invalidCommand: "packet_invalid_command"
        case .invalidResponseID: "packet_invalid_response_id"
        case .payloadTooLong: "packet_payload_too_long"
        case .notConnected: "packet_not_connected"
        case .busy: "packet_busy"
        case .noRequestWaiting: "packet_no_request_waiting"
        case .retriesExhausted: "packet_retries_exhausted"
        case .slaveModeTimedOut: "packet_slave_mode_timed_out"
        case .connectionLost: "packet_connection_lost"
        }
    }

    public var arguments: [String] {
        switch self {
        case .invalidCommand(let c): [String(c)]
        case .invalidResponseID(let id): [String(id)]
        case .payloadTooLong(let size, let limit): [String(size), String(limit)]
        case .notConnected, .busy, .noRequestWaiting, .connectionLost: []
        case .retriesExhausted(let command, let tries): [String(command), String(tries)]
        case .slaveModeTimedOut(let samples): [String(samples)]
        }
    }

    public var description: String {
        switch self {
        case .invalidCommand(let c):
            "command \(c) does not fit the packet's 6 bits (0...63); check the command table."
        case .invalidResponseID(let id):
            "response id \(id) does not fit the packet's 3 bits (0...7); check the answer."
        case .payloadTooLong(let size, let limit):
            "a payload of \(size) bytes is over the packet limit of \(limit); split it."
        case .notConnected:
            "the Grokker is not connected; wait for the handshake or check the cable."
        case .busy:
            "a request is still waiting for its answer (or slave mode is on); send one request at a time."
        case .noRequestWaiting:
            "there is no request waiting for an answer; answer only requests that were handed up."
        case .retriesExhausted(let command, let tries):
            "command \(command) got no valid answer in \(tries) tries; check the cable and the volume, then reconnect."
        case .slaveModeTimedOut(let samples):
            "the reader sent nothing for \(samples) samples in slave mode; the link is reset, reconnect."
        case .connectionLost:
            "the connection dropped while a request or slave mode was under way; reconnect and try again."
        }
    }
}
