/// The vendor's packet timing, in milliseconds as the vendor states it; ``PacketEndpoint``
/// turns every figure into samples of the transport's clock the way the vendor's timers do
/// (`ms * (rate / 100) / 10`), so nothing reads the wall clock.
///
/// From the vendor host library (offsets in docs/vendor-protocol.md, section 4.3):
/// - a request's answer must start within `sendMs + extraMs + 300 + audioLatencyMs` of the
///   moment its bytes were queued, `sendMs = bytes * 10000 / bitrate` being the time the
///   bytes take on the wire (its own integer formula); the first byte of the answer stops
///   that clock, and from then on only the line going quiet can end the wait;
/// - a failed try (no answer in time, a NACK, a bad answer) is resent, with the retry bit
///   set, `audioLatencyMs + 100` after the failure; bytes arriving in between are ignored;
/// - 8 tries in all, then the request fails (and the vendor host resets the link);
/// - in slave mode the host gives the reader `slaveTimeoutMs + answerMs + 300 +
///   audioLatencyMs` from queueing each answer to start its next packet (2000 ms for an
///   inventory, so about 3.3 s on Android), else it drops the link;
/// - a packet in progress is abandoned after 20 bit times without a new byte.
///
/// With the Android figures (500 ms input + 500 ms output latency, also what the vendor
/// host reports in GetVersion) the first timeout is 1.3 s after sending and the pause
/// before each resend 1.1 s.
public struct VendorPacketTiming: Sendable, Equatable {
    /// Input plus output audio latency of the host, ms (the vendor adds both to every timer).
    public var audioLatencyMs = 1000
    /// Allowance after the request's own air time before its answer must start, ms.
    public var responseAllowanceMs = 300
    /// Pause after a failed try, on top of ``audioLatencyMs``, ms.
    public var retryPauseMs = 100
    /// Tries of one request, the first included.
    public var tries = 8
    /// Bit times of silence that abandon a packet in progress.
    public var interByteIdleBits = 20

    public init(audioLatencyMs: Int = 1000, responseAllowanceMs: Int = 300, retryPauseMs: Int = 100,
                tries: Int = 8, interByteIdleBits: Int = 20) {
        self.audioLatencyMs = audioLatencyMs
        self.responseAllowanceMs = responseAllowanceMs
        self.retryPauseMs = retryPauseMs
        self.tries = tries
        self.interByteIdleBits = interByteIdleBits
    }

    /// The vendor host's figures (Android audio latency).
    public static let vendorHost = VendorPacketTiming()

    /// Samples of a clock at `sampleRate` for `ms` milliseconds, with the vendor's integer
    /// arithmetic (`ms * (rate / 100) / 10`; exact at 44.1 and 48 kHz).
    public static func samples(ms: Int, sampleRate: Int) -> Int64 {
        Int64(ms) * Int64(sampleRate / 100) / 10
    }

    /// The vendor's air time of `bytes` bytes, ms: `bytes * 10000 / bitrate`, integer.
    public static func airTimeMs(bytes: Int, sampleRate: Int, samplesPerBit: Int) -> Int {
        let bitrate = max(1, sampleRate / max(1, samplesPerBit))
        return bytes * 10000 / bitrate
    }

    /// How long the answer to a request of `bytes` bytes may take to start, ms.
    public func responseTimeoutMs(requestBytes: Int, extraMs: Int, sampleRate: Int, samplesPerBit: Int) -> Int {
        Self.airTimeMs(bytes: requestBytes, sampleRate: sampleRate, samplesPerBit: samplesPerBit)
            + extraMs + responseAllowanceMs + audioLatencyMs
    }

    /// The pause between a failed try and its resend, ms.
    public var retryDelayMs: Int { audioLatencyMs + retryPauseMs }

    /// How long the requester in slave mode may stay quiet after an answer of `answerBytes`
    /// bytes was queued (0 at the start of slave mode and after a bad packet), ms.
    public func slaveTimeoutMs(_ slave: VendorSlaveMode, answerBytes: Int, sampleRate: Int, samplesPerBit: Int) -> Int {
        slave.timeoutMs + Self.airTimeMs(bytes: answerBytes, sampleRate: sampleRate, samplesPerBit: samplesPerBit)
            + responseAllowanceMs + audioLatencyMs
    }
}

/// Slave mode as the host asks for it with a request: if that request is answered with id 0,
/// the reader becomes the requester until an answer ends slave mode.
public struct VendorSlaveMode: Sendable, Equatable, Hashable {
    /// The requester's allowance between packets on top of the vendor's fixed terms, ms.
    public var timeoutMs: Int

    public init(timeoutMs: Int) { self.timeoutMs = timeoutMs }

    /// Inventory start (command 0x07): 2000 ms.
    public static let inventory = VendorSlaveMode(timeoutMs: 2000)
    /// The other two slave-mode commands the vendor host sends (0x0d, 0x12): 10000 ms.
    public static let long = VendorSlaveMode(timeoutMs: 10000)
}

/// The answer to a request, as the layer above supplies it.
public struct VendorReply: Sendable, Equatable, Hashable {
    public var response: ResponsePacket
    /// Host in slave mode: this answer ends slave mode (the vendor's handler "exit" flag;
    /// the answer to 00 completed).
    public var endsSlaveMode: Bool
    /// Device: this answer puts the device in slave mode (the ACK_0 to an inventory start).
    public var entersSlaveMode: Bool

    public init(_ response: ResponsePacket, endsSlaveMode: Bool = false, entersSlaveMode: Bool = false) {
        self.response = response
        self.endsSlaveMode = endsSlaveMode
        self.entersSlaveMode = entersSlaveMode
    }

    /// ACK_0.
    public static let ack = VendorReply(.ack)
    /// ACK_7.
    public static let nack = VendorReply(.nack)
}

/// The vendor's connection statistics (`PacketProtocolGetConnectionStatistics`: nine 32-bit
/// counters, in this order), plus three of ours at the end.
public struct VendorPacketStatistics: Sendable, Equatable {
    /// Requests handed to the line (a request and its resends count once).
    public var packetsSent = 0
    /// Tries that got no answer in time.
    public var sendTimeouts = 0
    /// Requests that failed after their last try.
    public var sendFailures = 0
    /// Resends.
    public var sendRetries = 0
    /// Requests received (the vendor host counts the reader's requests in slave mode).
    public var packetsReceived = 0
    /// Packets refused for their form: bad length, cut off by silence, or a request that
    /// arrived when none could be taken (the vendor counts only the last, "invalid request").
    public var invalidPackets = 0
    /// Response code bytes whose nibbles are not complements ("internal CRC mismatches").
    public var internalCRCMismatches = 0
    /// Packets whose crc8 did not match.
    public var crcMismatches = 0
    /// Answers that were ACK_7 (the vendor counts its slave handler's NACKs).
    public var nacksReturned = 0
    /// Ours: valid responses received.
    public var responsesReceived = 0
    /// Ours: retried requests answered again from the last answer, without handing them up.
    public var duplicatesAnswered = 0
    /// Ours: bytes thrown away because nothing was expected (between exchanges, during a
    /// retry pause, or while an answer was pending).
    public var bytesIgnored = 0

    public init() {}
}

/// What happened on a ``PacketEndpoint/poll(_:)``.
public enum PacketEvent: Sendable, Equatable {
    /// The answer to this endpoint's request (the request as last sent, retry bit included).
    /// A NACK reaches here only when the request was sent without retries.
    case completed(RequestPacket, ResponsePacket)
    /// This endpoint's request failed.
    case failed(RequestPacket, VendorPacketError)
    /// A request from the other side; `duplicate` when it was a retry answered again from
    /// the last answer without asking the layer above.
    case requestReceived(RequestPacket, duplicate: Bool)
    /// Slave mode started (host: its request was answered with id 0; device: its answer
    /// said so).
    case enteredSlaveMode
    /// Slave mode ended: normally (nil), or because the requester went quiet or the
    /// connection dropped.
    case exitedSlaveMode(VendorPacketError?)
    /// An incoming packet was thrown away.
    case fault(VendorPacketFault)
}
