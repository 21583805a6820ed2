#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol

/// An ordered set of named figures that prints as one JSON object.
struct Figures {
    private(set) var entries: [(String, String)] = []

    mutating func set(_ key: String, _ value: Double, digits: Int = 3) {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        entries.append((key, rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)))
    }

    mutating func set(_ key: String, _ value: String) {
        entries.append((key, "\"\(value)\""))
    }

    var json: String {
        "{" + entries.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }
}

/// A device that swallows what it is sent (bulk goodput) behind a simulated cable.
final class SinkDevice: CablePeer {
    let engine: LinkEngine
    var received = 0
    init(configuration: LinkConfiguration) {
        engine = LinkEngine(role: .device, sampleRate: 44_100, configuration: configuration)
    }
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        engine.process(input: input, output: output)
        while let m = engine.receive() { received += m.count }
    }
}

enum LinkBenchmark {
    static let rate = 44_100

    static func run() -> Figures {
        var figures = Figures()
        let handshake = handshakeToIdentified()
        figures.set("handshake_ms", handshake.ms, digits: 1)
        figures.set("default_raw_bps", LinkMode.base.bitRate, digits: 1)
        let clean = bulk(damage: 0)
        figures.set("best_raw_bps", clean.mode.bitRate, digits: 1)
        figures.set("best_mode_samples_per_bit", clean.mode.samplesPerBit, digits: 2)
        figures.set("goodput_ratio", clean.ratio)
        figures.set("goodput_bps", clean.ratio * clean.mode.bitRate, digits: 0)
        let lossy = bulk(damage: 0.01)
        figures.set("goodput_ratio_1pct_loss", lossy.ratio)
        figures.set("frames_damaged_1pct_run", Double(lossy.damaged))
        figures.set("demod_realtime_factor", demodRealtimeFactor(), digits: 0)
        return figures
    }

    /// Audio time from plug-in (the host starts handshaking into a fresh emulated Grokker)
    /// until the host holds the reader's identity.
    static func handshakeToIdentified() -> (ms: Double, info: ReaderInfo?) {
        let directory = "/tmp/grokbench-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard let grokker = try? EmulatedGrokker(benchDirectory: directory, index: 0, sampleRate: rate) else {
            return (.nan, nil)
        }
        let cable = SimulatedCablePort(name: "bench", sampleRate: rate, configuration: .clean, peer: grokker)
        let host = LinkEngine(role: .host, sampleRate: rate)
        let driver = LinkDriver(port: cable, engine: host, blockSize: 256)
        host.connect()
        var info: ReaderInfo?
        _ = try? driver.run(forAtMost: 5) {
            if let message = host.receive(), let announced = try? Announcement.decode(message) { info = announced.info }
            return info != nil
        }
        return (Double(host.now) * 1000 / Double(rate), info)
    }

    /// Host → device bulk transfer over a clean simulated cable after mode negotiation.
    static func bulk(damage: Double) -> (ratio: Double, mode: LinkMode, damaged: Int) {
        var hostConfig = LinkConfiguration()
        hostConfig.frameDamageProbability = damage
        let device = SinkDevice(configuration: LinkConfiguration())
        let cable = SimulatedCablePort(name: "bench", sampleRate: rate, configuration: .clean, peer: device)
        let host = LinkEngine(role: .host, sampleRate: rate, configuration: hostConfig)
        let driver = LinkDriver(port: cable, engine: host, blockSize: 256)
        host.connect()
        _ = try? driver.run(forAtMost: 10) { host.state == .connected && !host.negotiating }
        let total = 1 << 20
        let chunk = [UInt8](repeating: 0x5A, count: 16_384)
        for _ in 0..<(total / chunk.count) { try? host.send(chunk) }
        let start = host.now
        _ = try? driver.run(forAtMost: 3600) { device.received >= total }
        let seconds = Double(host.now - start) / Double(rate)
        let ratio = Double(total * 8) / (host.mode.bitRate * seconds)
        return (ratio, host.mode, device.engine.statistics.crcMismatches)
    }

    /// Audio seconds the base-mode demodulator decodes per CPU second.
    static func demodRealtimeFactor() -> Double {
        var synth = FrameSynthesizer(mode: .base, sampleRate: rate)
        var audio: [Float] = []
        var seq: UInt8 = 0
        while audio.count < rate * 300 {
            let payload = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seq)) }
            synth.append(Frame(type: .data, seq: seq, payload: payload), preambleBits: 8, to: &audio)
            seq &+= 1
        }
        var best = 0.0
        for _ in 0..<3 {
            let scanner = FrameScanner(mode: .base, sampleRate: rate)!
            let t0 = cpuSeconds()
            audio.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(1024, all.count - i)
                    scanner.scan(UnsafeBufferPointer(rebasing: all[i..<(i + n)]))
                    i += n
                }
            }
            let cpu = cpuSeconds() - t0
            precondition(scanner.found.allSatisfy { $0.status == .ok }, "benchmark audio must decode cleanly")
            best = max(best, Double(audio.count) / Double(rate) / cpu)
        }
        return best
    }

    static func cpuSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

