import GrokAudio
import GrokLink
import GrokProtocol

/// The vendor's diagnostic counters (`UgiDiagnostics`): the host's view of the byte and
/// packet protocols, and the reader's own counts of its inventory work.
public struct UgiDiagnostics: Sendable, Equatable {
    /// The host's link counters (skew factor, bytes, packets, failures, retries, timeouts,
    /// invalid packets, CRC mismatches).
    public var link: LinkStatistics
    /// The reader's counters (its side of the link, rounds, raw finds, reports sent).
    public var reader: ReaderCounters

    /// Vendor `byteProtocolSkewFactor`.
    public var byteProtocolSkewFactor: Double { link.skewFactor }
    /// Vendor `rawInventoryRounds`.
    public var rawInventoryRounds: Int { Int(reader.inventoryRounds) }
    /// Vendor `rawTagFinds`.
    public var rawTagFinds: Int { Int(reader.tagFinds) }
    /// Vendor `uniqueTags`: distinct EPCs the reader read since the last reset.
    public var uniqueTags: Int { Int(reader.uniqueTags) }
    /// Vendor `forgottenTags`: reads that never reached the host on their own (replaced by
    /// a newer read of the same tag while waiting for the link, never sent, or never
    /// acknowledged).
    public var forgottenTags: Int { Int(reader.forgotten) }
    /// Vendor `forgottenNotAcknowledged`: reads sent in an event the link dropped before the
    /// host acknowledged it.
    public var forgottenNotAcknowledged: Int { Int(reader.forgottenNotAcknowledged) }
    /// Vendor `forgottenNotSent`: reads still waiting for the link when the inventory
    /// stopped or the link dropped.
    public var forgottenNotSent: Int { Int(reader.forgottenNotSent) }
    /// Vendor `packetProtocolPacketsSent` / `...Received` (the host's).
    public var packetsSent: Int { link.packetsSent }
    public var packetsReceived: Int { link.packetsReceived }
}

extension ReaderSession {
    /// The diagnostic counters, zeroed on both sides afterwards when `reset` (vendor
    /// `getDiagnostics:reset:`).
    public func diagnostics(reset: Bool = false) throws(ReaderError) -> UgiDiagnostics {
        let response = try call(.getDiagnostics(reset: reset))
        guard case .diagnostics(let reader) = response else {
            throw .malformedResponse(port: port.name, detail: "getDiagnostics answered with \(response.opcode)")
        }
        let link = engine.statistics
        if reset { engine.resetStatistics() }
        return UgiDiagnostics(link: link, reader: reader)
    }
}
