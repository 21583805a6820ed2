import Foundation
import GrokBasics
import GrokTestSupport
import Testing

@testable import GrokAudio

/// A port whose "device" answers each frame with a fixed function of what it was sent.
private final class FormulaPort: AudioPort {
    let name: String
    let sampleRate = 48000
    var jackPlugged: Bool? { true }
    private(set) var closed = false
    private var count = 0

    init(name: String) { self.name = name }

    func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        if closed { throw AudioError.closed(port: name) }
        for index in output.indices {
            input[index] = output[index] * -0.5 + Float(count % 7) / 10
            count += 1
        }
    }

    func close() { closed = true }
}

@Suite("RecordingPort")
struct RecordingPortTests {
    let scratch = TemporaryDirectory("grokaudio-test")

    @Test func recordsPlayedLeftAndCapturedRight() throws {
        let inner = FormulaPort(name: "sim:2")
        let port = try RecordingPort(wrapping: inner, directory: scratch.path, time: 1_700_000_000)
        #expect(port.name == "sim:2")
        #expect(port.sampleRate == 48000)
        #expect(port.jackPlugged == true)
        #expect(port.recordingPath == scratch.file("sim_2-20231114-221320.wav"))

        var played: [Float] = []
        var heard: [Float] = []
        var random = SplitMix64(seed: 7)
        for size in [1, 256, 100, 0, 4096, 3] {
            let output = (0..<size).map { _ in Float(Int(random.next() % 20001) - 10000) / 10000 }
            var input = [Float](repeating: 0, count: size)
            try output.withUnsafeBufferPointer { out in
                try input.withUnsafeMutableBufferPointer { try port.transfer(output: out, input: $0) }
            }
            played += output
            heard += input
        }
        #expect(!FileManager.default.fileExists(atPath: port.recordingPath))
        port.close()
        #expect(inner.closed)
        #expect(port.recordingError == nil)

        let audio = try WAVFile.read(path: port.recordingPath)
        let quantized: (Float) -> Float = { PCM16.float(PCM16.sample($0)) }
        #expect(audio.sampleRate == 48000)
        #expect(audio.channels.count == 2)
        #expect(audio.channels[0] == played.map(quantized))
        #expect(audio.channels[1] == heard.map(quantized))

        #expect(throws: AudioError.closed(port: "sim:2")) {
            try [Float(0)].withUnsafeBufferPointer { out in
                var input: [Float] = [0]
                try input.withUnsafeMutableBufferPointer { try port.transfer(output: out, input: $0) }
            }
        }
    }

    @Test func takenNamesGetANumber() throws {
        let time = 86_400 * 365
        let first = try RecordingPort(wrapping: FormulaPort(name: "alsa:hw:1,0"), directory: scratch.path, time: time)
        let second = try RecordingPort(wrapping: FormulaPort(name: "alsa:hw:1,0"), directory: scratch.path + "/", time: time)
        first.close()
        let third = try RecordingPort(wrapping: FormulaPort(name: "alsa:hw:1,0"), directory: scratch.path, time: time)
        second.close()
        third.close()
        #expect(first.recordingPath == scratch.file("alsa_hw_1_0-19710101-000000.wav"))
        #expect(second.recordingPath == scratch.file("alsa_hw_1_0-19710101-000000-2.wav"))
        #expect(third.recordingPath == scratch.file("alsa_hw_1_0-19710101-000000-3.wav"))
        for port in [first, second, third] {
            #expect(try WAVFile.read(path: port.recordingPath).frameCount == 0)
        }
    }

    @Test(arguments: [
        ("sim:2", "sim_2"), ("pipe:/tmp/a b/ç", "pipe__tmp_a_b__"), ("..", "_.."), ("", "_"), ("ok-1.2_x", "ok-1.2_x"),
    ])
    func unsafeCharactersAreReplaced(name: String, safe: String) {
        #expect(RecordingPort.safeName(name) == safe)
    }

    @Test func uncreatableDirectoryIsAFileError() throws {
        // A directory cannot be made inside a regular file.
        let plain = scratch.file("plain")
        #expect(FileManager.default.createFile(atPath: plain, contents: Data([1])))
        #expect {
            _ = try RecordingPort(wrapping: FormulaPort(name: "x"), directory: plain + "/sub", time: 0)
        } throws: { error in
            guard case .file(let path, _) = error as? AudioError else { return false }
            return path == plain + "/sub"
        }
    }
}

@Suite("Recording directories")
struct RecordingDirectoryTests {
    @Test("a missing recording directory is created, parents included")
    func createsDirectory() throws {
        let base = "/tmp/grok-rec-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? FileManager.default.removeItem(atPath: base) }
        let port = try RecordingPort(wrapping: SimulatedCablePort(name: "sim:1", sampleRate: 44_100, configuration: .clean,
                                                                  peer: SilentRecordingPeer()),
                                     directory: base + "/a/b", time: 0)
        port.close()
        #expect(FileManager.default.fileExists(atPath: port.recordingPath))
        #expect(port.recordingPath.hasPrefix(base + "/a/b/sim_1-"))
    }
}

final class SilentRecordingPeer: CablePeer {
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        for i in output.indices { output[i] = 0 }
    }
}
