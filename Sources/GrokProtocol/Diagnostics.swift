/// What a Grokker counts about itself (the reader side of the vendor's diagnostic
/// counters): its own link statistics and its inventory work since the last reset.
public struct ReaderCounters: Sendable, Hashable {
    public var packetsSent: UInt32 = 0
    public var packetsReceived: UInt32 = 0
    public var retries: UInt32 = 0
    public var crcMismatches: UInt32 = 0
    /// Query rounds run (vendor `rawInventoryRounds`).
    public var inventoryRounds: UInt32 = 0
    /// Tags read, every read (vendor `rawTagFinds`).
    public var tagFinds: UInt32 = 0
    /// Reads sent to the host after merging per tag while the link was busy.
    public var reportsSent: UInt32 = 0
    /// Distinct EPCs read since the last reset (vendor `uniqueTags`).
    public var uniqueTags: UInt32 = 0
    /// Reads that never reached the host on their own (vendor `forgottenTags`): those
    /// replaced by a newer read of the same tag while they waited for the link, plus the
    /// two kinds below.
    public var forgotten: UInt32 = 0
    /// Reads sent in an event the host never acknowledged: the link dropped first (vendor
    /// `forgottenNotAcknowledged`).
    public var forgottenNotAcknowledged: UInt32 = 0
    /// Reads still waiting for the link when the inventory stopped or the link dropped,
    /// never sent (vendor `forgottenNotSent`).
    public var forgottenNotSent: UInt32 = 0

    public init() {}

    func write(to w: inout ByteWriter) {
        for value in [packetsSent, packetsReceived, retries, crcMismatches, inventoryRounds, tagFinds, reportsSent,
                      uniqueTags, forgotten, forgottenNotAcknowledged, forgottenNotSent] {
            w.u32(value)
        }
    }

    static func read(from r: inout ByteReader) throws(ProtocolError) -> ReaderCounters {
        var c = ReaderCounters()
        c.packetsSent = try r.u32("diagnostics.packetsSent")
        c.packetsReceived = try r.u32("diagnostics.packetsReceived")
        c.retries = try r.u32("diagnostics.retries")
        c.crcMismatches = try r.u32("diagnostics.crcMismatches")
        c.inventoryRounds = try r.u32("diagnostics.inventoryRounds")
        c.tagFinds = try r.u32("diagnostics.tagFinds")
        c.reportsSent = try r.u32("diagnostics.reportsSent")
        c.uniqueTags = try r.u32("diagnostics.uniqueTags")
        c.forgotten = try r.u32("diagnostics.forgotten")
        c.forgottenNotAcknowledged = try r.u32("diagnostics.forgottenNotAcknowledged")
        c.forgottenNotSent = try r.u32("diagnostics.forgottenNotSent")
        return c
    }
}
