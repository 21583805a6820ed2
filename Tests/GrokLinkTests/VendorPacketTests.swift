import GrokBasics
import GrokAudio
@testable import GrokLink
import GrokTestSupport
import Testing

@Suite("Vendor packets: forms, crc8 and decoders")
struct VendorPacketTests {
    @Test("CRC-16/MCRF4XX has its catalogued check value and continues from a seed")
    func crcCheckValue() {
        let check = Array("123456789".utf8)
        #expect(VendorPacketCRC.crc16(check) == 0x6F91)
        #expect(VendorPacketCRC.crc16(check[4...], seed: VendorPacketCRC.crc16(check[..<4])) == 0x6F91)
        #expect(VendorPacketCRC.crc8(check) == 0x91)
    }

    @Test("GetVersion as the vendor host sends it, and its retry, are the bytes seen on the wire")
    func seenGetVersionVectors() throws {
        var request = RequestPacket(command: 0x00, payload: [0x06, 0x14, 0xE8, 0x03, 0x02])
        #expect(try request.encoded() == [0x80, 0x05, 0x06, 0x14, 0xE8, 0x03, 0x02, 0xD9])
        request.isRetry = true
        #expect(try request.encoded() == [0xC0, 0x05, 0x06, 0x14, 0xE8, 0x03, 0x02, 0xDF])
    }

    @Test("a request without payload takes the one-byte form: battery is 03 1c")
    func oneByteForm() throws {
        #expect(try RequestPacket(command: 0x03).encoded() == [0x03, 0x1C])
        // The retry bit sits in the same place in the one-byte form.
        let retry = try RequestPacket(command: 0x03, isRetry: true).encoded()
        #expect(retry[0] == 0x43)
        #expect(retry[1] == VendorPacketCRC.crc8([0x43]))
    }

    @Test("response code bytes are the ones seen on the wire")
    func responseCodeBytes() throws {
        #expect(try ResponsePacket.ack.encoded() == [0xF0])
        #expect(try ResponsePacket(id: 1).encoded() == [0xE1])
        #expect(try ResponsePacket.nack.encoded() == [0x87])
        let firstBytes = try [0, 2, 4, 5, 6].map { try ResponsePacket(id: UInt8($0), data: [1]).encoded()[0] }
        #expect(firstBytes == [0x78, 0x5A, 0x3C, 0x2D, 0x1E])
        // The host's answer to a first read, seen on the wire: id 0 with one data byte.
        #expect(try ResponsePacket(id: 0, data: [0x02]).encoded() == [0x78, 0x01, 0x02, 0xE3])
    }

    @Test("out-of-range commands, ids and payloads are refused with their codes")
    func refusals() {
        #expect(throws: VendorPacketError.invalidCommand(64)) { try RequestPacket(command: 64).encoded() }
        #expect(throws: VendorPacketError.invalidResponseID(8)) { try ResponsePacket(id: 8).encoded() }
        let big = [UInt8](repeating: 0, count: 251)
        #expect(throws: VendorPacketError.payloadTooLong(size: 251, limit: 250)) {
            try RequestPacket(command: 1, payload: big).encoded()
        }
        #expect(VendorPacketError.payloadTooLong(size: 251, limit: 250).code == "packet_payload_too_long")
        #expect(VendorPacketError.payloadTooLong(size: 251, limit: 250).arguments == ["251", "250"])
        // 250 bytes is the limit, and fits.
        #expect((try? RequestPacket(command: 1, payload: [UInt8](repeating: 7, count: 250)).encoded())?.count == 253)
    }

    static func samplePackets(seed: UInt64) -> (requests: [RequestPacket], responses: [ResponsePacket]) {
        var rng = SplitMix64(seed: seed)
        var requests = [RequestPacket(command: 0), RequestPacket(command: 63, payload: [1], isRetry: true),
                        RequestPacket(command: 7, payload: [UInt8](repeating: 0xFF, count: 250))]
        var responses = [ResponsePacket.ack, .nack, ResponsePacket(id: 7, data: [9]),
                         ResponsePacket(id: 0, data: [UInt8](repeating: 0x80, count: 250))]
        for _ in 0..<40 {
            requests.append(RequestPacket(command: UInt8.random(in: 0...63, using: &rng),
                                          payload: rng.bytes(Int.random(in: 0...40, using: &rng)),
                                          isRetry: Bool.random(using: &rng)))
            responses.append(ResponsePacket(id: UInt8.random(in: 0...7, using: &rng),
                                            data: rng.bytes(Int.random(in: 0...40, using: &rng))))
        }
        return (requests, responses)
    }

    /// Feeds `bytes` in chunks whose sizes come from `chunking`, one decoder throughout.
    static func decode(_ bytes: [UInt8], expecting: VendorPacketDecoder.Expecting,
                       chunking: (Int) -> Int) -> [VendorPacketDecoder.Output] {
        var decoder = VendorPacketDecoder(expecting: expecting)
        var out: [VendorPacketDecoder.Output] = []
        var i = 0
        while i < bytes.count {
            let n = min(bytes.count - i, max(1, chunking(bytes.count - i)))
            out += decoder.feed(bytes[i..<(i + n)])
            i += n
        }
        return out
    }

    @Test("the decoders give the same packets byte by byte, all at once and in random chunks",
          arguments: [VendorPacketDecoder.Expecting.requests, .responses])
    func dripFeed(expecting: VendorPacketDecoder.Expecting) throws {
        let (requests, responses) = Self.samplePackets(seed: 11)
        var stream: [UInt8] = []
        var expected: [VendorPacketDecoder.Output] = []
        switch expecting {
        case .requests:
            for r in requests { stream += try r.encoded(); expected.append(.request(r)) }
        case .responses:
            for r in responses { stream += try r.encoded(); expected.append(.response(r)) }
        }
        var rng = SplitMix64(seed: 5)
        let oneByOne = Self.decode(stream, expecting: expecting) { _ in 1 }
        let whole = Self.decode(stream, expecting: expecting) { $0 }
        let random = Self.decode(stream, expecting: expecting) { _ in Int.random(in: 1...17, using: &rng) }
        #expect(oneByOne == expected)
        #expect(whole == expected)
        #expect(random == expected)
    }

    @Test("every damaged packet is thrown away with the fault that names the damage")
    func faults() {
        var responses = VendorPacketDecoder(expecting: .responses)
        #expect(responses.feed(0xF1) == .fault(.badCodeByte(0xF1)))
        #expect(responses.feed([0x78, 0x00]) == [.fault(.badLength(0))])
        #expect(responses.feed([0x78, 0xFB]) == [.fault(.badLength(0xFB))])
        #expect(responses.feed([0x78, 0x01, 0x02, 0xE4]) == [.fault(.badCRC(received: 0xE4, expected: 0xE3))])
        #expect(responses.isIdle)
        #expect(responses.feed([0x78, 0x01]).isEmpty)
        #expect(!responses.isIdle)
        #expect(responses.interByteTimeout() == .fault(.interByteTimeout))
        #expect(responses.interByteTimeout() == nil)
        // After each fault the next byte starts a new packet.
        #expect(responses.feed(0xF0) == .response(.ack))

        var requests = VendorPacketDecoder(expecting: .requests)
        #expect(requests.feed([0x80, 0x05, 0x06, 0x14, 0xE8, 0x03, 0x02, 0xD8])
                == [.fault(.badCRC(received: 0xD8, expected: 0xD9))])
        #expect(requests.feed([0x03, 0x1C]) == [.request(RequestPacket(command: 3))])
    }

    @Test("random bytes never trap a decoder, and whatever they decode re-encodes to the bytes it came from",
          arguments: [VendorPacketDecoder.Expecting.requests, .responses])
    func fuzz(expecting: VendorPacketDecoder.Expecting) throws {
        var rng = SplitMix64(seed: expecting == .requests ? 21 : 22)
        var decoder = VendorPacketDecoder(expecting: expecting)
        var sinceIdle: [UInt8] = []
        var packets = 0
        var faults = 0
        for _ in 0..<200_000 {
            // Mostly random bytes, sometimes a whole valid packet so both paths get exercised.
            var chunk: [UInt8]
            if UInt8.random(in: 0...31, using: &rng) == 0 {
                // Half of them after the line went quiet (as a retry comes), half straight
                // after the noise, where they may be swallowed by a packet in progress.
                if Bool.random(using: &rng) { _ = decoder.interByteTimeout(); sinceIdle = [] }
                chunk = expecting == .requests
                    ? try RequestPacket(command: UInt8.random(in: 0...63, using: &rng), payload: rng.bytes(Int.random(in: 0...8, using: &rng))).encoded()
                    : try ResponsePacket(id: UInt8.random(in: 0...7, using: &rng), data: rng.bytes(Int.random(in: 0...8, using: &rng))).encoded()
            } else {
                chunk = rng.bytes(1)
            }
            if UInt8.random(in: 0...255, using: &rng) == 0 { _ = decoder.interByteTimeout(); sinceIdle = [] }
            for b in chunk {
                sinceIdle.append(b)
                guard let out = decoder.feed(b) else { continue }
                switch out {
                case .request(let r): #expect(try r.encoded() == sinceIdle); packets += 1
                case .response(let r): #expect(try r.encoded() == sinceIdle); packets += 1
                case .fault: faults += 1
                }
                sinceIdle = []
            }
        }
        #expect(packets > 1000)
        #expect(faults > 1000)
    }
}
