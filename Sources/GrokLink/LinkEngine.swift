import GrokAudio

/// One end of the audio link: modem, handshake, mode negotiation and the packet protocol
/// (sequence numbers, cumulative and selective acknowledgement, NACK, retransmission on
/// sample-clock timeouts, a sliding window in each direction, fragmentation of messages).
///
/// The engine does no I/O and never reads the wall clock. Whoever owns the audio port calls
/// ``process(input:output:)`` with each block of captured samples and plays what it writes;
/// the engine's clock is the number of samples it has processed. Messages go in with
/// ``send(_:)`` and come out with ``receive()``.
///
/// Not thread-safe: one owner at a time.
public final class LinkEngine {
    public let role: LinkRole
    public let sampleRate: Int
    public let configuration: LinkConfiguration

    /// Samples processed so far: the link's clock.
    public private(set) var now: Int64 = 0
    public private(set) var state: LinkState
    /// The mode both directions run in now.
    public private(set) var mode = LinkMode.base
    public private(set) var statistics = LinkStatistics()
    /// Device: the first message to send, inside the handshake answer (the device announces
    /// itself without being asked, which keeps plug-in-to-identified short).
    public var greeting: [UInt8]?
    /// The peer's capabilities, once connected.
    public private(set) var peerModes: [LinkMode] = []

    private var events: [LinkEvent] = []
    private var rng: SplitMix64

    // Transmit side.
    private var modulator: FM0Modulator
    private var txBuffer: [Float] = []
    private var txIndex = 0
    private var txFrame: Frame?
    private var lineWasIdle = true
    private var lastTxEnd: Int64 = 0

    // Receive side.
    private var demod: FM0Demodulator
    private var demodEvents: [DemodEvent] = []
    private var lastValidRx: Int64 = 0

    // Session.
    private var nonce: UInt32 = 0
    private var nextHelloAt: Int64 = 0
    private var maxPayload: Int
    private var window: Int

    // Sender.
    private struct Outgoing {
        var frame: Frame
        var sentAt: Int64?
        var retries = 0
        var needsSend = true
        var selectivelyAcked = false
    }
    private var fragments: [Frame] = []
    private var fragmentHead = 0
    private var queuedBytes = 0
    private var unacked: [Outgoing] = []
    private var nextSeq: UInt8 = 0

    // Receiver.
    private var expectedSeq: UInt8 = 0
    private var outOfOrder: [UInt8: Frame] = [:]
    private var reassembly: [UInt8] = []
    private var inbox: [[UInt8]] = []
    private var inboxHead = 0
    private var ackPending = false
    private var nackQueue: [UInt8] = []
    private var nackedAt: [UInt8: Int64] = [:]

    // Control frames go out before anything else.
    private var control: [Frame] = []

    // Mode negotiation.
    private enum Trial {
        case none
        case requested(LinkMode, deadline: Int64, attempts: Int)
        case probing(LinkMode, deadline: Int64)
        case cooldown(until: Int64)
    }
    private var trial = Trial.none
    private var goodMode = LinkMode.base
    private var modeCeiling: LinkMode?
    private var pendingModeSwitch: LinkMode?
    private var deviceTrialDeadline: Int64?
    private var probesGood = 0
    private var probesQuality = 0.0

    static let probeCount = 4
    static let probePayload = 48
    static let versionMajor: UInt8 = 1
    static let versionMinor: UInt8 = 0

    public init(role: LinkRole, sampleRate: Int, configuration: LinkConfiguration = LinkConfiguration()) {
        self.role = role
        self.sampleRate = sampleRate
        self.configuration = configuration
        self.state = .notConnected
        self.maxPayload = configuration.maxPayload
        self.window = configuration.window
        self.rng = SplitMix64(seed: configuration.seed ^ (role == .host ? 0x686F_7374 : 0x6465_7669))
        self.modulator = FM0Modulator(amplitude: configuration.amplitude)
        self.demod = FM0Demodulator(samplesPerBit: LinkMode.base.samplesPerBit(atRate: sampleRate),
                                    sampleRate: sampleRate, startTime: 0)
    }

    // MARK: Application interface

    /// Host: start handshaking (the vendor's `openConnection`). A device listens from the start.
    public func connect() {
        guard role == .host, state == .notConnected || state == .incompatible else { return }
        nonce = UInt32(truncatingIfNeeded: rng.next())
        nextHelloAt = now
        setState(.connecting)
    }

    /// Host: stop and go quiet (the vendor's `closeConnection`).
    public func disconnect() {
        let failed = resetSession()
        if failed > 0 { statistics.sendFailures += failed }
        setMode(.base)
        trial = .none
        control.removeAll()
        setState(.notConnected)
    }

    /// Queues a message for reliable, in-order delivery to the peer.
    public func send(_ message: [UInt8]) throws(LinkError) {
        guard state == .connected else { throw .notConnected }
        guard message.count <= configuration.maxMessageSize else {
            throw .messageTooLarge(size: message.count, limit: configuration.maxMessageSize)
        }
        guard queuedBytes + message.count <= configuration.maxQueuedBytes else {
            throw .queueFull(limit: configuration.maxQueuedBytes)
        }
        var offset = 0
        repeat {
            let end = min(offset + maxPayload, message.count)
            let last = end == message.count
            fragments.append(Frame(type: .data, flags: last ? Frame.endOfMessage : 0,
                                   payload: Array(message[offset..<end])))
            offset = end
        } while offset < message.count
        queuedBytes += message.count
        statistics.messagesSent += 1
    }

    /// The next message the peer sent, if one has arrived whole.
    public func receive() -> [UInt8]? {
        guard inboxHead < inbox.count else { return nil }
        let message = inbox[inboxHead]
        inboxHead += 1
        if inboxHead > 64, inboxHead * 2 > inbox.count {
            inbox.removeFirst(inboxHead)
            inboxHead = 0
        }
        return message
    }

    /// Zeroes the counters (the vendor's diagnostics reset); the skew estimate is kept.
    public func resetStatistics() {
        let skew = statistics.skewFactor
        statistics = LinkStatistics()
        statistics.skewFactor = skew
    }

    /// Payload bytes queued or sent and not yet acknowledged: what a producer watches to
    /// send no faster than the link carries.
    public var backlog: Int { queuedBytes + unacked.reduce(0) { $0 + $1.frame.payload.count } }

    /// Whether anything is still waiting to be sent or acknowledged.
    public var isIdle: Bool { fragmentHead == fragments.count && unacked.isEmpty && txFrame == nil }

    /// Events since the last call, oldest first.
    public func drainEvents() -> [LinkEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Whether the demodulator hears an FM0 signal right now (a decision margin well above
    /// what noise gives).
    public var hearsSignal: Bool { demod.signalQuality > 0.8 }

    /// Whether a mode negotiation is under way (application data waits meanwhile).
    public var negotiating: Bool {
        if case .none = trial { return pendingModeSwitch != nil || deviceTrialDeadline != nil }
        return true
    }

    /// Seconds of audio to samples on this engine's clock.
    public func samples(_ seconds: Double) -> Int64 { Int64((seconds * Double(sampleRate)).rounded()) }

    // MARK: The sample pump

    /// Consumes one block of captured samples and fills the same number to play.
    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        precondition(input.count == output.count, "the link plays and captures the same number of samples")
        demod.process(input, events: &demodEvents)
        let blockEnd = now + Int64(input.count)
        for event in demodEvents { handle(event) }
        demodEvents.removeAll(keepingCapacity: true)
        now = blockEnd
        statistics.skewFactor = demod.skewFactor
        checkTimers()
        fill(output)
    }

    // MARK: Receiving

    private func handle(_ event: DemodEvent) {
        switch event {
        case .badHeader:
            statistics.internalCrcMismatches += 1
        case .badCRC(let type, let seq, _):
            statistics.crcMismatches += 1
            if type == .data, state == .connected { requestRetransmission(of: seq) }
        case .frame(let frame, let quality, let end):
            statistics.packetsReceived += 1
            statistics.bytesReceived += Frame.headerSize + frame.payload.count + Frame.trailerSize
            receive(frame, quality: quality, at: end)
        }
    }

    private func receive(_ frame: Frame, quality: Double, at time: Int64) {
        switch (role, frame.type) {
        case (.device, .hello):
            lastValidRx = time
            acceptHello(frame, quality: quality)
            return
        case (.host, .helloAck):
            if state == .connecting { acceptHelloAck(frame) } else { statistics.invalidPackets += 1 }
            if state == .connected { lastValidRx = time }
            return
        default:
            break
        }
        guard state == .connected else {
            statistics.invalidPackets += 1
            return
        }
        lastValidRx = time
        if role == .device, deviceTrialDeadline != nil {
            if frame.type == .probe || frame.type == .mode {
                deviceTrialDeadline = now + trialTimeout
            } else {
                goodMode = mode
                deviceTrialDeadline = nil
            }
        }
        switch frame.type {
        case .data:
            takeAck(frame.ack, selective: nil)
            takeData(frame)
        case .ack:
            takeAck(frame.ack, selective: frame.payload.count >= 4 ? Array(frame.payload.prefix(4)) : nil)
            if frame.flags & 0x1 != 0 { ackPending = true }
        case .nack:
            takeAck(frame.ack, selective: nil)
            // The receiver asks once per retransmission timeout, so a NACK is never stale twice.
            if let i = unacked.firstIndex(where: { $0.frame.seq == frame.seq }), unacked[i].sentAt != nil {
                unacked[i].needsSend = true
            }
        case .mode:
            takeMode(frame)
        case .probe:
            if role == .device { takeProbe(frame, quality: quality) } else { statistics.invalidPackets += 1 }
        case .probeReport:
            if role == .host { takeProbeReport(frame, quality: quality) } else { statistics.invalidPackets += 1 }
        case .hello, .helloAck:
            statistics.invalidPackets += 1
        }
    }

    private func takeData(_ frame: Frame) {
        ackPending = true
        let distance = frame.seq &- expectedSeq
        if distance == 0 {
            accept(frame)
            while let next = outOfOrder.removeValue(forKey: expectedSeq) { accept(next) }
        } else if Int(distance) < 2 * window {
            outOfOrder[frame.seq] = frame
            var missing = expectedSeq
            while missing != frame.seq {
                if outOfOrder[missing] == nil { requestRetransmission(of: missing) }
                missing &+= 1
            }
        }
        // Anything else is a duplicate of a frame already taken: the ACK we owe covers it.
    }

    private func accept(_ frame: Frame) {
        expectedSeq &+= 1
        nackedAt[frame.seq] = nil
        reassembly.append(contentsOf: frame.payload)
        if frame.flags & Frame.endOfMessage != 0 {
            statistics.messagesReceived += 1
            statistics.payloadBytesReceived += reassembly.count
            inbox.append(reassembly)
            reassembly = []
        } else if reassembly.count > configuration.maxMessageSize {
            statistics.invalidPackets += 1
            reassembly = []
        }
    }

    private func requestRetransmission(of seq: UInt8) {
        let distance = seq &- expectedSeq
        guard Int(distance) < 2 * window else { return }
        if let last = nackedAt[seq], now - last < retransmissionTimeout { return }
        nackedAt[seq] = now
        if !nackQueue.contains(seq) { nackQueue.append(seq) }
    }

    private func takeAck(_ ack: UInt8, selective: [UInt8]?) {
        while let first = unacked.first {
            let distance = ack &- first.frame.seq
            guard distance >= 1, Int(distance) <= 2 * window else { break }
            unacked.removeFirst()
        }
        guard let map = selective else { return }
        for i in unacked.indices {
            let offset = Int(unacked[i].frame.seq &- ack) - 1
            if offset >= 0, offset < 32, map[offset / 8] & (1 << UInt8(offset % 8)) != 0 {
                unacked[i].selectivelyAcked = true
                unacked[i].needsSend = false
            }
        }
    }

    // MARK: Handshake

    private func capabilities() -> [UInt8] {
        var mask: UInt16 = 0
        for m in configuration.supportedModes {
            if let index = m.wireIndex { mask |= 1 << UInt16(index) }
        }
        let rateCode: UInt8 = sampleRate == 48_000 ? 1 : 0
        let mp = UInt16(configuration.maxPayload)
        return [LinkEngine.versionMajor << 4 | LinkEngine.versionMinor, rateCode,
                UInt8(mask & 0xFF), UInt8(mask >> 8), UInt8(mp & 0xFF), UInt8(mp >> 8),
                UInt8(configuration.window),
                UInt8(truncatingIfNeeded: nonce), UInt8(truncatingIfNeeded: nonce >> 8),
                UInt8(truncatingIfNeeded: nonce >> 16), UInt8(truncatingIfNeeded: nonce >> 24)]
    }

    /// Parses the 11 capability bytes; nil when malformed.
    private func parseCapabilities(_ p: [UInt8]) -> (major: UInt8, modes: [LinkMode], maxPayload: Int, window: Int, nonce: UInt32)? {
        guard p.count >= 11 else { return nil }
        let mask = UInt16(p[2]) | UInt16(p[3]) << 8
        let modes = (0..<16).filter { mask & (1 << UInt16($0)) != 0 }.compactMap { LinkMode(wireIndex: UInt8($0)) }
        let mp = Int(UInt16(p[4]) | UInt16(p[5]) << 8)
        let n = UInt32(p[7]) | UInt32(p[8]) << 8 | UInt32(p[9]) << 16 | UInt32(p[10]) << 24
        guard mp >= 16, p[6] >= 1 else { return nil }
        return (p[0] >> 4, modes, mp, Int(p[6]), n)
    }

    private func acceptHello(_ frame: Frame, quality: Double) {
        guard let caps = parseCapabilities(frame.payload) else {
            statistics.invalidPackets += 1
            return
        }
        let wasConnected = state == .connected
        let failed = resetSession()
        if wasConnected { events.append(.connectionLost(.peerRestarted, failedMessages: failed)) }
        control.removeAll()
        setMode(.base)
        goodMode = .base
        pendingModeSwitch = nil
        deviceTrialDeadline = nil
        nonce = caps.nonce
        maxPayload = min(configuration.maxPayload, caps.maxPayload)
        window = min(configuration.window, caps.window)
        peerModes = caps.modes
        var payload = capabilities()
        payload.append(UInt8(max(0, min(255, (quality * 255).rounded()))))
        let ppm = Int16(clamping: Int(((demod.skewFactor - 1) * 1e6).rounded()))
        payload.append(UInt8(truncatingIfNeeded: ppm))
        payload.append(UInt8(truncatingIfNeeded: ppm >> 8))
        if caps.major != LinkEngine.versionMajor {
            control.append(Frame(type: .helloAck, payload: payload))
            setState(.incompatible)
            return
        }
        if let greeting, payload.count + greeting.count <= maxPayload {
            payload.append(contentsOf: greeting)
            nextSeq = 1
        }
        control.append(Frame(type: .helloAck, payload: payload))
        statistics.handshakes += 1
        setState(.connected)
    }

    private func acceptHelloAck(_ frame: Frame) {
        guard let caps = parseCapabilities(frame.payload), caps.nonce == nonce, frame.payload.count >= 14 else {
            statistics.invalidPackets += 1
            return
        }
        guard caps.major == LinkEngine.versionMajor else {
            setState(.incompatible)
            return
        }
        _ = resetSession()
        maxPayload = min(configuration.maxPayload, caps.maxPayload)
        window = min(configuration.window, caps.window)
        peerModes = caps.modes
        if frame.payload.count > 14 {
            inbox.append(Array(frame.payload[14...]))
            statistics.messagesReceived += 1
            statistics.payloadBytesReceived += frame.payload.count - 14
            expectedSeq = 1
        }
        statistics.handshakes += 1
        goodMode = .base
        setState(.connected)
        if configuration.autoUpgrade { startNextTrial() }
    }

    /// Forgets sequence numbers and queued data; returns how many messages were dropped.
    private func resetSession() -> Int {
        var failed = 0
        for f in fragments[fragmentHead...] where f.flags & Frame.endOfMessage != 0 { failed += 1 }
        for u in unacked where u.frame.flags & Frame.endOfMessage != 0 { failed += 1 }
        fragments.removeAll()
        fragmentHead = 0
        queuedBytes = 0
        unacked.removeAll()
        nextSeq = 0
        expectedSeq = 0
        outOfOrder.removeAll()
        reassembly.removeAll()
        ackPending = false
        nackQueue.removeAll()
        nackedAt.removeAll()
        return failed
    }

    private func loseConnection(_ reason: LinkLossReason) {
        let failed = resetSession()
        statistics.sendFailures += failed
        events.append(.connectionLost(reason, failedMessages: failed))
        if reason == .repeatedErrors, mode != .base { modeCeiling = mode }
        if reason == .lossOfSignal { modeCeiling = nil }
        control.removeAll()
        trial = .none
        pendingModeSwitch = nil
        deviceTrialDeadline = nil
        setMode(.base)
        goodMode = .base
        if role == .host {
            nonce = UInt32(truncatingIfNeeded: rng.next())
            nextHelloAt = now
            setState(.connecting)
        } else {
            setState(.notConnected)
        }
    }

    private func setState(_ new: LinkState) {
        guard new != state else { return }
        state = new
        lastValidRx = now
        events.append(.stateChanged(new))
    }

    private func setMode(_ new: LinkMode) {
        guard new != mode else { return }
        let skew = demod.skew
        mode = new
        demod = FM0Demodulator(samplesPerBit: new.samplesPerBit(atRate: sampleRate), sampleRate: sampleRate,
                               startTime: now, skew: skew)
        lineWasIdle = true
        events.append(.modeChanged(new))
    }

    // MARK: Mode negotiation

    private var trialTimeout: Int64 { samples(0.25 + 2 * configuration.latencyAllowance) }

    private func candidates() -> [LinkMode] {
        configuration.supportedModes
            .filter { cand in peerModes.contains(cand) && cand > goodMode && (modeCeiling.map { cand < $0 } ?? true) }
            .sorted(by: >)
    }

    private func startNextTrial() {
        guard let next = candidates().first else {
            trial = .none
            return
        }
        requestMode(next, attempts: 0)
    }

    private func requestMode(_ target: LinkMode, attempts: Int) {
        control.append(Frame(type: .mode, payload: [target.wireIndex ?? 0]))
        // The deadline is armed when the request has gone out (see frameSent).
        trial = .requested(target, deadline: Int64.max, attempts: attempts)
    }

    private func takeMode(_ frame: Frame) {
        guard let index = frame.payload.first else {
            statistics.invalidPackets += 1
            return
        }
        // A mode this build does not know is answered with the current one (a refusal).
        let target = LinkMode(wireIndex: index) ?? mode
        if role == .device {
            guard frame.flags & Frame.modeAckFlag == 0 else {
                statistics.invalidPackets += 1
                return
            }
            let supported = configuration.supportedModes.contains(target)
            let answer = supported ? target : mode
            control.append(Frame(type: .mode, flags: Frame.modeAckFlag, payload: [answer.wireIndex ?? 0]))
            if answer != mode {
                pendingModeSwitch = answer
            }
            probesGood = 0
            probesQuality = 0
            return
        }
        guard frame.flags & Frame.modeAckFlag != 0, case .requested(let wanted, _, _) = trial else {
            statistics.invalidPackets += 1
            return
        }
        guard target == wanted else {
            modeCeiling = wanted
            trial = .none
            startNextTrial()
            return
        }
        if target == goodMode {
            setMode(target)
            trial = .none
            return
        }
        setMode(target)
        for i in 0..<LinkEngine.probeCount {
            var payload = [UInt8(i), UInt8(LinkEngine.probeCount)]
            var x: UInt8 = 0x5A ^ UInt8(i)
            for _ in 2..<LinkEngine.probePayload {
                x = x &* 29 &+ 71
                payload.append(x)
            }
            control.append(Frame(type: .probe, payload: payload))
        }
        let probeTime = Int64(LinkEngine.probeCount) * frameAirtime(payload: LinkEngine.probePayload)
        trial = .probing(target, deadline: now + probeTime + frameAirtime(payload: 4) + samples(4 * configuration.latencyAllowance))
    }

    private func takeProbe(_ frame: Frame, quality: Double) {
        guard frame.payload.count >= 2 else {
            statistics.invalidPackets += 1
            return
        }
        probesGood += 1
        probesQuality += quality
        if frame.payload[0] &+ 1 >= frame.payload[1] {
            let mean = probesQuality / Double(max(probesGood, 1))
            control.append(Frame(type: .probeReport, payload: [
                UInt8(min(probesGood, 255)), frame.payload[1], UInt8(max(0, min(255, (mean * 255).rounded()))),
                mode.wireIndex ?? 0,
            ]))
            probesGood = 0
            probesQuality = 0
        }
    }

    private func takeProbeReport(_ frame: Frame, quality: Double) {
        guard case .probing(let target, _) = trial, frame.payload.count >= 4 else {
            statistics.invalidPackets += 1
            return
        }
        let good = Int(frame.payload[0]), sent = Int(frame.payload[1])
        let theirQuality = Double(frame.payload[2]) / 255
        let threshold = configuration.modeAcceptQuality
        if good >= sent, theirQuality >= threshold, quality >= threshold {
            goodMode = target
            trial = .none
            ackPending = true  // tells the device the mode is kept
            return
        }
        events.append(.modeRejected(target))
        modeCeiling = target
        if let next = candidates().first {
            requestMode(next, attempts: 0)
        } else {
            requestMode(goodMode, attempts: 0)
        }
    }

    private func frameAirtime(payload: Int) -> Int64 {
        Int64(FM0Modulator.airtime(frameBytes: Frame.headerSize + payload + Frame.trailerSize,
                                   preambleBits: configuration.preambleBits,
                                   samplesPerBit: mode.samplesPerBit(atRate: sampleRate)))
    }

    // MARK: Timers

    private var retransmissionTimeout: Int64 {
        // The peer may be busy with a frame of its own before it can answer.
        2 * frameAirtime(payload: maxPayload) + frameAirtime(payload: 4) + samples(2 * configuration.latencyAllowance)
    }

    private func checkTimers() {
        switch state {
        case .connected:
            let timeout = role == .host ? configuration.hostLinkTimeout : configuration.deviceLinkTimeout
            if now - lastValidRx > samples(timeout) {
                loseConnection(.lossOfSignal)
                return
            }
        case .connecting, .notConnected, .incompatible:
            return
        }
        switch trial {
        case .requested(let target, let deadline, let attempts) where now > deadline:
            if attempts >= 2 {
                modeCeiling = target
                trial = .none
                if mode != goodMode { setMode(goodMode) }
                startNextTrial()
            } else {
                requestMode(target, attempts: attempts + 1)
            }
        case .probing(let target, let deadline) where now > deadline:
            events.append(.modeRejected(target))
            modeCeiling = target
            setMode(goodMode)
            trial = .cooldown(until: now + trialTimeout + samples(configuration.latencyAllowance))
        case .cooldown(let until) where now > until:
            startNextTrial()
        default:
            break
        }
        if role == .device, let deadline = deviceTrialDeadline, now > deadline {
            deviceTrialDeadline = nil
            setMode(goodMode)
        }
        let rto = retransmissionTimeout
        for i in unacked.indices {
            guard let sent = unacked[i].sentAt, !unacked[i].needsSend, !unacked[i].selectivelyAcked,
                  now - sent > rto else { continue }
            unacked[i].needsSend = true
            statistics.timeouts += 1
        }
        if let worst = unacked.map(\.retries).max(), worst > configuration.maxRetries {
            loseConnection(.repeatedErrors)
        }
    }

    // MARK: Transmitting

    private func nextFrame() -> Frame? {
        if !control.isEmpty { return control.removeFirst() }
        switch state {
        case .connecting:
            guard role == .host, now >= nextHelloAt else { return nil }
            return Frame(type: .hello, payload: capabilities())
        case .connected:
            break
        case .notConnected, .incompatible:
            return nil
        }
        if !nackQueue.isEmpty {
            return Frame(type: .nack, seq: nackQueue.removeFirst(), ack: expectedSeq)
        }
        if !negotiating {
            if let i = unacked.firstIndex(where: { $0.needsSend && $0.sentAt != nil }) {
                unacked[i].retries += 1
                unacked[i].needsSend = false
                statistics.retries += 1
                var frame = unacked[i].frame
                frame.ack = expectedSeq
                ackPending = false
                return frame
            }
            if unacked.count < window, fragmentHead < fragments.count {
                var frame = fragments[fragmentHead]
                fragmentHead += 1
                if fragmentHead > 256, fragmentHead * 2 > fragments.count {
                    fragments.removeFirst(fragmentHead)
                    fragmentHead = 0
                }
                queuedBytes -= frame.payload.count
                frame.seq = nextSeq
                nextSeq &+= 1
                frame.ack = expectedSeq
                unacked.append(Outgoing(frame: frame, sentAt: nil, needsSend: false))
                ackPending = false
                return frame
            }
        }
        if ackPending {
            ackPending = false
            return Frame(type: .ack, ack: expectedSeq, payload: selectiveAckMap())
        }
        if role == .host, now - lastTxEnd > samples(configuration.keepaliveInterval) {
            return Frame(type: .ack, flags: 0x1, ack: expectedSeq)
        }
        return nil
    }

    private func selectiveAckMap() -> [UInt8] {
        guard !outOfOrder.isEmpty else { return [] }
        var map = [UInt8](repeating: 0, count: 4)
        for seq in outOfOrder.keys {
            let offset = Int(seq &- expectedSeq) - 1
            if offset >= 0, offset < 32 { map[offset / 8] |= 1 << UInt8(offset % 8) }
        }
        return map
    }

    private func fill(_ output: UnsafeMutableBufferPointer<Float>) {
        var written = 0
        while written < output.count {
            if txIndex >= txBuffer.count {
                if let done = txFrame {
                    frameSent(done, at: now + Int64(written))
                    txFrame = nil
                }
                guard let frame = nextFrame() else { break }
                render(frame)
            }
            let n = min(output.count - written, txBuffer.count - txIndex)
            txBuffer.withUnsafeBufferPointer { src in
                for i in 0..<n { output[written + i] = src[txIndex + i] }
            }
            txIndex += n
            written += n
        }
        if written < output.count {
            for i in written..<output.count { output[i] = 0 }
            lineWasIdle = true
        }
    }

    private func render(_ frame: Frame) {
        let bytes = frame.encoded()
        let spb = mode.samplesPerBit(atRate: sampleRate)
        let payloadStart = modulator.render(bytes: bytes,
                                            preambleBits: lineWasIdle ? configuration.preambleBits : configuration.shortPreambleBits,
                                            samplesPerBit: spb, into: &txBuffer)
        if frame.type == .data, configuration.frameDamageProbability > 0,
           Double(rng.next() >> 11) / Double(1 << 53) < configuration.frameDamageProbability {
            // Invert the waveform from the middle of one bit to the middle of a later one: the
            // two bits at the edges flip (inverting whole bits changes nothing in FM0), and the
            // CRC-32C must catch it.
            let middle = payloadStart + Double(Frame.headerSize + frame.payload.count / 2) * 8 * spb
            let from = Int(middle + spb / 2), to = min(txBuffer.count, Int(middle + 2.5 * spb))
            for i in from..<to { txBuffer[i] = -txBuffer[i] }
        }
        lineWasIdle = false
        txIndex = 0
        txFrame = frame
        statistics.packetsSent += 1
        statistics.bytesSent += bytes.count
    }

    private func frameSent(_ frame: Frame, at time: Int64) {
        lastTxEnd = time
        switch frame.type {
        case .data:
            if let i = unacked.firstIndex(where: { $0.frame.seq == frame.seq }) { unacked[i].sentAt = time }
        case .hello:
            nextHelloAt = time + frameAirtime(payload: 14 + (greetingAllowance)) + samples(3 * configuration.latencyAllowance)
        case .mode where role == .host:
            if case .requested(let target, _, let attempts) = trial {
                trial = .requested(target, deadline: time + 2 * frameAirtime(payload: 1) + samples(4 * configuration.latencyAllowance),
                                   attempts: attempts)
            }
        case .mode where role == .device:
            if let target = pendingModeSwitch {
                pendingModeSwitch = nil
                setMode(target)
                deviceTrialDeadline = now + trialTimeout
            }
        default:
            break
        }
    }

    /// The device's greeting (a reader-information message) fits in this many bytes.
    private var greetingAllowance: Int { 160 }
}
