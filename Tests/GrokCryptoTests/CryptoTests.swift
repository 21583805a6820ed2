import GrokCrypto
import Testing

@Suite("SHA-256, CRC-32 and deflate")
struct CryptoTests {
    @Test("SHA-256 of the FIPS 180-2 vectors, in one call and fed in pieces")
    func sha256Vectors() throws {
        #expect(SHA256.hash(Array("abc".utf8)).hex
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        let expected = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        #expect(SHA256.hash(long).hex == expected)
        let hasher = try SHA256()
        for piece in stride(from: 0, to: long.count, by: 7) {
            hasher.update(long[piece..<min(piece + 7, long.count)])
        }
        #expect(hasher.finalize().hex == expected)
        // The hasher starts over after finalize.
        hasher.update(Array("abc".utf8))
        #expect(hasher.finalize() == SHA256.hash(Array("abc".utf8)))
    }

    @Test("HMAC-SHA256 of RFC 4231's vectors (short key, text key, key longer than the block); a changed byte is invalid")
    func hmacVectors() {
        let one = HMACSHA256.code(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Hex.encode(one) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let two = HMACSHA256.code(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(two) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let long = HMACSHA256.code(key: [UInt8](repeating: 0xaa, count: 131),
                                   message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Hex.encode(long) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(HMACSHA256.isValid(two, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        var changed = two
        changed[31] ^= 1
        #expect(!HMACSHA256.isValid(changed, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        #expect(!HMACSHA256.isValid(two, key: Array("Jeff".utf8), message: Array("what do ya want for nothing?".utf8)))
    }

    @Test("A digest round-trips through hex and JSON and refuses the wrong length")
    func digestText() {
        let digest = SHA256.hash([1, 2, 3])
        #expect(SHA256Digest(hex: digest.hex.uppercased()) == digest)
        #expect(SHA256Digest(hex: String(digest.hex.dropLast(2))) == nil)
        #expect(SHA256Digest(hex: String(repeating: "g", count: 64)) == nil)
        #expect(SHA256Digest(bytes: [1, 2]) == nil)
    }

    @Test("CRC-32 check value, and continuing across pieces")
    func crc() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32.checksum(bytes) == 0xCBF4_3926)
        #expect(CRC32.checksum(Array(bytes[4...]), continuing: CRC32.checksum(Array(bytes[..<4]))) == 0xCBF4_3926)
    }

    @Test("Deflate round trip: one piece, sync-flushed pieces, and with a dictionary")
    func deflateRoundTrip() throws {
        var generator: UInt64 = 0x1234_5678
        let text = (0..<20_000).map { _ -> UInt8 in
            generator = generator &* 6_364_136_223_846_793_005 &+ 1
            return UInt8(ascii: "a") + UInt8((generator >> 60) & 7)
        }
        let packed = try Deflater.compress(text)
        #expect(packed.count < text.count / 2)
        #expect(try Inflater.decompress(packed, limit: text.count) == text)

        // Pieces with sync flushes: each piece's output decodes on its own, in order.
        let deflater = try Deflater()
        let inflater = try Inflater(limit: text.count)
        var rebuilt: [UInt8] = []
        for start in stride(from: 0, to: text.count, by: 3000) {
            let piece = Array(text[start..<min(start + 3000, text.count)])
            let out = try deflater.compress(piece, flush: .sync)
            let back = try inflater.decompress(out)
            #expect(back == piece)
            rebuilt += back
        }
        _ = try inflater.decompress(try deflater.compress([], flush: .finish))
        #expect(inflater.finished)
        #expect(rebuilt == text)

        // A dictionary the receiver already holds makes a near-copy nearly free.
        var changed = text
        changed[5000] ^= 0xFF
        let plain = try Deflater.compress(changed)
        let delta = try Deflater.compress(changed, dictionary: Array(text.suffix(30_000)))
        #expect(delta.count * 4 < plain.count)
        #expect(try Inflater.decompress(delta, dictionary: Array(text.suffix(30_000)), limit: changed.count) == changed)
    }

    @Test("A damaged stream, a stream that ends early and one that expands too far are refused")
    func inflateRefusals() throws {
        let text = [UInt8](repeating: 0x41, count: 10_000)
        let packed = try Deflater.compress(text)
        #expect(throws: CryptoError.outputLimitExceeded(limit: 100)) {
            try Inflater.decompress(packed, limit: 100)
        }
        #expect(throws: CryptoError.self) { try Inflater.decompress(Array(packed.dropLast(3)), limit: 20_000) }
        #expect(throws: CryptoError.self) { try Inflater.decompress([0xFF, 0xFF, 0xFF, 0xFF], limit: 20_000) }
    }
}
