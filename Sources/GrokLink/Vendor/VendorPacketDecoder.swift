/// Why an incoming packet was thrown away. Not an error of the caller: the line is noisy,
/// and the requester's retry is the cure.
public enum VendorPacketFault: Sendable, Equatable, Hashable {
    /// A response's first byte whose high nibble is not the complement of its low nibble
    /// (the vendor logs this as an "internal CRC mismatch").
    case badCodeByte(UInt8)
    /// A length byte of 0 or over 250 (the vendor refuses over 250 as "ILLEGAL"; it never
    /// sends 0, which its receiver cannot complete).
    case badLength(UInt8)
    /// The crc8 byte did not match.
    case badCRC(received: UInt8, expected: UInt8)
    /// The line went quiet in the middle of a packet (the vendor's "subsequent read timeout").
    case interByteTimeout
}

/// An incremental decoder of the vendor's packets, one byte at a time, for one direction:
/// ``Expecting/requests`` (a reader in normal mode, the host in slave mode) or
/// ``Expecting/responses`` (the host in normal mode, the reader in slave mode).
///
/// It never traps, whatever the input. After a packet or a fault the next byte is taken as the
/// first byte of a new packet, which is how the vendor receiver resynchronises: it has no
/// preamble to hunt for, so garbage is cleared by the fault it causes (a bad code byte, a bad
/// length, a bad crc8, or the line going quiet; see ``interByteTimeout()``).
public struct VendorPacketDecoder: Sendable, Equatable {
    public enum Expecting: Sendable, Equatable { case requests, responses }

    /// A finished packet or a fault.
    public enum Output: Sendable, Equatable {
        case request(RequestPacket)
        case response(ResponsePacket)
        case fault(VendorPacketFault)
    }

    private enum State: Sendable, Equatable {
        case first
        case length
        case data(remaining: Int)
        case crc
    }

    public let expecting: Expecting
    private var state = State.first
    private var crc: UInt16 = 0xFFFF
    private var header: UInt8 = 0
    private var body: [UInt8] = []

    public init(expecting: Expecting) {
        self.expecting = expecting
    }

    /// Whether the decoder is between packets (waiting for a first byte).
    public var isIdle: Bool { state == .first }

    /// Forgets a packet in progress.
    public mutating func reset() {
        state = .first
        body = []
    }

    /// Takes one byte; returns a packet or a fault when this byte ends one.
    public mutating func feed(_ byte: UInt8) -> Output? {
        switch state {
        case .first:
            crc = VendorPacketCRC.crc16(CollectionOfOne(byte))
            header = byte
            body = []
            switch expecting {
            case .requests:
                state = byte & 0x80 != 0 ? .length : .crc
                return nil
            case .responses:
                let code = byte & 0x0F
                guard (~byte >> 4) & 0x0F == code else { return .fault(.badCodeByte(byte)) }
                if code & 0x08 == 0 { return .response(ResponsePacket(id: code)) }
                state = .length
                return nil
            }
        case .length:
            crc = VendorPacketCRC.crc16(CollectionOfOne(byte), seed: crc)
            guard byte >= 1, Int(byte) <= VendorPacketLimits.maxPayload else {
                state = .first
                return .fault(.badLength(byte))
            }
            body.reserveCapacity(Int(byte))
            state = .data(remaining: Int(byte))
            return nil
        case .data(let remaining):
            crc = VendorPacketCRC.crc16(CollectionOfOne(byte), seed: crc)
            body.append(byte)
            state = remaining > 1 ? .data(remaining: remaining - 1) : .crc
            return nil
        case .crc:
            state = .first
            let expected = UInt8(truncatingIfNeeded: crc)
            guard byte == expected else { return .fault(.badCRC(received: byte, expected: expected)) }
            switch expecting {
            case .requests:
                return .request(RequestPacket(command: header & 0x3F, payload: body, isRetry: header & 0x40 != 0))
            case .responses:
                return .response(ResponsePacket(id: header & 0x07, data: body))
            }
        }
    }

    /// Takes bytes in order; returns every packet and fault they end.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Output] {
        var out: [Output] = []
        for b in bytes { if let o = feed(b) { out.append(o) } }
        return out
    }

    /// Abandons a packet in progress because the line went quiet; returns the fault, or nil
    /// when the decoder was idle.
    public mutating func interByteTimeout() -> Output? {
        guard state != .first else { return nil }
        reset()
        return .fault(.interByteTimeout)
    }
}
