import GrokAudio
@testable import GrokLink
import Testing

@Suite("Frames and CRCs")
struct FrameTests {
    @Test("CRC check values match the catalogued ones")
    func checkValues() {
        let check = Array("123456789".utf8)
        #expect(LinkCRC.crc32c(check) == 0xE306_9283)
        #expect(LinkCRC.crc8(check) == 0xDF)
        // Continuing a CRC equals computing it in one go.
        #expect(LinkCRC.crc32c(check[4...], seed: LinkCRC.crc32c(check[..<4])) == 0xE306_9283)
    }

    static func sampleFrames() -> [Frame] {
        var rng = SplitMix64(seed: 3)
        var frames = [Frame(type: .ack, ack: 9), Frame(type: .nack, seq: 200, ack: 1)]
        for type in FrameType.allCases {
            let n = Int(rng.next() % 300)
            frames.append(Frame(type: type, flags: UInt8(rng.next() % 8), seq: UInt8(truncatingIfNeeded: rng.next()),
                                ack: UInt8(truncatingIfNeeded: rng.next()),
                                payload: (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
        }
        frames.append(Frame(type: .data, payload: [UInt8](repeating: 0xFF, count: Frame.maxPayload)))
        return frames
    }

    @Test("the decoder takes frames byte by byte, whole, and in random chunks")
    func dripFeed() {
        let frames = Self.sampleFrames()
        let stream = frames.map { $0.encoded() }
        // One byte at a time.
        var decoder = FrameDecoder()
        var got: [Frame] = []
        for bytes in stream {
            for b in bytes {
                if case .frame(let f) = decoder.feed(b) { got.append(f) }
            }
        }
        #expect(got == frames)
        // Random chunks through a fresh decoder per frame boundary don't matter: the decoder is
        // byte-incremental, so chunking is only the caller's loop; check the count of needMore.
        var rng = SplitMix64(seed: 11)
        got = []
        let flat = stream.flatMap { $0 }
        var i = 0
        while i < flat.count {
            let n = 1 + Int(rng.next() % 97)
            for b in flat[i..<min(flat.count, i + n)] {
                if case .frame(let f) = decoder.feed(b) { got.append(f) }
            }
            i += n
        }
        #expect(got == frames)
    }

    @Test("a damaged header or body is reported, never accepted")
    func damage() {
        let frame = Frame(type: .data, seq: 5, ack: 6, payload: Array(0..<40))
        let good = frame.encoded()
        for index in good.indices {
            for bit in 0..<8 {
                var bytes = good
                bytes[index] ^= 1 << UInt8(bit)
                var decoder = FrameDecoder()
                var result = FrameDecoder.Output.needMore
                for b in bytes {
                    result = decoder.feed(b)
                    if result != .needMore { break }
                }
                if case .frame = result { Issue.record("flip at byte \(index) bit \(bit) accepted") }
            }
        }
    }

    @Test("random garbage never traps and never yields a frame with a bad CRC")
    func garbage() {
        var rng = SplitMix64(seed: 99)
        var decoder = FrameDecoder()
        var frames = 0
        for _ in 0..<200_000 {
            if case .frame(let f) = decoder.feed(UInt8(truncatingIfNeeded: rng.next())) {
                frames += 1
                #expect(f.payload.count <= Frame.maxPayload)
            }
        }
        #expect(frames == 0)
    }

    @Test("the sync word stands clear of the preamble and of itself shifted")
    func syncDistance() {
        let sync = FM0Modulator.syncWord
        for shift in 1..<32 {
            // What the receiver's register holds `shift` bits before the sync completes:
            // preamble ones followed by the sync's first bits.
            let early = (UInt32.max << UInt32(32 - shift)) | (sync >> UInt32(shift))
            #expect((early ^ sync).nonzeroBitCount > 2 * FM0Demodulator.maxSyncErrors + 1, "shift \(shift)")
        }
    }
}

@Suite("Modem")
struct ModemTests {
    static let rates = [44_100, 48_000]

    @Test("every mode round-trips at 44.1 and 48 kHz, in any chunking", arguments: LinkMode.ladder, rates)
    func roundTrip(mode: LinkMode, rate: Int) {
        var synth = FrameSynthesizer(mode: mode, sampleRate: rate)
        var audio = [Float](repeating: 0, count: 100)
        let frames = FrameTests.sampleFrames()
        for f in frames { synth.append(f, preambleBits: 16, to: &audio) }
        audio += [Float](repeating: 0, count: 200)
        // All at once.
        let whole = FrameScanner(mode: mode, sampleRate: rate)!
        whole.scan(audio)
        #expect(whole.found.compactMap(\.frame) == frames)
        // Below 3 samples per bit a half-bit spans 1.25 samples and area sampling blurs its
        // edges: every bit still decides right, with less margin.
        let margin = mode.samplesPerBit >= 3 ? 0.9 : 0.75
        #expect(whole.found.allSatisfy { $0.status == .ok && $0.quality > margin })
        // Random chunks, including single samples.
        var rng = SplitMix64(seed: UInt64(rate) + UInt64(mode.samplesPerBit * 2))
        let chunked = FrameScanner(mode: mode, sampleRate: rate)!
        var i = 0
        while i < audio.count {
            let n = rng.next() % 5 == 0 ? 1 : 1 + Int(rng.next() % 700)
            chunked.scan(Array(audio[i..<min(audio.count, i + n)]))
            i += n
        }
        #expect(chunked.found == whole.found)
    }

    @Test("a rate too low for a mode is refused, not crashed on")
    func lowRates() {
        #expect(FrameScanner(mode: .base, sampleRate: 8_000) != nil)
        #expect(FrameScanner(mode: .base, sampleRate: 1_000) == nil)
        #expect(FrameScanner(mode: LinkMode.ladder.last!, sampleRate: 8_000) == nil)
        #expect(FrameScanner(mode: .base, sampleRate: 0) == nil)
    }

    @Test("polarity does not matter")
    func polarity() {
        var synth = FrameSynthesizer(mode: .base, sampleRate: 44_100)
        var audio: [Float] = []
        let frame = Frame(type: .data, seq: 1, payload: Array(0..<100))
        synth.append(frame, to: &audio)
        let scanner = FrameScanner(mode: .base, sampleRate: 44_100)!
        scanner.scan(audio.map { -$0 })
        #expect(scanner.found.first?.frame == frame)
    }

    @Test("a sender whose clock is off by 0.5 % is tracked and its skew reported")
    func skew() {
        // Render at 44100 * 1.005 samples per second of the sender, read at 44100.
        var synth = FrameSynthesizer(mode: .base, sampleRate: 44_321)
        var audio: [Float] = []
        for seq in 0..<5 { synth.append(Frame(type: .data, seq: UInt8(seq), payload: Array(repeating: 0x3C, count: 200)), to: &audio) }
        let scanner = FrameScanner(mode: .base, sampleRate: 44_100)!
        scanner.scan(audio)
        #expect(scanner.found.filter { $0.status == .ok }.count == 5)
        // The sender's bits are longer in our samples: skew > 1.
        #expect(abs(scanner.skewFactor - 44_321.0 / 44_100) < 50e-6)
    }
}

