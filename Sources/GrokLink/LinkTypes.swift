/// Connection states, numbered as in the vendor API (`UGI_CONNECTION_STATE_*`).
public enum LinkState: Int, Sendable, Codable, CustomStringConvertible {
    /// NOT_CONNECTED: closed, or (device) nobody has said hello.
    case notConnected = 0
    /// CONNECTING: handshaking.
    case connecting = 1
    /// INCOMPATIBLE_READER: the other side speaks a link protocol we don't.
    case incompatible = 2
    /// CONNECTED: messages flow.
    case connected = 3

    public var description: String {
        switch self {
        case .notConnected: "not-connected"
        case .connecting: "connecting"
        case .incompatible: "incompatible"
        case .connected: "connected"
        }
    }
}

/// The vendor's diagnostic counters for the byte and packet protocols, plus a few of ours.
public struct LinkStatistics: Sendable, Codable, Equatable {
    /// Byte protocol: the peer's clock relative to ours, as tracked (1 = no skew).
    public var skewFactor: Double = 1
    /// Bytes put on the wire / taken off it.
    public var bytesSent = 0
    public var bytesReceived = 0
    /// Packets sent and packets received whole.
    public var packetsSent = 0
    public var packetsReceived = 0
    /// Requests that failed after their last try.
    public var sendFailures = 0
    /// Packets sent again (after a NACK or a timeout).
    public var retries = 0
    /// Retransmission timeouts (counted on the sample clock).
    public var timeouts = 0
    /// Packets that checked but made no sense where they arrived.
    public var invalidPackets = 0
    /// The vendor's "internal CRC mismatches" (response code bytes whose nibbles disagree).
    public var internalCrcMismatches = 0
    /// Packets whose crc8 failed.
    public var crcMismatches = 0
    /// Whole messages delivered to the application, and their payload bytes.
    public var messagesReceived = 0
    public var payloadBytesReceived = 0
    public var messagesSent = 0
    /// Handshakes completed.
    public var handshakes = 0

    public init() {}
}

/// What the link refuses to do. `code` is stable for `--json` and the message catalog.
public enum LinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Messages can only be sent on a connected link.
    case notConnected
    /// A message over the link's size limit.
    case messageTooLarge(size: Int, limit: Int)
    /// More bytes waiting to go out than the link queues.
    case queueFull(limit: Int)

    public var code: String {
        switch self {
        case .notConnected: "link_not_connected"
        case .messageTooLarge: "link_message_too_large"
        case .queueFull: "link_queue_full"
        }
    }

    public var arguments: [String] {
        switch self {
        case .notConnected: []
        case .messageTooLarge(let size, let limit): [String(size), String(limit)]
        case .queueFull(let limit): [String(limit)]
        }
    }

    public var description: String {
        switch self {
        case .notConnected:
            "the Grokker is not connected; wait for the connection or check the cable."
        case .messageTooLarge(let size, let limit):
            "a message of \(size) bytes is over the link's limit of \(limit); split it."
        case .queueFull(let limit):
            "more than \(limit) bytes are waiting to be sent; wait for the link to drain."
        }
    }
}
