#if canImport(Glibc)
import Glibc
#endif
import GrokBasics
import Foundation
import GrokAudio
import GrokLink
import GrokTestSupport
import Testing

@Suite("Vendor modem and foreign audio")
struct VendorForeignAudioTests {
    /// Seconds of each foreign signal: short in the suite; scripts/foreign-audio.sh runs the
    /// ten-minute campaigns by setting GROKCTL_FOREIGN_AUDIO_SECONDS=600.
    static let seconds: Double? = ProcessInfo.processInfo.environment["GROKCTL_FOREIGN_AUDIO_SECONDS"].flatMap(Double.init)

    @Test("no connection on white noise at several levels", arguments: [0.001, 0.05, 0.5])
    func noise(level: Double) throws {
        var rng = SplitMix64(seed: 42)
        let (connected, host) = try hostConnects(on: { _ in
            // Sum of uniforms: close enough to Gaussian for a detector.
            var s = 0.0
            for _ in 0..<4 { s += Double(rng.next() % 20001) / 10000 - 1 }
            return Float(s / 2 * level)
        }, seconds: Self.seconds ?? 20)
        #expect(!connected)
        #expect(host.statistics.handshakes == 0)
    }

    @Test("no connection on silence")
    func silence() throws {
        let (connected, host) = try hostConnects(on: { _ in 0 }, seconds: Self.seconds ?? 10)
        #expect(!connected)
        #expect(host.state == .awaitingRequest)
    }

    @Test("no connection on music-like sums of tones, even chords that hold the request tone and an idle tone",
          arguments: 0..<4)
    func music(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed))
        // Notes change every 0.25 s; chords of 3 tones, one of them sometimes 3150 Hz and
        // another the 12 spb idle tone 5512.5 Hz.
        var notes: [[Double]] = []
        for _ in 0..<120 {
            var chord = (0..<3).map { _ in 110 * pow(2, Double(rng.next() % 60) / 12) }
            if rng.next() % 3 == 0 { chord[0] = 3150 }
            if rng.next() % 3 == 0 { chord[1] = 5512.5 }
            notes.append(chord)
        }
        let (connected, _) = try hostConnects(on: { t in
            let chord = notes[(t / 11_025) % notes.count]
            var s = 0.0
            for (k, f) in chord.enumerated() { s += sin(2 * Double.pi * f * Double(t) / 44_100) / Double(k + 2) }
            return Float(s * 0.5)
        }, seconds: Self.seconds ?? 30)
        #expect(!connected)
    }

    @Test("no connection on another modem's FSK (Bell 202 and a 3150/5512.5 Hz pair)", arguments: [0, 1])
    func foreignFSK(kind: Int) throws {
        let (f0, f1, baud): (Double, Double, Double) = kind == 0 ? (2200, 1200, 1200) : (5512.5, 3150, 1225)
        var rng = SplitMix64(seed: 7)
        var phase = 0.0
        var bit = false
        let samplesPerBit = 44_100 / baud
        var nextEdge = 0.0
        let (connected, _) = try hostConnects(on: { t in
            if Double(t) >= nextEdge {
                bit = rng.next() & 1 == 1
                nextEdge += samplesPerBit
            }
            phase += 2 * Double.pi * (bit ? f1 : f0) / 44_100
            return Float(sin(phase) * 0.7)
        }, seconds: Self.seconds ?? 30)
        #expect(!connected)
    }

    /// minimodem (Debian's) generating its own FSK, when it is installed.
    static let minimodem: String? = ["/usr/bin/minimodem", "/usr/local/bin/minimodem"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test("no connection on minimodem's FSK at 300, 1200 and 3675 baud", .enabled(if: minimodem != nil, "minimodem is not installed (apt-get install minimodem)"),
          arguments: ["300", "1200", "3675"])
    func minimodemFSK(baud: String) throws {
        let samples = try Self.minimodemSamples(baud: baud, text: String(repeating: "The quick brown fox 0123456789 ", count: 40))
        #expect(samples.count > 44_100)
        let (connected, _) = try hostConnects(on: { samples[$0 % samples.count] }, seconds: Self.seconds ?? 20)
        #expect(!connected)
    }

    /// Runs minimodem --tx writing a 16-bit mono 44.1 kHz WAV file and returns its samples.
    static func minimodemSamples(baud: String, text: String) throws -> [Float] {
        let scratch = TemporaryDirectory("vendor-modem-\(baud)")
        let dir = scratch.url
        let output = dir.appendingPathComponent("fsk.wav")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: minimodem!)
        process.arguments = ["--tx", "--quiet", "-R", "44100", "-f", output.path, baud]
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        pipe.fileHandleForWriting.write(Data(text.utf8))
        try pipe.fileHandleForWriting.close()
        process.waitUntilExit()
        let data = [UInt8](try Data(contentsOf: output))
        // The samples follow the "data" chunk header (its id and 32-bit length).
        var start = 12
        while start + 8 <= data.count, data[start..<(start + 4)] != [0x64, 0x61, 0x74, 0x61] {
            let length = Int(data[start + 4]) | Int(data[start + 5]) << 8 | Int(data[start + 6]) << 16 | Int(data[start + 7]) << 24
            start += 8 + length
        }
        start += 8
        var samples: [Float] = []
        var i = start
        while i + 1 < data.count {
            samples.append(Float(Int16(bitPattern: UInt16(data[i]) | UInt16(data[i + 1]) << 8)) / 32768)
            i += 2
        }
        return samples
    }
}
