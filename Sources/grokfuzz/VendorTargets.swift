import GrokLink
import GrokProtocol

/// Fuzz targets for the vendor protocol's decoders: the packet layer, the command codecs,
/// the region entry and the FSK receiver. (The old stack's frame targets stay until the swap.)
enum VendorFuzz {
    static let targets: [FuzzTarget] = [
        FuzzTarget(name: "vendor-packet", summary: "vendor packet decoder (VendorPacketDecoder), both directions", seeds: seedPackets) { bytes in
            for expecting in [VendorPacketDecoder.Expecting.requests, .responses] {
                var decoder = VendorPacketDecoder(expecting: expecting)
                for output in decoder.feed(bytes) {
                    switch output {
                    case .request(let packet):
                        // A request that decodes re-encodes to bytes that decode to it again.
                        guard let again = try? packet.encoded() else {
                            FuzzTarget.check(false, "a decoded request does not re-encode", bytes)
                            return
                        }
                        var d = VendorPacketDecoder(expecting: .requests)
                        FuzzTarget.check(d.feed(again) == [.request(packet)], "request re-encoding changed its value", bytes)
                    case .response(let packet):
                        guard let again = try? packet.encoded() else {
                            FuzzTarget.check(false, "a decoded response does not re-encode", bytes)
                            return
                        }
                        var d = VendorPacketDecoder(expecting: .responses)
                        FuzzTarget.check(d.feed(again) == [.response(packet)], "response re-encoding changed its value", bytes)
                    case .fault:
                        break
                    }
                }
            }
        },
        FuzzTarget(name: "vendor-request", summary: "vendor command payload decoder (VendorRequest), first byte the opcode", seeds: seedRequests) { bytes in
            // Only payloads a packet can carry: longer ones never reach the decoder from the
            // wire. (The decoders accept some longer ones that the encoders then refuse.)
            guard let opcode = bytes.first, bytes.count - 1 <= VendorWireLimits.maxPayloadBytes else { return }
            let payload = Array(bytes.dropFirst())
            guard let request = try? VendorRequest(opcode: opcode, payload: payload) else { return }
            guard let again = try? request.encodePayload() else {
                FuzzTarget.check(false, "a decoded request does not re-encode", bytes)
                return
            }
            let twice = try? VendorRequest(opcode: opcode, payload: again)
            FuzzTarget.check(twice == request, "request payload re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "vendor-region", summary: "vendor 120-byte region entry (VendorRegionEntry)", seeds: seedRegions) { bytes in
            guard let entry = try? VendorRegionEntry(bytes: bytes) else { return }
            let again = try? VendorRegionEntry(bytes: entry.encode())
            FuzzTarget.check(again == entry, "region entry re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "vendor-fsk", summary: "vendor FSK receiver (VendorFSKDemodulator) on 16-bit samples, every setting", seeds: Seeds.audio) { bytes in
            var samples = [Float]()
            samples.reserveCapacity(bytes.count / 2)
            var i = 0
            while i + 1 < bytes.count {
                samples.append(Float(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)) / 32768)
                i += 2
            }
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
    ]

    static func seedPackets() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        if let r = try? RequestPacket(command: 0x06, payload: [0x14, 0xe8, 0x03, 0x02]).encoded() { seeds.append(r) }
        if let r = try? RequestPacket(command: 0x03).encoded() { seeds.append(r) }
        if let r = try? ResponsePacket(id: 0x00, data: [0x14, 0x01, 0x00]).encoded() { seeds.append(r) }
        return seeds
    }

    static func seedRequests() -> [[UInt8]] {
        [[0x03], [0x06, 0x14, 0xe8, 0x03, 0x02]]
    }

    static func seedRegions() -> [[UInt8]] {
        [[UInt8](repeating: 0, count: 120)]
    }
}
