import GrokAudio
import GrokLink
import GrokProtocol

/// The vendor's diagnostic counters (`UgiDiagnostics`): the host's view of the packet
/// protocol, and the reader's own counts (GetDiagnostics 0x06) when it sends them.
public struct UgiDiagnostics: Sendable, Equatable {
    /// The host's packet-layer counters (the vendor's `PacketProtocolGetConnectionStatistics`).
    public var link: VendorPacketStatistics
    /// The reader's counters; `nil` when it answered GetDiagnostics with a bare ACK (the
    /// vendor's peer did in every capture, so the layout is ours from the library's code).
    public var reader: VendorDiagnostics?
    /// Ours: link resets the session tried after a request failed on the link (the vendor
    /// resets without counting them), and how many did not bring the Grokker back.
    public var linkRecoveries = 0
    public var linkRecoveriesFailed = 0

    /// Vendor `rawInventoryRounds` (0 without the reader's counters).
    public var rawInventoryRounds: Int { Int(reader?.rawInventoryRounds ?? 0) }
    /// Vendor `rawTagFinds`.
    public var rawTagFinds: Int { Int(reader?.rawTagFinds ?? 0) }
    /// Vendor `uniqueTags`.
    public var uniqueTags: Int { Int(reader?.uniqueTags ?? 0) }
    /// Vendor `forgottenTags`.
    public var forgottenTags: Int { Int(reader?.forgottenTags ?? 0) }
    /// Vendor `forgottenNotAcknowledged`.
    public var forgottenNotAcknowledged: Int { Int(reader?.forgottenNotAcknowledgedTags ?? 0) }
    /// Vendor `forgottenNotSent`.
    public var forgottenNotSent: Int { Int(reader?.forgottenNotSentTags ?? 0) }
    /// The host's own packets sent and received (``link``). The vendor's
    /// `packetProtocolPacketsSent`/`...Received` are the *reader's*: ``reader``.
    public var packetsSent: Int { link.packetsSent }
    public var packetsReceived: Int { link.packetsReceived }
}

extension ReaderSession {
    /// The diagnostic counters (vendor `getDiagnostics:reset:`): the host's packet counters
    /// and the reader's, asked with GetDiagnostics (`reset` zeroes the reader's afterwards).
    public func diagnostics(reset: Bool = false) throws(ReaderError) -> UgiDiagnostics {
        let reader = try readerDiagnostics(reset: reset)
        return UgiDiagnostics(link: linkStatistics, reader: reader, linkRecoveries: linkRecoveries,
                              linkRecoveriesFailed: linkRecoveriesFailed)
    }
}
