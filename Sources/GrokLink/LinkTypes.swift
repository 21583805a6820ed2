/// Which end of the cable an engine is.
public enum LinkRole: String, Sendable, Codable {
    /// The workstation: starts the handshake, chooses the mode.
    case host
    /// The Grokker: answers.
    case device
}

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

/// Why a connected link went back to handshaking.
public enum LinkLossReason: String, Sendable, Codable {
    /// No valid frame for the link timeout: unplugged, or the signal is gone.
    case lossOfSignal = "loss_of_signal"
    /// A frame went unacknowledged after the maximum number of retries.
    case repeatedErrors = "repeated_errors"
    /// The peer started a new session.
    case peerRestarted = "peer_restarted"
}

/// Something that happened on the link, in order. Drained with ``LinkEngine/drainEvents()``.
public enum LinkEvent: Sendable, Equatable {
    case stateChanged(LinkState)
    /// The modem now runs in this mode (both directions).
    case modeChanged(LinkMode)
    /// A faster mode was tried and did not measure well enough.
    case modeRejected(LinkMode)
    /// The link dropped; `failedMessages` queued messages were discarded.
    case connectionLost(LinkLossReason, failedMessages: Int)
}

/// The vendor's diagnostic counters for the byte and packet protocols, plus a few of ours.
public struct LinkStatistics: Sendable, Codable, Equatable {
    /// Byte protocol: the peer's clock relative to ours, as tracked (1 = no skew).
    public var skewFactor: Double = 1
    /// Frame bytes (after the sync word) put on the wire / taken off it.
    public var bytesSent = 0
    public var bytesReceived = 0
    /// Frames sent and frames received whole.
    public var packetsSent = 0
    public var packetsReceived = 0
    /// Messages discarded because the link dropped before they were acknowledged.
    public var sendFailures = 0
    /// Frames sent again (after a NACK or a timeout).
    public var retries = 0
    /// Retransmission timeouts (counted on the sample clock).
    public var timeouts = 0
    /// Frames that checked but made no sense where they arrived (wrong state, out of window).
    public var invalidPackets = 0
    /// Frame headers whose CRC-8 failed (the vendor's "internal CRC mismatches").
    public var internalCrcMismatches = 0
    /// Frames whose CRC-32C failed.
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
    /// A message over ``LinkConfiguration/maxMessageSize``.
    case messageTooLarge(size: Int, limit: Int)
    /// More than ``LinkConfiguration/maxQueuedBytes`` waiting to go out.
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

/// Tunables of the link. Times are in seconds here and turned into samples of the engine's
/// own clock; nothing on the link ever reads the wall clock.
public struct LinkConfiguration: Sendable, Equatable {
    /// Modes this side can run, by samples per bit at 44.1 kHz.
    public var supportedModes: [LinkMode] = LinkMode.ladder
    /// Largest frame payload this side sends or accepts.
    public var maxPayload = 512
    /// Frames in flight before an acknowledgement (sliding window).
    public var window = 8
    /// Host: try faster modes after the handshake and keep the fastest that measures well.
    public var autoUpgrade = true
    /// One-way allowance for audio buffers and processing (sound-card periods, the cable), seconds.
    public var latencyAllowance = 0.05
    /// Host: send a keep-alive when the line has been quiet this long, seconds.
    public var keepaliveInterval = 0.5
    /// Host: back to handshaking after this long without a valid frame, seconds.
    public var hostLinkTimeout = 2.0
    /// Device: forget the session after this long without a valid frame, seconds.
    public var deviceLinkTimeout = 3.0
    /// Retransmissions of one frame before the link is declared broken.
    public var maxRetries = 12
    /// Ones sent before the sync word when the line was quiet / between back-to-back frames.
    public var preambleBits = 16
    public var shortPreambleBits = 8
    /// Peak amplitude of the transmitted waveform (full scale = 1).
    public var amplitude: Float = 0.5
    /// Largest application message.
    public var maxMessageSize = 65_536
    /// Most bytes waiting to be sent.
    public var maxQueuedBytes = 1 << 20
    /// Minimum decision margin (0...1) for a mode on trial to be kept, in both directions.
    public var modeAcceptQuality = 0.7
    /// Benchmarks only: the fraction of DATA frames this side damages on purpose before
    /// sending (a burst of inverted half-bits in the payload), to measure recovery.
    public var frameDamageProbability = 0.0
    /// Seed for session nonces and the damage hook, so runs repeat exactly.
    public var seed: UInt64 = 0x6772_6F6B

    public init() {}
}
