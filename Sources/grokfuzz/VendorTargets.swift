import GrokLink
import GrokProtocol

/// Fuzz targets for the protocol's byte decoders: the packet layer, the command codecs (both
/// ways), the reader's slave-mode packets and the host's answers to them, and the region entry.
enum VendorFuzz {
    static let targets: [FuzzTarget] = [
        FuzzTarget(name: "packet", summary: "packet decoder (VendorPacketDecoder), both directions, byte by byte and at once", seeds: seedPackets) { bytes in
            for expecting in [VendorPacketDecoder.Expecting.requests, .responses] {
                var decoder = VendorPacketDecoder(expecting: expecting)
                let outputs = decoder.feed(bytes)
                var drip = VendorPacketDecoder(expecting: expecting)
                FuzzTarget.check(bytes.compactMap { drip.feed($0) } == outputs, "byte-by-byte feeding changed the packets", bytes)
                for output in outputs {
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
        FuzzTarget(name: "request", summary: "command payload decoder (VendorRequest), first byte the opcode", seeds: seedRequests) { bytes in
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
        FuzzTarget(name: "response", summary: "answer decoders (VendorRequest.decodeResponse): [opcode][payload length][payload][answer data]", seeds: seedResponses) { bytes in
            guard bytes.count >= 2 else { return }
            let length = Int(bytes[1])
            guard bytes.count >= 2 + length else { return }
            let payload = Array(bytes[2..<(2 + length)])
            let data = Array(bytes[(2 + length)...])
            guard data.count <= VendorWireLimits.maxPayloadBytes,
                  let request = try? VendorRequest(opcode: bytes[0], payload: payload),
                  let response = try? request.decodeResponse(data) else { return }
            guard let again = try? response.encodeData() else {
                FuzzTarget.check(false, "a decoded answer does not re-encode", bytes)
                return
            }
            FuzzTarget.check((try? request.decodeResponse(again)) == response, "answer re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "slave", summary: "the reader's slave-mode packets (VendorReaderPacket): [context flags][opcode][payload]", seeds: seedSlave) { bytes in
            guard bytes.count >= 2, bytes.count - 2 <= VendorWireLimits.maxPayloadBytes else { return }
            let context = VendorFuzz.context(bytes[0])
            let payload = Array(bytes[2...])
            guard let packet = try? VendorReaderPacket(opcode: bytes[1], payload: payload, context: context) else { return }
            guard let again = try? packet.encode(context: context) else {
                FuzzTarget.check(false, "a decoded reader packet does not re-encode", bytes)
                return
            }
            FuzzTarget.check(packet.opcode.rawValue == bytes[1], "a reader packet changed its opcode", bytes)
            let twice = try? VendorReaderPacket(opcode: packet.opcode.rawValue, payload: again, context: context)
            FuzzTarget.check(twice == packet, "reader packet re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "slave-answer", summary: "the host's answers in slave mode (VendorSlaveAnswer): [code][mask bytes][data]", seeds: seedSlaveAnswers) { bytes in
            guard bytes.count >= 2, bytes.count - 2 <= VendorWireLimits.maxPayloadBytes else { return }
            let maskBytes = Int(bytes[1] % 9)
            let data = Array(bytes[2...])
            guard let answer = try? VendorSlaveAnswer(code: bytes[0], data: data, maskBytes: maskBytes) else { return }
            guard let again = try? answer.encodeData() else {
                FuzzTarget.check(false, "a decoded slave answer does not re-encode", bytes)
                return
            }
            let twice = try? VendorSlaveAnswer(code: answer.code, data: again, maskBytes: maskBytes)
            FuzzTarget.check(twice == answer, "slave answer re-encoding changed its value", bytes)
        },
        FuzzTarget(name: "region", summary: "120-byte region entry (VendorRegionEntry)", seeds: seedRegions) { bytes in
            guard let entry = try? VendorRegionEntry(bytes: bytes) else { return }
            let again = try? VendorRegionEntry(bytes: entry.encode())
            FuzzTarget.check(again == entry, "region entry re-encoding changed its value", bytes)
        },
    ]

    /// The slave context whose flags are the bits of `byte` (bit 0 subsequent finds ... bit 6 reserved).
    static func context(_ byte: UInt8) -> VendorSlaveContext {
        VendorSlaveContext(reportSubsequentFinds: byte & 1 != 0, reportRssi: byte & 2 != 0, detailedPerReadData: byte & 4 != 0,
                           perReadWords: byte & 8 != 0, readsTid: byte & 16 != 0, readsUser: byte & 32 != 0,
                           readsReserved: byte & 64 != 0)
    }

    @Sendable static func seedPackets() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        if let r = try? RequestPacket(command: 0x06, payload: [0x14, 0xe8, 0x03, 0x02]).encoded() { seeds.append(r) }
        if let r = try? RequestPacket(command: 0x03).encoded() { seeds.append(r) }
        if let r = try? ResponsePacket(id: 0x00, data: [0x14, 0x01, 0x00]).encoded() { seeds.append(r) }
        return seeds
    }

    @Sendable static func seedRequests() -> [[UInt8]] {
        [[0x03], [0x06, 0x14, 0xe8, 0x03, 0x02]]
    }

    @Sendable static func seedResponses() -> [[UInt8]] {
        // GetBatteryLevel with a battery answer; Echo with its bytes back; GetVersion.
        [[0x03, 0x00, 0x01, 0x64, 0x00, 0x10, 0x0e], [0x0c, 0x03, 1, 2, 3, 1, 2, 3], [0x00, 0x00] + [UInt8](repeating: 0x11, count: 40)]
    }

    @Sendable static func seedSlave() -> [[UInt8]] {
        let epc: [UInt8] = [0x30, 0x08, 0x33, 0xb2, 0xdd, 0xd9, 0x01, 0x40, 0, 0, 0, 1]
        var seeds: [[UInt8]] = [[0x00, 0x05, 0x07], [0x00, 0x00, 0x00, 0x10, 0x00]]
        let context = VendorSlaveContext()
        if let first = try? VendorReaderPacket.firstRead(flags: 0, rounds: nil, records: [VendorTagRecord(epc: epc)], fixed96: false)
            .encode(context: context) {
            seeds.append([0x00, 0x01] + first)
        }
        return seeds
    }

    @Sendable static func seedSlaveAnswers() -> [[UInt8]] {
        [[0x00, 0x01, 0x01], [0x03, 0x00, 0xe8, 0x03], [0x07, 0x00], [0x01, 0x00]]
    }

    @Sendable static func seedRegions() -> [[UInt8]] {
        [[UInt8](repeating: 0, count: 120)]
    }
}
