import GrokBasics
import Foundation
import GrokAudio
import GrokLink
import Testing

/// A host ``VendorLink`` whose two directions are recorded: what it played and what it
/// captured, sample for sample.
final class RecordedHost: SamplePump {
    let link: VendorLink
    var played: [Float] = []
    var captured: [Float] = []
    init(_ link: VendorLink) { self.link = link }
    var now: Int64 { link.now }
    var sampleRate: Int { link.sampleRate }
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        captured += input
        link.process(input: input, output: output)
        played += output
    }
}

/// A recorded session: a host sends `requests` one after the other to a device that answers
/// an empty request ACK_0 and any other with its payload reversed (id 1).
struct RecordedSession {
    var played: [Float]
    var captured: [Float]
    var requests: [RequestPacket]
    var responses: [ResponsePacket]

    static func answer(_ request: RequestPacket) -> ResponsePacket {
        request.payload.isEmpty ? .ack : ResponsePacket(id: 1, data: request.payload.reversed())
    }

    static func record(samplesPerBit spb: Int, sampleRate: Int = 44_100, requests: [RequestPacket],
                       cable: CableConfiguration = .clean) throws -> RecordedSession {
        let device = try VendorLink(role: .device, sampleRate: sampleRate)
        device.packets.onRequest = { VendorReply(answer($0)) }
        try device.start()
        let host = RecordedHost(try VendorLink(role: .host, sampleRate: sampleRate))
        let port = SimulatedCablePort(name: "scan", sampleRate: sampleRate, configuration: cable, peer: device)
        let driver = LinkDriver(port: port, engine: host)
        try host.link.open(samplesPerBit: spb)
        #expect(try driver.run(forAtMost: 3) { host.link.isConnected && device.isConnected })
        var responses: [ResponsePacket] = []
        for request in requests {
            try host.link.send(command: request.command, payload: request.payload)
            var done = false
            _ = try driver.run(forAtMost: 60) {
                for case .packet(let event) in host.link.drainEvents() {
                    if case .completed(_, let r) = event { responses.append(r); done = true }
                    if case .failed = event { done = true }
                }
                return done
            }
        }
        // A little quiet line at the end, as a recording would have.
        _ = try driver.run(forAtMost: 0.1) { false }
        return RecordedSession(played: host.played, captured: host.captured, requests: requests, responses: responses)
    }
}

@Suite("Finding vendor packets in a recording")
struct VendorPacketScannerTests {
    static let requests: [RequestPacket] = [
        RequestPacket(command: 0x00),
        RequestPacket(command: 0x03),
        RequestPacket(command: 0x10, payload: Array(0..<24)),
        RequestPacket(command: 0x01, payload: [0x00, 0x10] + (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37) }),
        RequestPacket(command: 0x11, payload: [0x55]),
    ]

    static func scan(_ samples: [Float], rate: Int = 44_100, chunks: (Int) -> Int = { $0 }) -> [ScannedVendorPacket] {
        var scanner = VendorPacketScanner(sampleRate: rate)
        samples.withUnsafeBufferPointer { all in
            var i = 0
            var k = 0
            while i < all.count {
                let n = min(max(1, chunks(k)), all.count - i)
                scanner.scan(UnsafeBufferPointer(rebasing: all[i..<(i + n)]))
                i += n
                k += 1
            }
        }
        return scanner.packets
    }

    @Test("each direction of a session decodes to exactly the packets sent, at the setting it ran, for every setting at 44.1 kHz",
          arguments: VendorModemSetting.supportedSamplesPerBit)
    func everySetting(spb: Int) throws {
        let session = try RecordedSession.record(samplesPerBit: spb, requests: Self.requests)
        #expect(session.responses.count == Self.requests.count)
        let played = Self.scan(session.played)
        let captured = Self.scan(session.captured)
        #expect(played.map(\.content) == Self.requests.map { .request($0) }, "\(spb) spb: \(played)")
        #expect(captured.map(\.content) == session.responses.map { .response($0) }, "\(spb) spb: \(captured)")
        #expect((played + captured).allSatisfy { $0.samplesPerBit == spb && $0.isWhole })
        // The bytes are the packet's own, and the end sample lies after its bytes' air time.
        for p in played {
            if case .request(let r) = p.content { #expect(p.bytes == (try r.encoded())) }
            #expect(p.endSample >= Int64(p.bytes.count * 10 * spb))
        }
    }

    @Test("48 kHz recordings decode too", arguments: [8, 12, 72])
    func at48kHz(spb: Int) throws {
        let session = try RecordedSession.record(samplesPerBit: spb, sampleRate: 48_000, requests: Self.requests)
        #expect(Self.scan(session.played, rate: 48_000).map(\.content) == Self.requests.map { .request($0) })
        #expect(Self.scan(session.captured, rate: 48_000).map(\.content) == session.responses.map { .response($0) })
    }

    @Test("one sample at a time, all at once and random chunks find the same packets at the same samples")
    func chunkingDoesNotMatter() throws {
        let session = try RecordedSession.record(samplesPerBit: 12, requests: Self.requests)
        let whole = Self.scan(session.captured)
        var rng = SplitMix64(seed: 5)
        #expect(Self.scan(session.captured, chunks: { _ in Int(rng.next() % 3000) }) == whole)
        #expect(Self.scan(Array(session.captured.prefix(200_000)), chunks: { _ in 1 })
            == Self.scan(Array(session.captured.prefix(200_000))))
        #expect(!whole.isEmpty)
    }

    /// `bursts` as our modulator plays them at 12 spb, 100 ms of idle carrier between them.
    static func synthesize(_ bursts: [[UInt8]]) throws -> [Float] {
        let setting = try VendorModemSetting(samplesPerBit: 12, sampleRate: 44_100)
        var modulator = VendorFSKModulator()
        modulator.setCarrier(.data(setting))
        var samples: [Float] = []
        var block = [Float](repeating: 0, count: 4410)
        for burst in bursts + [[]] {
            block.withUnsafeMutableBufferPointer { modulator.render(into: $0) }
            samples += block
            modulator.enqueue(burst)
            var long = [Float](repeating: 0, count: burst.count * 120)
            long.withUnsafeMutableBufferPointer { modulator.render(into: $0) }
            samples += long
        }
        return samples
    }

    @Test("a packet whose crc8 fails is reported damaged, as the kind it would have been; the others whole")
    func damagedPacket() throws {
        let good = try RequestPacket(command: 0x10, payload: Array(0..<24)).encoded()
        var bad = try RequestPacket(command: 0x11, payload: Array(0..<40)).encoded()
        bad[20] ^= 0x04
        let answer = try ResponsePacket(id: 2, data: [1, 2, 3]).encoded()
        let found = Self.scan(try Self.synthesize([good, bad, good, answer, [0xF0]]))
        #expect(found.map(\.isWhole) == [true, false, true, true, true], "\(found)")
        #expect(found[1].bytes == bad)
        if case .badCRC(.requests, let received, _) = found[1].content {
            #expect(received == bad.last)
        } else {
            Issue.record("not a bad crc8 request: \(found[1])")
        }
        #expect(found[3].content == .response(ResponsePacket(id: 2, data: [1, 2, 3])))
        #expect(found[4].content == .response(.ack))
        // The end sample is the last sample of the packet's last stop bit: 100 ms of idle, then the bytes.
        #expect(found[0].endSample == 4410 + Int64(good.count * 120) - 1)
    }

    @Test("bytes that are no packet of either kind are reported malformed")
    func malformed() throws {
        let good = try RequestPacket(command: 0x10, payload: Array(0..<24)).encoded()
        let found = Self.scan(try Self.synthesize([good, [0x91, 0x05, 0x01], good, good]))
        #expect(found.map(\.isWhole) == [true, false, true, true], "\(found)")
        #expect(found[1].content == .malformed)
    }

    /// Three requests and three responses with random commands, ids and payloads (0-39
    /// bytes), drawn from `seed`, as our modulator plays them at 12 spb.
    static func randomSession(seed: UInt64) throws -> (samples: [Float], sent: [[UInt8]]) {
        var rng = SplitMix64(seed: seed)
        var sent: [[UInt8]] = []
        for k in 0..<6 {
            let payload = (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            sent.append(k % 2 == 0 ? try RequestPacket(command: UInt8(rng.next() % 0x30), payload: payload).encoded()
                                   : try ResponsePacket(id: UInt8(rng.next() % 8), data: payload).encoded())
        }
        return (try synthesize(sent), sent)
    }

    /// At 10 spb the "1" tone is 12 spb's and the "0" tone near it, so a 10-spb demodulator reads
    /// 12-spb packets as bytes; in about one session in 200 one of its bursts parsed whole by
    /// chance (a two-byte request whose crc8 checked), and the old scanner then reported that
    /// setting's garbage beside the real packets (seeds 95 and 383 here; CI once saw it in
    /// `audio decode` of a real session).
    @Test("a wrong setting's bytes that parse whole by chance, where a stronger setting found the packet, are not reported")
    func wrongSettingIsNotReported() throws {
        for seed in UInt64(0)..<400 {
            let (samples, sent) = try Self.randomSession(seed: seed)
            let found = Self.scan(samples)
            #expect(found.map(\.bytes) == sent && found.allSatisfy { $0.samplesPerBit == 12 && $0.isWhole },
                    "seed \(seed): \(found)")
        }
    }

    @Test("silence, white noise and an unsupported sample rate hold no packets")
    func nothingInNoise() throws {
        #expect(Self.scan([Float](repeating: 0, count: 44_100)).isEmpty)
        var rng = SplitMix64(seed: 3)
        let samples = (0..<(5 * 44_100)).map { _ in Float(Double(rng.next() >> 11) / Double(1 << 53) * 0.6 - 0.3) }
        #expect(Self.scan(samples).isEmpty)
        #expect(VendorPacketScanner(sampleRate: 8_000).samplesPerBit.isEmpty)
    }
}

@Suite("Finding packets in a capture of the vendor's host library")
struct VendorCaptureScanTests {
    /// `Tests/VendorInterop/Fixtures/decode/vendorhost-connect-battery.wav`: the vendor host
    /// library (in the harness, real time) against `grokpeer`, steps `connect battery
    /// disconnect`, recorded by `vendorhost --record-tx/--record-rx` (left: what the library
    /// played, right: what it captured), 0.73 s at 44.1 kHz, 12 spb. The packets are those
    /// `grokpeer` logged in the `.peer.jsonl` beside it.
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../VendorInterop/Fixtures/decode/vendorhost-connect-battery.wav").standardizedFileURL.path

    @Test("the library's requests and grokpeer's answers come out whole, at 12 spb, in order")
    func vendorHostCapture() throws {
        let audio = try WAVFile.read(path: Self.fixture)
        try #require(audio.channels.count == 2 && audio.sampleRate == 44_100)
        func scan(_ samples: [Float]) -> [ScannedVendorPacket] {
            var scanner = VendorPacketScanner(sampleRate: 44_100)
            samples.withUnsafeBufferPointer { scanner.scan($0) }
            return scanner.packets
        }
        func hex(_ p: ScannedVendorPacket) -> String { p.bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
        let played = scan(audio.channels[0])
        let captured = scan(audio.channels[1])
        // GetVersion with the library's 5-byte payload, then GetBatteryLevel (one-byte form).
        #expect(played.map(hex) == ["80050614e80302d9", "031c"])
        #expect(played.map(\.content) == [.request(RequestPacket(command: 0x00, payload: [0x06, 0x14, 0xe8, 0x03, 0x02])),
                                          .request(RequestPacket(command: 0x03))])
        #expect(captured.map(hex) == ["781f061405000601080001fa550480004001112233445566778887d61200000800ea", "7805340cbe04575e"])
        #expect((played + captured).allSatisfy { $0.samplesPerBit == 12 && $0.isWhole })
        // Turn by turn: each answer ends after its request, the battery request after the
        // version's answer. (Not by a whole air time: the two recordings are not aligned to
        // the sample; the 35-byte answer ends 4142 samples after its request, 58 short of
        // its 4200 samples on the air, so the captured side runs at least 58 samples early.)
        #expect(captured[0].endSample > played[0].endSample)
        #expect(played[1].endSample > captured[0].endSample)
        #expect(captured[1].endSample > played[1].endSample)
    }
}
