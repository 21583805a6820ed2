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
    /// Vendor `tuneAntenna`: the Grokker tunes its antenna on every channel of its region,
    /// one after the other on its own clock; `progress` is called for each channel tuned and
    /// returns `false` to stop early (channels the Grokker finished before the stop reached
    /// it stay tuned, and are counted). Not while an inventory runs, nor before the region
    /// is set (``ReaderError/regionNotSet(port:)``). Returns the channels tuned and the total.
    @discardableResult
    public func tuneAntenna(_ progress: (UgiAntennaTuningProgress) -> Bool) throws(ReaderError) -> (tuned: Int, total: Int) {
        guard !inventoryRunning else { throw .inventoryRunning(port: port.name) }
        tuningProgress.removeAll()
        _ = try call(.startAntennaTuning)
        log(.command, "antenna tuning started")
        var tuned = 0
        var total = 0
        var stopping = false
        func drain() {
            for event in tuningProgress {
                tuned = max(tuned, Int(event.tuned))
                total = Int(event.total)
                if !stopping, !progress(UgiAntennaTuningProgress(
                    frequencyKHz: Int(event.frequencyKHz), reflectedPowerDBm: Double(event.reflectedTenthsDBm) / 10,
                    numTuned: Int(event.tuned), total: Int(event.total))) {
                    stopping = true
                }
            }
            tuningProgress.removeAll()
        }
        while total == 0 || tuned < total {
            let arrived = try pump(forAtMost: options.commandTimeout) {
                takeMessages()
                return !tuningProgress.isEmpty || engine.state != .connected
            }
            guard engine.state == .connected else { throw .lostConnection(port: port.name) }
            guard arrived else { throw .timeout(port: port.name, command: "\(Opcode.startAntennaTuning)", seconds: options.commandTimeout) }
            drain()
            if stopping { break }
        }
        if stopping, tuned < total {
            _ = try call(.stopAntennaTuning)
            // Progress sent before the stop arrived comes before its answer.
            drain()
        }
        log(.command, "antenna tuning ended: \(tuned) of \(total) channels")
        return (tuned, total)
    }

    /// Vendor `getAntennaTuning`: the static and dynamic average reflected power.
    public func antennaTuning() throws(ReaderError) -> UgiAntennaTuning {
        let response = try call(.getAntennaTuning)
        guard case .antennaTuning(let info) = response else {
            throw .malformedResponse(port: port.name, detail: "getAntennaTuning answered with \(response.opcode)")
        }
        return UgiAntennaTuning(
            staticAverageDBm: Double(info.staticAverageTenthsDBm) / 10,
            dynamicAverageDBm: info.dynamicAverageTenthsDBm.map { Double($0) / 10 },
            channels: info.channels.map { (Int($0.frequencyKHz), Double($0.reflectedTenthsDBm) / 10) })
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
