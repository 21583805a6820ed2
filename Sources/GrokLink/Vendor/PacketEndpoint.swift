/// One side of the vendor's packet protocol, host or device, as a pure state machine over a
/// ``VendorByteTransport``: the owner calls ``poll(_:)`` after each audio block; every timer
/// runs on the transport's sample clock.
///
/// Who asks and who answers depends on the role and on slave mode:
///
/// | | normal | slave mode |
/// |---|---|---|
/// | host | sends requests, expects responses | answers the reader's requests |
/// | device | answers the host's requests | sends requests, expects responses |
///
/// The requester has one request outstanding at a time and resends it with the vendor's
/// timing (``VendorPacketTiming``) until it is answered or its tries run out. The answerer
/// hands each request up through ``onRequest`` and sends the reply it gets back; a retried
/// request equal to the last one (the retry bit set, same command and payload) is answered
/// again with the last reply without asking again, as the vendor host does in slave mode.
/// Strict turn-taking: the answerer listens only when no answer is pending, the requester
/// only while it waits for an answer (the vendor's receiver ignores bytes between
/// exchanges).
///
/// Not thread-safe: one owner pumps it, on one thread, like the transport.
public final class PacketEndpoint {
    public enum Role: Sendable, Equatable { case host, device }

    public let role: Role
    public var timing: VendorPacketTiming
    public private(set) var statistics = VendorPacketStatistics()
    /// Whether slave mode is on.
    public private(set) var isInSlaveMode = false

    /// The layer above's answer to a request from the other side. Return nil to answer
    /// later with ``answer(_:)`` (the endpoint stays silent meanwhile). The default answers
    /// ACK_0 on the host, ending slave mode at 00 "completed", and ACK_7 on the device.
    public var onRequest: (RequestPacket) -> VendorReply?

    private struct Outstanding {
        var request: RequestPacket
        var extraMs: Int
        var retries: Bool
        var slave: VendorSlaveMode?
        var endsSlaveMode: Bool
        var triesLeft: Int
        var queued: Bool
        /// Awaiting an answer that must start by this sample; nil once it started.
        var deadline: Int64?
        /// Pausing before a resend until this sample.
        var resendAt: Int64?
    }

    private var outstanding: Outstanding?
    private var decoder: VendorPacketDecoder
    private var lastDelivery: Int64 = 0
    private var quietUntil: Int64 = .min
    private var slave: VendorSlaveMode?
    private var slaveDeadline: Int64?
    private var lastRequest: RequestPacket?
    private var lastReply: VendorReply?
    private var awaitingAnswer: RequestPacket?
    private var pendingReply: VendorReply?
    private var events: [PacketEvent] = []
    private var sampleRate = 44100
    private var samplesPerBit = 12

    public init(role: Role, timing: VendorPacketTiming = .vendorHost) {
        self.role = role
        self.timing = timing
        decoder = VendorPacketDecoder(expecting: role == .host ? .responses : .requests)
        onRequest = role == .host
            ? { VendorReply(.ack, endsSlaveMode: $0.command == 0) }
            : { _ in .nack }
    }

    /// Whether this endpoint is the requester now (host in normal mode, device in slave mode).
    public var isRequester: Bool { (role == .host) != isInSlaveMode }

    /// Whether a request of this endpoint is waiting for its answer.
    public var isSending: Bool { outstanding != nil }

    /// The request handed up and not answered yet (when ``onRequest`` returned nil).
    public var requestAwaitingAnswer: RequestPacket? { awaitingAnswer }

    /// Queues a request; it goes out on the next ``poll(_:)`` (after a quiet period an ACK_6
    /// asked for), and its answer or failure comes back as a ``PacketEvent``: a modem that is
    /// not connected at that poll fails it with ``VendorPacketError/notConnected``.
    /// - Parameters:
    ///   - command: 0...63.
    ///   - payload: 0...250 bytes (empty: the one-byte form).
    ///   - extraTimeoutMs: added to the answer's deadline (the vendor: 500 ms for
    ///     ChangeSoftwareType, 1000-3500 ms for the antenna and frequency scans).
    ///   - retries: false fails after the first failed try and hands a NACK up as an answer
    ///     (the vendor's `-1` timeout).
    ///   - slaveMode: host only: enter slave mode if the answer has id 0.
    ///   - endsSlaveMode: device only: leave slave mode once this request is answered or fails.
    public func send(command: UInt8, payload: [UInt8] = [], extraTimeoutMs: Int = 0, retries: Bool = true,
                     slaveMode: VendorSlaveMode? = nil, endsSlaveMode: Bool = false) throws(VendorPacketError) {
        let request = RequestPacket(command: command, payload: payload)
        _ = try request.encoded()
        guard isRequester, outstanding == nil else { throw .busy }
        outstanding = Outstanding(request: request, extraMs: max(0, extraTimeoutMs), retries: retries,
                                  slave: role == .host ? slaveMode : nil,
                                  endsSlaveMode: role == .device && endsSlaveMode,
                                  triesLeft: max(1, timing.tries), queued: false)
        statistics.packetsSent += 1
    }

    /// Answers the request handed up with ``onRequest`` returning nil.
    public func answer(_ reply: VendorReply) throws(VendorPacketError) {
        guard awaitingAnswer != nil else { throw .noRequestWaiting }
        _ = try reply.response.encoded()
        pendingReply = reply
    }

    /// Device: becomes the requester (the vendor reader does this after its ACK_0 to an
    /// inventory start; ``VendorReply/entersSlaveMode`` does it as part of that answer).
    public func enterSlaveMode() {
        guard role == .device, !isInSlaveMode else { return }
        switchMode(slave: true)
        events.append(.enteredSlaveMode)
    }

    /// Device: back to answering the host's requests; a request still outstanding is dropped.
    public func exitSlaveMode() {
        guard role == .device, isInSlaveMode else { return }
        outstanding = nil
        switchMode(slave: false)
        events.append(.exitedSlaveMode(nil))
    }

    /// Moves bytes and time: takes what the transport received, sends what is due, fires
    /// the timers that expired at `transport.now`; returns what happened, oldest first.
    public func poll(_ transport: any VendorByteTransport) -> [PacketEvent] {
        let now = transport.now
        let bytes = transport.takeReceived()
        sampleRate = transport.sampleRate
        samplesPerBit = max(1, transport.samplesPerBit)
        if !transport.isConnected {
            dropEverything(.connectionLost)
        } else if isRequester {
            pollRequester(transport, bytes: bytes, now: now)
        } else {
            pollAnswerer(transport, bytes: bytes, now: now)
        }
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    // MARK: The requester

    private func pollRequester(_ t: any VendorByteTransport, bytes: [UInt8], now: Int64) {
        guard var o = outstanding else {
            statistics.bytesIgnored += bytes.count
            return
        }
        if !o.queued {
            // The vendor's SendPacket waits out a quiet period an ACK_6 asked for.
            guard now >= quietUntil else {
                statistics.bytesIgnored += bytes.count
                return
            }
            o.queued = true
            outstanding = o
            transmit(t, now: now)
            statistics.bytesIgnored += bytes.count
            return
        }
        if let resendAt = o.resendAt {
            statistics.bytesIgnored += bytes.count
            guard now >= resendAt else { return }
            o.resendAt = nil
            o.request.isRetry = true
            outstanding = o
            transmit(t, now: now)
            return
        }
        if now < quietUntil {
            statistics.bytesIgnored += bytes.count
            return
        }
        if !bytes.isEmpty { lastDelivery = now }
        for (i, b) in bytes.enumerated() {
            outstanding?.deadline = nil // the answer has started: only silence can end it now
            guard let out = decoder.feed(b) else { continue }
            let rest = bytes[(i + 1)...]
            switch out {
            case .response(let r):
                finish(with: r, now: now)
                if !isRequester {
                    // Slave mode began: the reader's first request may follow in the same block.
                    pollAnswerer(t, bytes: Array(rest), now: now)
                    return
                }
            case .fault(let f): count(f); failTry(now: now)
            case .request: break
            }
            statistics.bytesIgnored += rest.count
            return
        }
        if !decoder.isIdle {
            if now - lastDelivery > idleLimit(t) {
                _ = decoder.interByteTimeout()
                count(.interByteTimeout)
                failTry(now: now)
            }
        } else if let deadline = outstanding?.deadline, now >= deadline {
            statistics.sendTimeouts += 1
            failTry(now: deadline)
        }
    }

    private func transmit(_ t: any VendorByteTransport, now: Int64) {
        guard var o = outstanding, let bytes = try? o.request.encoded() else { return }
        t.send(bytes)
        let ms = timing.responseTimeoutMs(requestBytes: bytes.count, extraMs: o.extraMs,
                                          sampleRate: t.sampleRate, samplesPerBit: t.samplesPerBit)
        o.deadline = now + VendorPacketTiming.samples(ms: ms, sampleRate: t.sampleRate)
        outstanding = o
        decoder.reset()
    }

    private func failTry(now: Int64) {
        guard var o = outstanding else { return }
        decoder.reset()
        o.triesLeft -= 1
        o.deadline = nil
        if o.triesLeft <= 0 || !o.retries {
            outstanding = nil
            if o.retries {
                statistics.sendFailures += 1
                events.append(.failed(o.request, .retriesExhausted(command: Int(o.request.command), tries: max(1, timing.tries))))
            } else {
                events.append(.completed(o.request, .nack))
            }
            if o.endsSlaveMode { exitSlaveMode() }
            return
        }
        statistics.sendRetries += 1
        o.resendAt = now + VendorPacketTiming.samples(ms: timing.retryDelayMs, sampleRate: sampleRate)
        outstanding = o
    }

    private func finish(with response: ResponsePacket, now: Int64) {
        guard let o = outstanding else { return }
        if response.isNack {
            failTry(now: now)
            return
        }
        statistics.responsesReceived += 1
        var delivered = response
        if response.id == 6, role == .host {
            // ACK_6 from a reader: success; with two data bytes it asks for that many ms of
            // quiet. (Answers the host gives in slave mode use id 6 for other things.)
            if response.data.count == 2 {
                let ms = Int(response.data[0]) | Int(response.data[1]) << 8
                quietUntil = now + VendorPacketTiming.samples(ms: ms, sampleRate: sampleRate)
            }
            delivered.id = 0
        }
        outstanding = nil
        decoder.reset()
        events.append(.completed(o.request, delivered))
        if let s = o.slave, delivered.id == 0 {
            slave = s
            switchMode(slave: true)
            slaveDeadline = now + VendorPacketTiming.samples(
                ms: timing.slaveTimeoutMs(s, answerBytes: 0, sampleRate: sampleRate, samplesPerBit: samplesPerBit),
                sampleRate: sampleRate)
            events.append(.enteredSlaveMode)
        }
        if o.endsSlaveMode { exitSlaveMode() }
    }

    // MARK: The answerer

    private func pollAnswerer(_ t: any VendorByteTransport, bytes: [UInt8], now: Int64) {
        if let reply = pendingReply, let request = awaitingAnswer {
            pendingReply = nil
            awaitingAnswer = nil
            send(reply, to: request, on: t, now: now)
        }
        if awaitingAnswer != nil || now < quietUntil {
            statistics.bytesIgnored += bytes.count
            return
        }
        if !bytes.isEmpty { lastDelivery = now }
        for (i, b) in bytes.enumerated() {
            if decoder.isIdle { slaveDeadline = nil }
            guard let out = decoder.feed(b) else { continue }
            switch out {
            case .request(let r):
                received(r, on: t, now: now)
                if awaitingAnswer != nil || isRequester {
                    statistics.bytesIgnored += bytes.count - i - 1
                    return
                }
            case .fault(let f):
                count(f)
                rearmSlaveTimer(t, answerBytes: 0, now: now)
            case .response: break
            }
        }
        if !decoder.isIdle {
            if now - lastDelivery > idleLimit(t) {
                _ = decoder.interByteTimeout()
                count(.interByteTimeout)
                rearmSlaveTimer(t, answerBytes: 0, now: now)
            }
        } else if let deadline = slaveDeadline, now >= deadline, role == .host, isInSlaveMode {
            let s = slave ?? .inventory
            let ms = timing.slaveTimeoutMs(s, answerBytes: 0, sampleRate: t.sampleRate, samplesPerBit: t.samplesPerBit)
            switchMode(slave: false)
            events.append(.exitedSlaveMode(.slaveModeTimedOut(afterSamples: VendorPacketTiming.samples(ms: ms, sampleRate: t.sampleRate))))
        }
    }

    private func received(_ request: RequestPacket, on t: any VendorByteTransport, now: Int64) {
        statistics.packetsReceived += 1
        if request.isRetry, let last = lastRequest, let reply = lastReply,
           last.command == request.command, last.payload == request.payload {
            statistics.duplicatesAnswered += 1
            events.append(.requestReceived(request, duplicate: true))
            transmit(reply, on: t, now: now)
            return
        }
        events.append(.requestReceived(request, duplicate: false))
        lastRequest = request
        lastReply = nil
        if let reply = onRequest(request), (try? reply.response.encoded()) != nil {
            send(reply, to: request, on: t, now: now)
        } else {
            awaitingAnswer = request
        }
    }

    private func send(_ reply: VendorReply, to request: RequestPacket, on t: any VendorByteTransport, now: Int64) {
        lastRequest = request
        lastReply = reply
        if reply.response.isNack { statistics.nacksReturned += 1 }
        transmit(reply, on: t, now: now)
    }

    private func transmit(_ reply: VendorReply, on t: any VendorByteTransport, now: Int64) {
        guard let bytes = try? reply.response.encoded() else { return }
        t.send(bytes)
        decoder.reset()
        switch role {
        case .host where isInSlaveMode:
            if reply.endsSlaveMode {
                switchMode(slave: false)
                events.append(.exitedSlaveMode(nil))
            } else {
                rearmSlaveTimer(t, answerBytes: bytes.count, now: now)
            }
        case .device where reply.entersSlaveMode && !isInSlaveMode:
            enterSlaveMode()
        default:
            break
        }
    }

    private func rearmSlaveTimer(_ t: any VendorByteTransport, answerBytes: Int, now: Int64) {
        guard role == .host, isInSlaveMode, let s = slave else { return }
        let ms = timing.slaveTimeoutMs(s, answerBytes: answerBytes, sampleRate: t.sampleRate, samplesPerBit: t.samplesPerBit)
        slaveDeadline = now + VendorPacketTiming.samples(ms: ms, sampleRate: t.sampleRate)
    }

    // MARK: Shared

    private func switchMode(slave on: Bool) {
        isInSlaveMode = on
        if !on { slave = nil; slaveDeadline = nil }
        decoder = VendorPacketDecoder(expecting: isRequester ? .responses : .requests)
        lastRequest = nil
        lastReply = nil
        awaitingAnswer = nil
        pendingReply = nil
    }

    /// Silence that abandons a packet: the vendor's 20 bit times counted from the end of the
    /// last byte, measured here from the poll that delivered it; a byte is only seen once
    /// complete, so another 10 bit times (the byte that may be on its way) are allowed.
    private func idleLimit(_ t: any VendorByteTransport) -> Int64 {
        Int64(timing.interByteIdleBits + 10) * Int64(samplesPerBit)
    }

    private func count(_ fault: VendorPacketFault) {
        switch fault {
        case .badCodeByte: statistics.internalCRCMismatches += 1
        case .badCRC: statistics.crcMismatches += 1
        case .badLength, .interByteTimeout: statistics.invalidPackets += 1
        }
        events.append(.fault(fault))
    }

    private func dropEverything(_ error: VendorPacketError) {
        if let o = outstanding {
            outstanding = nil
            events.append(.failed(o.request, o.queued ? error : .notConnected))
        }
        if isInSlaveMode {
            switchMode(slave: false)
            events.append(.exitedSlaveMode(error))
        }
        decoder.reset()
    }
}

/// One owner, one thread (see ``PacketEndpoint``).
@available(*, unavailable)
extension PacketEndpoint: Sendable {}
