import GrokLink
import GrokProtocol

/// One fuzz target: a decoder fed arbitrary bytes. `run` must never trap on any input; it
/// traps only when a decoder breaks one of its own invariants (for example: a message that
/// decodes must re-encode to bytes that decode to the same value), which libFuzzer then
/// reports as a crash with the input that caused it.
struct FuzzTarget: Sendable {
    /// The name given in `GROKFUZZ_TARGET` or `--target`.
    var name: String
    /// What the target exercises.
    var summary: String
    /// Valid inputs to start a corpus from.
    var seeds: @Sendable () -> [[UInt8]]
    /// Feeds one input.
    var run: @Sendable ([UInt8]) -> Void

    /// The target `GROKFUZZ_TARGET` names when unset.
    static let defaultName = "packet"

    /// Every target, in the order `--list` prints them. Add new decoders here.
    static let all: [FuzzTarget] = VendorFuzz.targets + AudioFuzz.targets + FirmwareFuzz.targets

    /// The target named `name`, if any.
    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    /// The names, comma-separated, for messages.
    static var names: String { all.map(\.name).joined(separator: ", ") }

    /// Traps with a message when an invariant fails.
    static func check(_ condition: Bool, _ message: String, _ input: [UInt8]) {
        if !condition {
            fatalError("grokfuzz invariant failed: \(message); input \(input.count) bytes")
        }
    }
}

/// Targets fed audio: 16-bit little-endian samples at 44.1 kHz.
enum AudioFuzz {
    static let targets: [FuzzTarget] = [
        FuzzTarget(name: "fsk", summary: "FSK receiver (VendorFSKDemodulator) on 16-bit samples, every setting", seeds: seedAudio) { bytes in
            let samples = AudioFuzz.samples(bytes)
            for setting in VendorModemSetting.all(sampleRate: 44_100) {
                var d = VendorFSKDemodulator(setting: setting)
                var out: [VendorFSKDemodulator.Byte] = []
                // In two chunks: the split must not change the bytes.
                let half = samples.count / 2
                samples.withUnsafeBufferPointer { p in
                    d.process(UnsafeBufferPointer(rebasing: p[0..<half]), into: &out)
                    d.process(UnsafeBufferPointer(rebasing: p[half...]), into: &out)
                }
                var whole = VendorFSKDemodulator(setting: setting)
                var all: [VendorFSKDemodulator.Byte] = []
                samples.withUnsafeBufferPointer { whole.process($0, into: &all) }
                FuzzTarget.check(out == all, "chunking changed the decoded bytes", bytes)
                FuzzTarget.check(zip(all, all.dropFirst()).allSatisfy { $0.end < $1.end }, "byte ends not increasing", bytes)
                FuzzTarget.check(all.allSatisfy { $0.end < Int64(samples.count) }, "a byte ends after the input", bytes)
            }
        },
        FuzzTarget(name: "scanner", summary: "recording packet finder (VendorPacketScanner) on 16-bit samples", seeds: seedAudio) { bytes in
            let samples = AudioFuzz.samples(bytes)
            var whole = VendorPacketScanner(sampleRate: 44_100)
            var split = VendorPacketScanner(sampleRate: 44_100)
            let third = samples.count / 3
            samples.withUnsafeBufferPointer { p in
                whole.scan(p)
                split.scan(UnsafeBufferPointer(rebasing: p[0..<third]))
                split.scan(UnsafeBufferPointer(rebasing: p[third...]))
            }
            let found = whole.packets
            FuzzTarget.check(split.packets == found, "chunking changed the packets found", bytes)
            for packet in found {
                // A whole packet is its own bytes, re-encoded.
                switch packet.content {
                case .request(let r): FuzzTarget.check((try? r.encoded()) == packet.bytes, "a found request is not its bytes", bytes)
                case .response(let r): FuzzTarget.check((try? r.encoded()) == packet.bytes, "a found response is not its bytes", bytes)
                case .badCRC, .malformed: FuzzTarget.check(!packet.bytes.isEmpty, "a damaged packet without bytes", bytes)
                }
                FuzzTarget.check(packet.endSample < Int64(samples.count), "a packet ends after the input", bytes)
            }
        },
        FuzzTarget(name: "link", summary: "a device-side VendorLink (handshake, modem, packet layer) fed arbitrary audio", seeds: seedAudio) { bytes in
            // 8-bit samples: more audio per input byte, so the handshake's windows are reached.
            guard let link = try? VendorLink(role: .device, sampleRate: 44_100), (try? link.start()) != nil else { return }
            link.packets.onRequest = { _ in .ack }
            var input = bytes.map { Float(Int8(bitPattern: $0)) / 128 }
            // Repeated up to a second of audio so the tone windows see a steady signal.
            while !input.isEmpty && input.count < 44_100 { input += input }
            var output = [Float](repeating: 0, count: 256)
            input.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(256, all.count - i)
                    output.withUnsafeMutableBufferPointer { o in
                        link.process(input: UnsafeBufferPointer(rebasing: all[i..<(i + n)]),
                                     output: UnsafeMutableBufferPointer(rebasing: o[0..<n]))
                    }
                    i += n
                }
            }
            FuzzTarget.check(output.allSatisfy { $0.isFinite && abs($0) <= 1 }, "the link played a sample out of range", bytes)
            _ = link.drainEvents()
        },
    ]

    static func samples(_ bytes: [UInt8]) -> [Float] {
        var samples = [Float]()
        samples.reserveCapacity(bytes.count / 2)
        var i = 0
        while i + 1 < bytes.count {
            samples.append(Float(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)) / 32768)
            i += 2
        }
        return samples
    }

    /// A GetVersion request and an ACK_0 with data at 12 spb after a little idle carrier,
    /// as 16-bit little-endian samples.
    @Sendable static func seedAudio() -> [[UInt8]] {
        guard let setting = try? VendorModemSetting(samplesPerBit: 12, sampleRate: 44_100),
              let request = try? RequestPacket(command: 0x00).encoded(),
              let response = try? ResponsePacket(id: 0, data: [0x14, 0x01, 0x00]).encoded() else { return [] }
        var modulator = VendorFSKModulator()
        modulator.setCarrier(.data(setting))
        var samples = [Float](repeating: 0, count: 240 + (request.count + response.count) * 120 + 2_000)
        samples.withUnsafeMutableBufferPointer { b in
            modulator.render(into: UnsafeMutableBufferPointer(rebasing: b[0..<240]))
            modulator.enqueue(request)
            modulator.render(into: UnsafeMutableBufferPointer(rebasing: b[240..<1_240]))
            modulator.enqueue(response)
            modulator.render(into: UnsafeMutableBufferPointer(rebasing: b[1_240...]))
        }
        var bytes: [UInt8] = []
        for s in samples {
            let v = UInt16(bitPattern: Int16(max(-32767, min(32767, (s * 32767).rounded()))))
            bytes.append(UInt8(v & 0xFF))
            bytes.append(UInt8(v >> 8))
        }
        return [bytes]
    }
}
