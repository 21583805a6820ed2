/// What a link frame is for. Three bits on the wire.
public enum FrameType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A fragment of an application message; `seq` numbers it, flag ``Frame/endOfMessage``
    /// marks the last fragment.
    case data = 0
    /// Cumulative acknowledgement in `ack`; the payload may carry a 32-bit selective-ack map.
    case ack = 1
    /// "Frame `seq` arrived damaged (or is missing): send it again."
    case nack = 2
    /// Host → device handshake request at the base rate.
    case hello = 3
    /// Device → host handshake answer, optionally carrying the device's first message.
    case helloAck = 4
    /// Mode change request (host) or its acknowledgement (device, flag ``Frame/modeAckFlag``).
    case mode = 5
    /// A sounding frame sent in a mode on trial.
    case probe = 6
    /// The device's verdict on the probes it received in a mode on trial.
    case probeReport = 7

    public var description: String {
        switch self {
        case .data: "DATA"
        case .ack: "ACK"
        case .nack: "NACK"
        case .hello: "HELLO"
        case .helloAck: "HELLO-ACK"
        case .mode: "MODE"
        case .probe: "PROBE"
        case .probeReport: "PROBE-REPORT"
        }
    }
}

/// One frame of the packet protocol, as it travels between the sync word and the end of
/// its CRC-32C. Layout (docs/protocol.md, "Link layer"):
///
/// ```
/// byte 0   type (3 bits) | flags (3 bits) | length bits 9-8
/// byte 1   length bits 7-0 (payload bytes, 0...1023)
/// byte 2   seq
/// byte 3   ack (next sequence number expected from the peer)
/// byte 4   CRC-8/AUTOSAR of bytes 0-3
/// ...      payload
/// 4 bytes  CRC-32C of everything before it, little-endian
/// ```
public struct Frame: Sendable, Equatable, CustomStringConvertible {
    public static let headerSize = 5
    public static let trailerSize = 4
    public static let maxPayload = 1023
    /// DATA: this fragment ends a message.
    public static let endOfMessage: UInt8 = 0x1
    /// MODE: this is the acknowledgement.
    public static let modeAckFlag: UInt8 = 0x1

    public var type: FrameType
    public var flags: UInt8
    public var seq: UInt8
    public var ack: UInt8
    public var payload: [UInt8]

    public init(type: FrameType, flags: UInt8 = 0, seq: UInt8 = 0, ack: UInt8 = 0, payload: [UInt8] = []) {
        precondition(payload.count <= Frame.maxPayload, "frame payload over \(Frame.maxPayload) bytes")
        precondition(flags < 8, "frame flags are 3 bits")
        self.type = type
        self.flags = flags
        self.seq = seq
        self.ack = ack
        self.payload = payload
    }

    /// Bytes on the wire after the sync word.
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Frame.headerSize + payload.count + Frame.trailerSize)
        let length = payload.count
        out.append(type.rawValue << 5 | flags << 2 | UInt8(length >> 8))
        out.append(UInt8(length & 0xFF))
        out.append(seq)
        out.append(ack)
        out.append(LinkCRC.crc8(out))
        out.append(contentsOf: payload)
        let crc = LinkCRC.crc32c(out)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        return out
    }

    public var description: String {
        "\(type) seq=\(seq) ack=\(ack) flags=\(flags) len=\(payload.count)"
    }
}

/// Turns the bytes that follow a sync word back into a ``Frame``. Pure and incremental:
/// feed bytes one at a time; anything but ``Output/needMore`` ends the frame and the
/// decoder is ready for the next one.
public struct FrameDecoder: Sendable {
    public enum Output: Sendable, Equatable {
        /// Keep feeding.
        case needMore
        /// A whole frame whose header and CRC-32C check.
        case frame(Frame)
        /// The header's CRC-8 failed: nothing in it can be trusted.
        case badHeader
        /// The header checked but the CRC-32C did not: the receiver knows which frame to ask for again.
        case badCRC(type: FrameType, seq: UInt8, length: Int)
    }

    private var header: [UInt8] = []
    private var body: [UInt8] = []
    private var expected = 0
    private var type = FrameType.data

    public init() {
        header.reserveCapacity(Frame.headerSize)
    }

    /// Forgets any partial frame.
    public mutating func reset() {
        header.removeAll(keepingCapacity: true)
        body.removeAll(keepingCapacity: true)
        expected = 0
    }

    /// Bytes taken so far for the current frame.
    public var bytesTaken: Int { header.count + body.count }

    public mutating func feed(_ byte: UInt8) -> Output {
        if header.count < Frame.headerSize {
            header.append(byte)
            guard header.count == Frame.headerSize else { return .needMore }
            guard LinkCRC.crc8(header[0..<4]) == header[4] else {
                reset()
                return .badHeader
            }
            type = FrameType(rawValue: header[0] >> 5)!
            expected = Int(header[0] & 0x3) << 8 | Int(header[1])
            body.reserveCapacity(expected + Frame.trailerSize)
            return .needMore
        }
        body.append(byte)
        guard body.count == expected + Frame.trailerSize else { return .needMore }
        defer { reset() }
        var crc = LinkCRC.crc32c(header)
        crc = LinkCRC.crc32c(body[0..<expected], seed: crc)
        var got: UInt32 = 0
        for i in 0..<4 { got |= UInt32(body[expected + i]) << UInt32(8 * i) }
        guard crc == got else { return .badCRC(type: type, seq: header[2], length: expected) }
        return .frame(Frame(type: type, flags: (header[0] >> 2) & 0x7, seq: header[2], ack: header[3],
                            payload: Array(body[0..<expected])))
    }
}
