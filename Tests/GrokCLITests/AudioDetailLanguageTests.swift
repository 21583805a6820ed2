import Foundation
import GrokBasics
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// Real `grokctl audio decode` runs on real damaged WAV files: what is wrong with the file
    /// is a code under `audio.detail`, so the whole message reads in the user's language.
    @Suite("Audio details in es, fr and de: no English inside a refused WAV file's message", .serialized)
    struct AudioDetailLanguageTests {
        /// A RIFF chunk: its id, its little-endian size and its bytes.
        static func chunk(_ id: String, _ bytes: [UInt8], size: UInt32? = nil) -> [UInt8] {
            let n = size ?? UInt32(bytes.count)
            return Array(id.utf8) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)] + bytes
        }

        /// A 16-byte fmt chunk body: format tag, channels, rate, bits.
        static func fmt(tag: UInt16, channels: UInt16, rate: UInt32, bits: UInt16) -> [UInt8] {
            func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
            func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
            let align = channels * (bits / 8)
            return chunk("fmt ", le16(tag) + le16(channels) + le32(rate) + le32(rate * UInt32(align)) + le16(align) + le16(bits))
        }

        static func riff(_ chunks: [UInt8]...) -> [UInt8] {
            let body = Array("WAVE".utf8) + chunks.flatMap { $0 }
            return chunk("RIFF", body)
        }

        @Test("a refused WAV file is explained without English, and without a raw detail code", arguments: [Language.es, .fr, .de])
        func refusedWAVReadsInTheUsersLanguage(_ language: Language) throws {
            let dir = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let files: [String: (bytes: [UInt8], code: String)] = [
                "no-fmt": (Self.riff(Self.chunk("data", [0, 0])), "no_fmt_chunk"),
                "format-tag": (Self.riff(Self.fmt(tag: 0x55, channels: 1, rate: 44100, bits: 16), Self.chunk("data", [])), "compressed"),
                "truncated": (Self.riff(Self.fmt(tag: 1, channels: 1, rate: 44100, bits: 16), Self.chunk("data", [1, 2], size: 1000)),
                              "data_truncated"),
                "not-riff": (Array("OggS\0\0\0\0\0\0\0\0".utf8), "not_riff"),
            ]
            let sentences = try FleetLocalizationTests.englishSentences(for: language)
            for (name, file) in files.sorted(by: { $0.key < $1.key }) {
                let path = dir + "/" + name + ".wav"
                try Data(file.bytes).write(to: URL(fileURLWithPath: path))
                let result = try runBinary(["audio", "decode", path, "--lang", language.rawValue])
                #expect(result.status == 1, "\(name): \(result.standardError)")
                #expect(result.standardError.contains(path), "\(name): \(result.standardError)")
                let found = LanguageAcceptanceTests.faults(result.standardError, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(name): \(found)\n\(result.standardError)")
                #expect(!result.standardError.contains(file.code), "\(language) \(name) shows the raw code:\n\(result.standardError)")
                let json = try runBinary(["audio", "decode", path, "--json"])
                #expect(json.standardError.contains("\"code\":\"audio_bad_wav\""), "\(name): \(json.standardError)")
            }
        }
    }
}
