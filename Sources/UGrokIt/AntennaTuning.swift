import GrokBasics
import GrokAudio
import GrokLink
import GrokProtocol

/// One channel tuned (vendor `tuneAntenna` callback: frequency, reflected power, number
/// tuned, total).
public struct UgiAntennaTuningProgress: Sendable, Hashable {
    /// The channel, kHz.
    public var frequencyKHz: Int
    /// Power reflected by the antenna on it after tuning, at the reader's maximum power, dBm.
    public var reflectedPowerDBm: Double
    /// Channels tuned so far.
    public var numTuned: Int
    /// Channels in the region's plan.
    public var total: Int
}

/// The antenna's state (vendor `getAntennaTuning`).
public struct UgiAntennaTuning: Sendable, Hashable {
    /// Average reflected power over the region's channels as tuned now, at maximum power, dBm.
    public var staticAverageDBm: Double
    /// Average reflected power the reader measured during the last inventory, dBm (`nil`
    /// before any inventory since the Grokker was switched on).
    public var dynamicAverageDBm: Double?
    /// Each channel of the region (kHz) and its reflected power at maximum power (dBm).
    public var channels: [(frequencyKHz: Int, reflectedPowerDBm: Double)]

    public static func == (a: UgiAntennaTuning, b: UgiAntennaTuning) -> Bool {
        a.staticAverageDBm == b.staticAverageDBm && a.dynamicAverageDBm == b.dynamicAverageDBm
            && a.channels.map(\.frequencyKHz) == b.channels.map(\.frequencyKHz)
            && a.channels.map(\.reflectedPowerDBm) == b.channels.map(\.reflectedPowerDBm)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(staticAverageDBm)
        hasher.combine(channels.map(\.frequencyKHz))
    }
}

extension ReaderSession {
    /// Vendor `tuneAntenna` (TuneAntenna 0x0d): the reader takes the request (ACK_0) and
    /// drives the link (slave mode, 10 s between packets), sending one packet per channel
    /// tuned (01: channel, reflected power) and finally 00 completed. `progress` is called
    /// for each channel and returns `false` to stop early (ACK_1 in the next answer). Not
    /// while an inventory runs. The vendor's packets carry no channel total: `total` is the
    /// hop table's length (``regionChannelsKHz``), and `reflectedPowerDBm` is the reader's
    /// raw 16-bit figure divided by ten (its unit is not known). Returns the channels
    /// tuned and the total.
    @discardableResult
    public func tuneAntenna(_ progress: (UgiAntennaTuningProgress) -> Bool) throws(ReaderError) -> (tuned: Int, total: Int) {
        guard !inventoryRunning else { throw .inventoryRunning(port: port.name) }
        let total = regionChannelsKHz.count
        var events: [(channel: UInt16, power: UInt16)] = []
        var completed = false
        var stopping = false
        slaveHandler = { request in
            switch try? VendorTuneAntennaPacket(opcode: request.command, payload: request.payload) {
            case .oneFrequency(let channel, let power, _)?:
                events.append((channel, power))
                return VendorReply(ResponsePacket(id: stopping ? 1 : 0))
            case .completed?:
                completed = true
                return VendorReply(.ack, endsSlaveMode: true)
            case nil:
                return VendorReply(ResponsePacket(id: 7))
            }
        }
        defer { slaveHandler = nil }
        try call(.tuneAntenna, slaveMode: .long)
        log(.command, "antenna tuning started")
        var tuned = 0
        let limit = Double(VendorSlaveMode.long.timeoutMs + timing.audioLatencyMs) / 1000 + 2
        while !completed {
            let arrived = try pump(forAtMost: limit) { !events.isEmpty || completed || !link.packets.isInSlaveMode }
            for event in events {
                tuned += 1
                let step = UgiAntennaTuningProgress(frequencyKHz: Int(event.channel) * VendorRegionEntry.channelUnitKHz,
                                                    reflectedPowerDBm: Double(event.power) / 10, numTuned: tuned,
                                                    total: max(total, tuned))
                if !stopping, !progress(step) { stopping = true }
            }
            events.removeAll()
            if completed { break }
            guard arrived, link.packets.isInSlaveMode else {
                if !link.isConnected { throw .lostConnection(port: port.name) }
                throw .timeout(port: port.name, command: "TuneAntenna", seconds: limit, recovery: ErrorDetail("no_reset"))
            }
        }
        // Let the answer to "completed" go out before anything else is sent.
        _ = try pump(forAtMost: 1) { !link.packets.isInSlaveMode && !link.modem.isSending }
        log(.command, "antenna tuning ended: \(tuned) channels")
        return (tuned, max(total, tuned))
    }

    /// Vendor `getAntennaTuning:dynamicAverage:` (GetAntennaTuning 0x10): the static and
    /// dynamic averages as the reader sends them (raw 16-bit figures divided by ten). The
    /// vendor answer carries no per-channel values: ``UgiAntennaTuning/channels`` is empty
    /// (``antennaTuningChannels()`` asks for them with GetDetailedAntennaTuning).
    public func antennaTuning() throws(ReaderError) -> UgiAntennaTuning {
        guard case .antennaTuning(let t) = try call(.getAntennaTuning, extraTimeoutMs: 1000) else {
            throw .malformedResponse(port: port.name, detail: ErrorDetail("unexpected_answer", ["GetAntennaTuning"]))
        }
        return UgiAntennaTuning(staticAverageDBm: Double(t.staticAverage) / 10, dynamicAverageDBm: Double(t.dynamicAverage) / 10,
                                channels: [])
    }

    /// Per-channel tuning (vendor GetDetailedAntennaTuning 0x0e, up to `maxChannels`): each
    /// channel's frequency (region channel x 50 kHz) and the reader's 16-bit value / 10.
    /// The vendor's own peer never answered it (code only); the emulator refuses it.
    public func antennaTuningChannels(maxChannels: Int = VendorRegionEntry.maxChannels) throws(ReaderError)
        -> [(frequencyKHz: Int, reflectedPowerDBm: Double)] {
        let channels = regionChannelsKHz
        guard case .detailedAntennaTuning(let rows) = try call(.getDetailedAntennaTuning(maxChannels: UInt8(clamping: maxChannels)),
                                                               extraTimeoutMs: 2000) else {
            throw .malformedResponse(port: port.name, detail: ErrorDetail("unexpected_answer", ["GetDetailedAntennaTuning"]))
        }
        return rows.enumerated().map { i, row in (channels.indices.contains(i) ? channels[i] : 0, Double(row.value) / 10) }
    }
}

extension Reader {
    /// Vendor `tuneAntenna`, on the reader's thread; `progress` is called there too.
    public func tuneAntenna(_ progress: @escaping @Sendable (UgiAntennaTuningProgress) -> Bool) async throws(ReaderError) -> Int {
        try await perform { (session) throws(ReaderError) in try session.tuneAntenna(progress).tuned }
    }

    /// Vendor `getAntennaTuning`, on the reader's thread.
    public func antennaTuning() async throws(ReaderError) -> UgiAntennaTuning {
        try await perform { (session) throws(ReaderError) in try session.antennaTuning() }
    }
}
