import GrokAudio
@testable import GrokLink
import GrokBasics
import GrokTestSupport
import Testing

/// What happens to one byte on its way across ``PacketWire``.
enum WireFate: Equatable {
    case deliver
    case drop
    case corrupt(UInt8)
}

/// An in-memory cable between two ``VendorByteTransport`` ends with one sample clock: each
/// byte arrives 10 bit times after the line is free to carry it (UART framing, no gap), and
/// a schedule can drop or corrupt bytes by their index in each direction.
final class PacketWire {
    let sampleRate: Int
    let samplesPerBit: Int
    private(set) var now: Int64 = 0
    var isConnected = true
    let host: End
    let device: End

    init(sampleRate: Int = 44100, samplesPerBit: Int = 12) {
        self.sampleRate = sampleRate
        self.samplesPerBit = samplesPerBit
        host = End()
        device = End()
        host.wire = self
        device.wire = self
        host.peer = device
        device.peer = host
    }

    var byteTime: Int64 { Int64(10 * samplesPerBit) }

    func advance(_ samples: Int64) { now += samples }

    final class End: VendorByteTransport {
        unowned(unsafe) var wire: PacketWire!
        unowned(unsafe) var peer: End!
        /// Fate of the n-th byte this end sends (0-based, counted over the whole run).
        var fate: (Int) -> WireFate = { _ in .deliver }
        /// Every send with the sample it was queued at.
        private(set) var sends: [(at: Int64, bytes: [UInt8])] = []
        private(set) var sentCount = 0
        private var lineFreeAt: Int64 = 0
        fileprivate var inbox: [(at: Int64, byte: UInt8)] = []

        var now: Int64 { wire.now }
        var sampleRate: Int { wire.sampleRate }
        var samplesPerBit: Int { wire.samplesPerBit }
        var isConnected: Bool { wire.isConnected }
        var isSending: Bool { lineFreeAt > wire.now }

        func send(_ bytes: [UInt8]) {
            sends.append((wire.now, bytes))
            var t = max(wire.now, lineFreeAt)
            for b in bytes {
                t += wire.byteTime
                let f = fate(sentCount)
                sentCount += 1
                switch f {
                case .deliver: peer.inbox.append((t, b))
                case .drop: break
                case .corrupt(let mask): peer.inbox.append((t, b ^ mask))
                }
            }
            lineFreeAt = t
        }

        /// Puts raw bytes on the line from this end (line noise that decodes as bytes).
        func inject(_ bytes: [UInt8]) {
            var t = max(wire.now, lineFreeAt)
            for b in bytes { t += wire.byteTime; peer.inbox.append((t, b)) }
            lineFreeAt = t
        }

        func takeReceived() -> [UInt8] {
            let n = inbox.prefix { $0.at <= wire.now }.count
            defer { inbox.removeFirst(n) }
            return inbox.prefix(n).map(\.byte)
        }
    }
}

/// Two endpoints on a wire, pumped block by block: host first, then device, as the audio
/// loop would.
struct PacketBench {
    let wire: PacketWire
    let host: PacketEndpoint
    let device: PacketEndpoint
    var block: Int64
    var hostEvents: [(at: Int64, event: PacketEvent)] = []
    var deviceEvents: [(at: Int64, event: PacketEvent)] = []
    var onHostEvent: (PacketEvent) -> Void = { _ in }
    var onDeviceEvent: (PacketEvent) -> Void = { _ in }

    init(block: Int64 = 441, samplesPerBit: Int = 12) {
        wire = PacketWire(samplesPerBit: samplesPerBit)
        host = PacketEndpoint(role: .host)
        device = PacketEndpoint(role: .device)
        self.block = block
    }

    mutating func step() {
        wire.advance(block)
        for e in host.poll(wire.host) { hostEvents.append((wire.now, e)); onHostEvent(e) }
        for e in device.poll(wire.device) { deviceEvents.append((wire.now, e)); onDeviceEvent(e) }
    }

    /// Runs until `done` holds or `limit` samples have passed; returns whether `done` held.
    @discardableResult
    mutating func run(forAtMost limit: Int64, until done: (PacketBench) -> Bool) -> Bool {
        let end = wire.now + limit
        while wire.now < end {
            step()
            if done(self) { return true }
        }
        return false
    }

    mutating func run(for samples: Int64) { _ = run(forAtMost: samples) { _ in false } }

    var hostCompletions: [ResponsePacket] {
        hostEvents.compactMap { if case .completed(_, let r) = $0.event { r } else { nil } }
    }
}

/// Counts how often the device's layer above is asked, and answers with a function of the request.
final class CountingHandler {
    var calls: [RequestPacket] = []
    let answer: (RequestPacket) -> VendorReply?
    init(_ answer: @escaping (RequestPacket) -> VendorReply?) { self.answer = answer }
    func handle(_ r: RequestPacket) -> VendorReply? { calls.append(r); return answer(r) }
}

@Suite("Vendor packets: host and device endpoints")
struct VendorPacketEndpointTests {
    /// The samples the vendor's timers give at 44.1 kHz, 12 samples per bit (3675 bit/s),
    /// with the Android latency (500 + 500 ms), worked out by hand from the formulas:
    /// an 8-byte request takes 8 * 10000 / 3675 = 21 ms on the air; its answer must start
    /// within 21 + 300 + 1000 = 1321 ms = 1321 * 441 / 10 = 58256 samples; a failed try is
    /// resent 1000 + 100 = 1100 ms = 48510 samples later.
    static let timeout8Bytes: Int64 = 58256
    static let retryPause: Int64 = 48510

    @Test("a request and its long answer make the round trip, and the answer arrives on time")
    func roundTrip() throws {
        var bench = PacketBench()
        let handler = CountingHandler { r in VendorReply(ResponsePacket(id: 0, data: Array(r.payload.reversed()))) }
        bench.device.onRequest = handler.handle
        try bench.host.send(command: 0x00, payload: [0x06, 0x14, 0xE8, 0x03, 0x02])
        #expect(bench.run(forAtMost: 44100) { !$0.hostCompletions.isEmpty })
        #expect(bench.hostCompletions == [ResponsePacket(id: 0, data: [0x02, 0x03, 0xE8, 0x14, 0x06])])
        #expect(bench.wire.host.sends.map(\.bytes) == [[0x80, 0x05, 0x06, 0x14, 0xE8, 0x03, 0x02, 0xD9]])
        #expect(handler.calls == [RequestPacket(command: 0, payload: [0x06, 0x14, 0xE8, 0x03, 0x02])])
        // 8 request bytes + 8 response bytes at 120 samples each, plus at most a block of
        // latency on each side.
        let doneAt = try #require(bench.hostEvents.last?.at)
        #expect(doneAt >= 16 * 120 && doneAt <= 16 * 120 + 3 * 441)
        #expect(bench.host.statistics.packetsSent == 1)
        #expect(bench.host.statistics.responsesReceived == 1)
        #expect(bench.host.statistics.sendRetries == 0)
        #expect(bench.device.statistics.packetsReceived == 1)
        #expect(!bench.host.isSending)
    }

    @Test("a one-byte request is answered with a one-byte ACK")
    func oneByteExchange() throws {
        var bench = PacketBench()
        bench.device.onRequest = { _ in .ack }
        try bench.host.send(command: 0x03)
        #expect(bench.run(forAtMost: 44100) { !$0.hostCompletions.isEmpty })
        #expect(bench.hostCompletions == [.ack])
        #expect(bench.wire.host.sends.map(\.bytes) == [[0x03, 0x1C]])
        #expect(bench.wire.device.sends.map(\.bytes) == [[0xF0]])
    }

    @Test("one request at a time: a second send is refused until the first is answered")
    func oneOutstanding() throws {
        var bench = PacketBench()
        bench.device.onRequest = { _ in .ack }
        try bench.host.send(command: 0x03)
        #expect(throws: VendorPacketError.busy) { try bench.host.send(command: 0x03) }
        // The device answers requests in normal mode; it does not ask.
        #expect(throws: VendorPacketError.busy) { try bench.device.send(command: 0x01) }
        bench.run(forAtMost: 44100) { !$0.hostCompletions.isEmpty }
        try bench.host.send(command: 0x03)
    }

    @Test("an unanswered request is resent with the retry bit at the vendor's times, exactly, and fails after 8 tries")
    func retryTimingExact() throws {
        var bench = PacketBench(block: 1)
        bench.wire.host.fate = { _ in .drop } // nothing reaches the device
        try bench.host.send(command: 0x00, payload: [0x06, 0x14, 0xE8, 0x03, 0x02])
        let failed = bench.run(forAtMost: 1_000_000) { b in
            b.hostEvents.contains { if case .failed = $0.event { true } else { false } }
        }
        #expect(failed)
        let sends = bench.wire.host.sends
        #expect(sends.count == 8)
        let t0 = sends[0].at
        let period = Self.timeout8Bytes + Self.retryPause
        #expect(sends.map { $0.at - t0 } == (0..<8).map { Int64($0) * period })
        #expect(sends[0].bytes[0] == 0x80)
        #expect(sends.dropFirst().allSatisfy { $0.bytes == [0xC0, 0x05, 0x06, 0x14, 0xE8, 0x03, 0x02, 0xDF] })
        // The failure comes when the last try's answer is overdue.
        let failure = try #require(bench.hostEvents.last)
        #expect(failure.at - t0 == 7 * period + Self.timeout8Bytes)
        #expect(failure.event == .failed(RequestPacket(command: 0, payload: [0x06, 0x14, 0xE8, 0x03, 0x02], isRetry: true),
                                         .retriesExhausted(command: 0, tries: 8)))
        let s = bench.host.statistics
        #expect(s.packetsSent == 1)
        #expect(s.sendTimeouts == 8)
        #expect(s.sendRetries == 7)
        #expect(s.sendFailures == 1)
        #expect(!bench.host.isSending)
    }

    @Test("with audio blocks, a timer fires at the first block boundary at or after it is due")
    func retryTimingInBlocks() throws {
        var bench = PacketBench(block: 1024)
        bench.wire.host.fate = { _ in .drop }
        try bench.host.send(command: 0x00, payload: [0x06, 0x14, 0xE8, 0x03, 0x02])
        bench.run(for: 3 * 106_766)
        let sends = bench.wire.host.sends
        #expect(sends.count == 3)
        let t0 = sends[0].at
        // Due at t0 + 58256 (timeout), then 48510 after that due time: first boundary at or after.
        let due1 = t0 + Self.timeout8Bytes + Self.retryPause
        #expect(sends[1].at >= due1 && sends[1].at < due1 + 1024)
    }

    @Test("a NACK is retried like a lost answer (the vendor host does so), unless retries are off")
    func nackIsRetried() throws {
        var bench = PacketBench()
        bench.device.onRequest = { _ in .nack }
        try bench.host.send(command: 0x21)
        #expect(bench.run(forAtMost: 2_000_000) { b in b.hostEvents.contains { if case .failed = $0.event { true } else { false } } })
        #expect(bench.wire.host.sends.count == 8)
        #expect(bench.host.statistics.sendTimeouts == 0)
        #expect(bench.host.statistics.sendRetries == 7)
        // The device saw each resend as a retry of the same request: answered from its last reply.
        #expect(bench.device.statistics.duplicatesAnswered == 7)
        #expect(bench.device.statistics.nacksReturned == 1)

        var once = PacketBench()
        once.device.onRequest = { _ in .nack }
        try once.host.send(command: 0x21, retries: false)
        #expect(once.run(forAtMost: 100_000) { !$0.hostCompletions.isEmpty })
        #expect(once.hostCompletions == [.nack])
        #expect(once.wire.host.sends.count == 1)
    }

    @Test("a retried request whose answer was lost is answered again without being executed again")
    func lostAnswerAnsweredAgain() throws {
        var bench = PacketBench()
        let handler = CountingHandler { _ in VendorReply(ResponsePacket(id: 0, data: [0x11, 0x22, 0x33])) }
        bench.device.onRequest = handler.handle
        bench.wire.device.fate = { $0 == 2 ? .corrupt(0x01) : .deliver } // the first answer's data byte
        try bench.host.send(command: 0x0A, payload: [0x01, 0x01])
        #expect(bench.run(forAtMost: 300_000) { !$0.hostCompletions.isEmpty })
        #expect(bench.hostCompletions == [ResponsePacket(id: 0, data: [0x11, 0x22, 0x33])])
        #expect(handler.calls.count == 1)
        #expect(bench.device.statistics.packetsReceived == 2)
        #expect(bench.device.statistics.duplicatesAnswered == 1)
        #expect(bench.host.statistics.crcMismatches == 1)
        #expect(bench.host.statistics.sendRetries == 1)
        #expect(bench.wire.device.sends.count == 2)
        #expect(bench.wire.device.sends[0].bytes == bench.wire.device.sends[1].bytes)
        // The resend went out one retry pause after the bad answer was seen, retry bit set.
        #expect(bench.wire.host.sends[1].bytes[0] == 0xCA)
    }

    @Test("a request cut off mid-packet is abandoned after 20 idle bit times and answered on the retry")
    func interByteTimeout() throws {
        var bench = PacketBench(block: 64)
        let handler = CountingHandler { _ in .ack }
        bench.device.onRequest = handler.handle
        // Drop the request's last two bytes (data and crc8) on the first try.
        bench.wire.host.fate = { $0 == 3 || $0 == 4 ? .drop : .deliver }
        try bench.host.send(command: 0x0B, payload: [0x01, 0x02])
        #expect(bench.run(forAtMost: 300_000) { !$0.hostCompletions.isEmpty })
        #expect(bench.deviceFaultEvents == [.interByteTimeout])
        #expect(handler.calls.count == 1)
        #expect(bench.device.statistics.invalidPackets == 1)
        let fault = try #require(bench.deviceEvents.first { $0.event == .fault(.interByteTimeout) })
        // Bytes 0..2 arrived by 3 * 120 = 360 samples; abandoned within 30 bit times of the
        // block that brought the last one (20 idle + 10 for a byte on its way).
        #expect(fault.at > 360 + 20 * 12 && fault.at <= 360 + 64 + 30 * 12 + 64)
    }

    @Test("line noise before a request is cleared by the faults it causes; the retry is answered")
    func garbageResync() throws {
        var rng = SplitMix64(seed: 77)
        for _ in 0..<20 {
            var bench = PacketBench()
            let handler = CountingHandler { r in VendorReply(ResponsePacket(id: 0, data: r.payload)) }
            bench.device.onRequest = handler.handle
            bench.wire.host.inject(rng.bytes(Int.random(in: 1...12, using: &rng)))
            let payload = rng.bytes(6)
            try bench.host.send(command: 0x0C, payload: payload)
            #expect(bench.run(forAtMost: 700_000) { !$0.hostCompletions.isEmpty })
            #expect(bench.hostCompletions == [ResponsePacket(id: 0, data: payload)])
            #expect(handler.calls.map(\.payload) == [payload])
        }
    }

    @Test("over a line that damages 1% of the bytes, 100 exchanges all complete, each executed once")
    func noisyLine() throws {
        var bench = PacketBench()
        let handler = CountingHandler { r in VendorReply(ResponsePacket(id: 2, data: r.payload + [0xAA])) }
        bench.device.onRequest = handler.handle
        var hostRNG = SplitMix64(seed: 1)
        var deviceRNG = SplitMix64(seed: 2)
        func fate(_ rng: inout SplitMix64) -> WireFate {
            switch UInt8.random(in: 0...199, using: &rng) {
            case 0: .drop
            case 1: .corrupt(UInt8.random(in: 1...255, using: &rng))
            default: .deliver
            }
        }
        bench.wire.host.fate = { _ in fate(&hostRNG) }
        bench.wire.device.fate = { _ in fate(&deviceRNG) }
        var answers: [ResponsePacket] = []
        for i in 0..<100 {
            let payload = [UInt8(i)] + [UInt8](repeating: UInt8(i), count: i % 20)
            try bench.host.send(command: UInt8(i % 64), payload: payload)
            let before = bench.hostEvents.count
            #expect(bench.run(forAtMost: 2_000_000) { $0.hostEvents.count > before && !$0.host.isSending })
            if case .completed(_, let r) = bench.hostEvents.last?.event { answers.append(r) }
        }
        #expect(answers.count == 100)
        #expect(answers == (0..<100).map { ResponsePacket(id: 2, data: [UInt8($0)] + [UInt8](repeating: UInt8($0), count: $0 % 20) + [0xAA]) })
        #expect(handler.calls.count == 100)
        #expect(bench.host.statistics.sendRetries > 0)
        #expect(bench.host.statistics.sendFailures == 0)
    }

    @Test("an answer given later, outside the handler, goes out when it is given")
    func deferredAnswer() throws {
        var bench = PacketBench()
        bench.device.onRequest = { _ in nil }
        try bench.host.send(command: 0x01, payload: [0x00, 0x10])
        bench.run(for: 10_000)
        #expect(bench.device.requestAwaitingAnswer == RequestPacket(command: 0x01, payload: [0x00, 0x10]))
        #expect(bench.wire.device.sends.isEmpty)
        try bench.device.answer(.ack)
        #expect(bench.run(forAtMost: 10_000) { !$0.hostCompletions.isEmpty })
        #expect(bench.hostCompletions == [.ack])
        #expect(throws: VendorPacketError.noRequestWaiting) { try bench.device.answer(.ack) }
    }

    @Test("ACK_6 with two bytes is a success that asks the host for that many ms of quiet")
    func ack6() throws {
        var bench = PacketBench()
        bench.device.onRequest = { _ in VendorReply(ResponsePacket(id: 6, data: [0xF4, 0x01])) } // 500 ms
        try bench.host.send(command: 0x02, payload: [1])
        #expect(bench.run(forAtMost: 44100) { !$0.hostCompletions.isEmpty })
        #expect(bench.hostCompletions == [ResponsePacket(id: 0, data: [0xF4, 0x01])])
        // The host keeps quiet for the 500 ms (22050 samples): a request queued now goes out
        // once they are over, and is answered at once.
        bench.device.onRequest = { _ in .ack }
        let quietFrom = bench.wire.now
        try bench.host.send(command: 0x03)
        #expect(bench.run(forAtMost: 300_000) { $0.hostCompletions.count == 2 })
        let second = try #require(bench.wire.host.sends.last)
        #expect(second.bytes == [0x03, 0x1C])
        #expect(second.at >= quietFrom + 22050 && second.at < quietFrom + 22050 + 441)
        #expect(bench.host.statistics.sendRetries == 0)
    }

    @Test("slave mode end to end: inventory start, reads, a piggybacked host request, ACK_1 stop, 00 completed")
    func slaveModeEndToEnd() throws {
        var bench = PacketBench()
        // The reader: ACK_0 to an inventory start, then it becomes the requester.
        bench.device.onRequest = { r in r.command == 0x07 ? VendorReply(.ack, entersSlaveMode: true) : .nack }
        // The host's layer above: a tag read rides in the answer to the next reader packet;
        // the application stops after the third reader packet.
        var hostAnswers: [RequestPacket] = []
        var pendingRead: [UInt8]? = [0x00, 0x02, 0xAB, 0xCD, 0x03, 0x00, 0x00, 0x04, 0x04]
        var stopRequested = false
        bench.host.onRequest = { r in
            hostAnswers.append(r)
            if r.command == 0x03 { stopRequested = true } // the application stops the inventory now
            if r.command == 0x00 { return VendorReply(.ack, endsSlaveMode: true) }
            if let read = pendingRead { pendingRead = nil; return VendorReply(ResponsePacket(id: 6, data: read)) }
            if stopRequested { return VendorReply(ResponsePacket(id: 1)) }
            if r.command == 0x01 { return VendorReply(ResponsePacket(id: 0, data: [0x02])) }
            return .ack
        }
        // The reader's script: what it sends after each answer.
        let readerScript: [(UInt8, [UInt8])] = [
            (0x01, [0x00, 0x01, 0x01, 0x01, 0x5A, 0x0C] + [UInt8](repeating: 0x30, count: 12)), // first read
            (0x05, [0x02]),                                                                      // ping
            (0x06, [0x00, 0x02, 0xAB, 0xCD, 0xBE, 0xEF]),                                         // tag-access result
            (0x03, [0x03, 0x01, 0x02, 0x55]),                                                    // subsequent read
        ]
        var step = 0
        var readerGot: [ResponsePacket] = []
        let device = bench.device
        func readerNext() {
            if step < readerScript.count {
                try? device.send(command: readerScript[step].0, payload: readerScript[step].1)
            } else {
                try? device.send(command: 0x00, payload: [0x00, 0x10, 0x00], endsSlaveMode: true)
            }
            step += 1
        }
        bench.onDeviceEvent = { e in
            switch e {
            case .enteredSlaveMode: readerNext()
            case .completed(_, let r):
                readerGot.append(r)
                if r.id == 1 { step = readerScript.count } // stop asked: completed comes next
                if device.isInSlaveMode { readerNext() }
            default: break
            }
        }
        try bench.host.send(command: 0x07, payload: [0xB1, 0x16, 0x08], slaveMode: .inventory)
        #expect(bench.run(forAtMost: 200_000) { b in
            b.hostEvents.contains { $0.event == .exitedSlaveMode(nil) } && b.deviceEvents.contains { $0.event == .exitedSlaveMode(nil) }
        })
        #expect(bench.hostEvents.map(\.event).contains(.enteredSlaveMode))
        #expect(hostAnswers.map(\.command) == [0x01, 0x05, 0x06, 0x03, 0x00])
        #expect(readerGot == [
            ResponsePacket(id: 6, data: [0x00, 0x02, 0xAB, 0xCD, 0x03, 0x00, 0x00, 0x04, 0x04]), // piggybacked read
            .ack, .ack, ResponsePacket(id: 1), .ack,
        ])
        // The first read's answer on the wire is the 6-id long form 1e ...
        #expect(bench.wire.host.sends[1].bytes.first == 0x1E)
        #expect(!bench.host.isInSlaveMode)
        #expect(!bench.device.isInSlaveMode)
        #expect(bench.deviceEvents.map(\.event).contains(.exitedSlaveMode(nil)))
        // Back in normal mode, the host asks again.
        bench.device.onRequest = { _ in .ack }
        try bench.host.send(command: 0x03)
        let before = bench.hostCompletions.count
        #expect(bench.run(forAtMost: 44100) { $0.hostCompletions.count > before })
        // While in slave mode the host could not ask for anything itself.
        #expect(bench.host.statistics.packetsReceived == 5)
    }

    /// Puts the bench in slave mode: the host asks for an inventory, the device says ACK_0.
    static func inSlaveMode(_ bench: inout PacketBench) throws {
        bench.device.onRequest = { _ in VendorReply(.ack, entersSlaveMode: true) }
        try bench.host.send(command: 0x07, payload: [0xB1], slaveMode: .inventory)
        #expect(bench.run(forAtMost: 44100) { $0.host.isInSlaveMode && $0.device.isInSlaveMode })
    }

    @Test("in slave mode a reader request whose host answer was lost is answered again, not handed up twice")
    func slaveModeDuplicate() throws {
        var bench = PacketBench()
        try Self.inSlaveMode(&bench)
        let handler = CountingHandler { r in VendorReply(ResponsePacket(id: 0, data: [r.payload[0] &+ 1])) }
        bench.host.onRequest = handler.handle
        let sentBefore = bench.wire.host.sentCount
        // The host's first answer (78 01 xx crc) loses its data byte.
        bench.wire.host.fate = { $0 == sentBefore + 2 ? .drop : .deliver }
        try bench.device.send(command: 0x05, payload: [0x41])
        #expect(bench.run(forAtMost: 300_000) { b in b.deviceEvents.contains { if case .completed(let q, _) = $0.event { q.command == 5 } else { false } } })
        #expect(handler.calls.count == 1)
        #expect(bench.host.statistics.duplicatesAnswered == 1)
        #expect(bench.device.statistics.sendRetries == 1)
        let done = bench.deviceEvents.compactMap { if case .completed(let q, let r) = $0.event, q.command == 5 { r } else { nil } }
        #expect(done == [ResponsePacket(id: 0, data: [0x42])])
        #expect(bench.host.isInSlaveMode)
    }

    @Test("in slave mode the host ignores a garbled reader request (it never NACKs one) and answers its retry")
    func slaveModeGarbled() throws {
        var bench = PacketBench()
        try Self.inSlaveMode(&bench)
        let handler = CountingHandler { _ in .ack }
        bench.host.onRequest = handler.handle
        let hostSendsBefore = bench.wire.host.sends.count
        let sentBefore = bench.wire.device.sentCount
        bench.wire.device.fate = { $0 == sentBefore + 3 ? .corrupt(0x10) : .deliver } // its crc8
        try bench.device.send(command: 0x05, payload: [0x01])
        #expect(bench.run(forAtMost: 300_000) { b in b.deviceEvents.contains { if case .completed(let q, _) = $0.event { q.command == 5 } else { false } } })
        #expect(bench.hostEvents.contains { if case .fault(.badCRC) = $0.event { true } else { false } })
        #expect(handler.calls == [RequestPacket(command: 0x05, payload: [0x01], isRetry: true)])
        // One answer only, to the retry: nothing was sent back for the garbled try.
        #expect(bench.wire.host.sends.count == hostSendsBefore + 1)
        #expect(bench.host.isInSlaveMode)
    }

    @Test("bytes that arrive when the host expects nothing are ignored, not taken as the next answer")
    func strayBytesIgnored() throws {
        var bench = PacketBench()
        bench.wire.device.inject([0xF0, 0xE1])
        bench.run(for: 4410)
        bench.device.onRequest = { _ in VendorReply(ResponsePacket(id: 2)) }
        try bench.host.send(command: 0x09, payload: [0x01])
        #expect(bench.run(forAtMost: 44100) { !$0.hostCompletions.isEmpty })
        #expect(bench.hostCompletions == [ResponsePacket(id: 2)])
        #expect(bench.host.statistics.bytesIgnored == 2)
    }

    @Test("in slave mode the host refuses to send its own requests: they ride in its answers")
    func noRequestsInSlaveMode() throws {
        var bench = PacketBench()
        bench.device.onRequest = { _ in VendorReply(.ack, entersSlaveMode: true) }
        try bench.host.send(command: 0x07, payload: [1], slaveMode: .inventory)
        #expect(bench.run(forAtMost: 44100) { $0.host.isInSlaveMode })
        #expect(throws: VendorPacketError.busy) { try bench.host.send(command: 0x03) }
    }

    @Test("a reader that falls silent in slave mode loses the link 3.3 s after the host's last answer")
    func slaveModeTimeout() throws {
        var bench = PacketBench(block: 1)
        bench.device.onRequest = { _ in VendorReply(.ack, entersSlaveMode: true) }
        var pinged = false
        let device = bench.device
        bench.onDeviceEvent = { e in
            if e == .enteredSlaveMode, !pinged { pinged = true; try? device.send(command: 0x05, payload: [0x01]) }
        }
        try bench.host.send(command: 0x07, payload: [1], slaveMode: .inventory)
        #expect(bench.run(forAtMost: 400_000) { b in
            b.hostEvents.contains { if case .exitedSlaveMode(.some) = $0.event { true } else { false } }
        })
        // The host answered the ping with f0 (1 byte: 10000 / 3675 = 2 ms of air time), so
        // the reader had 2000 + 2 + 300 + 1000 = 3302 ms = 145618 samples from that answer.
        let answer = try #require(bench.wire.host.sends.last)
        #expect(answer.bytes == [0xF0])
        let lost = try #require(bench.hostEvents.last)
        #expect(lost.at - answer.at == 145_618)
        #expect(!bench.host.isInSlaveMode)
    }

    @Test("noise on the line in every mode never traps an endpoint, and both still talk afterwards")
    func noiseInEveryMode() throws {
        var rng = SplitMix64(seed: 99)
        var bench = PacketBench(block: 256)
        let handed = CountingHandler { _ in .ack }
        bench.device.onRequest = handed.handle
        // Device answering, host idle: 20000 random bytes each way.
        bench.wire.host.inject(rng.bytes(20000))
        bench.wire.device.inject(rng.bytes(20000))
        bench.run(for: 20000 * 120 + 44100)
        // Whatever the device took for requests, it answered them with the handler's ACK.
        #expect(bench.device.statistics.packetsReceived == handed.calls.count)
        // Slave mode with noise from the reader's side: the host ignores it or answers it.
        try Self.inSlaveMode(&bench)
        bench.wire.device.inject(rng.bytes(2000))
        bench.run(for: 2000 * 120)
        // Normal again (a silent reader ends slave mode), then a clean exchange works.
        bench.run(for: 200_000)
        #expect(!bench.host.isInSlaveMode)
        bench.device.exitSlaveMode()
        bench.device.onRequest = { _ in VendorReply(ResponsePacket(id: 0, data: [7])) }
        bench.run(for: 44100)
        let before = bench.hostCompletions.count
        try bench.host.send(command: 0x03)
        #expect(bench.run(forAtMost: 300_000) { $0.hostCompletions.count > before })
        #expect(bench.hostCompletions.last == ResponsePacket(id: 0, data: [7]))
    }

    @Test("a connection that drops fails the outstanding request and ends slave mode")
    func connectionLost() throws {
        var bench = PacketBench()
        bench.wire.host.fate = { _ in .drop }
        try bench.host.send(command: 0x03)
        bench.run(for: 4410)
        bench.wire.isConnected = false
        bench.run(for: 441)
        #expect(bench.hostEvents.map(\.event) == [.failed(RequestPacket(command: 3), .connectionLost)])
        #expect(!bench.host.isSending)
    }
}

extension PacketBench {
    fileprivate var deviceFaultEvents: [VendorPacketFault] {
        deviceEvents.compactMap { if case .fault(let f) = $0.event { f } else { nil } }
    }
}
