import Foundation
import GrokAudio
import GrokkerEmulator
import GrokLink
import GrokProtocol
import Synchronization
import UGrokIt

/// A bench job on many emulated Grokkers at once, paced to the wall clock as real sound
/// cards would be (`--realtime`): connect, identify, set the region, a one-second
/// inventory smoke test. `scale_16_vs_1` is the wall time with 16 at once over the time
/// with one: the host must never be what holds a bench back.
enum FleetBenchmark {
    static func run() -> Figures {
        var figures = Figures()
        let one = job(devices: 1)
        let sixteen = job(devices: 16)
        figures.set("wall_s_1", one.wall, digits: 2)
        figures.set("wall_s_16", sixteen.wall, digits: 2)
        figures.set("scale_16_vs_1", sixteen.wall / one.wall, digits: 3)
        figures.set("host_cpu_per_link", sixteen.hostCPU / sixteen.audio, digits: 4)
        figures.set("emulator_cpu_per_link", sixteen.deviceCPU / sixteen.audio, digits: 4)
        figures.set("smoke_reads_min_16", Double(sixteen.minReads))
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        figures.set("peak_rss_mb", Double(usage.ru_maxrss) / 1024, digits: 1)
        return figures
    }

    struct Outcome {
        var wall = 0.0
        /// Thread CPU seconds outside the cable (the host's modem, link, session), summed.
        var hostCPU = 0.0
        /// Thread CPU seconds inside the cable (its impairments and the emulated Grokker).
        var deviceCPU = 0.0
        /// Audio seconds, summed over the links.
        var audio = 0.0
        var minReads = Int.max
    }

    static func job(devices: Int) -> Outcome {
        let bench = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-fleet-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: bench) }
        // Units are made (and their flash programmed) before the clock starts.
        let grokkers = (0..<devices).map { try! EmulatedGrokker(benchDirectory: bench, index: $0) }
        let outcome = Mutex(Outcome())
        let group = DispatchGroup()
        let start = monotonic()
        for (index, grokker) in grokkers.enumerated() {
            group.enter()
            let unit = UncheckedBox(grokker)
            let thread = Thread {
                let port = TimedPort(SimulatedCablePort(name: "sim:\(index)", sampleRate: 44_100, configuration: .clean, peer: unit.value))
                var options = ReaderOptions()
                options.realtime = true
                let cpu0 = threadCPU()
                var reads = 0
                var audio = 0.0
                do {
                    let session = try ReaderSession(port: port, options: options)
                    defer { audio = session.elapsedMilliseconds / 1000 }
                    _ = try session.connect()
                    _ = try session.setRegion("FCC (US), IC (Canada)")
                    try session.startInventory(UgiRfidConfiguration.config(inventoryType: .inventoryShortRange))
                    try session.collect(forAtMost: 1)
                    _ = try session.stopInventory()
                    reads = session.takeReports().count
                } catch {
                    FileHandle.standardError.write(Data("grokbench fleet: sim:\(index): \(error)\n".utf8))
                }
                let cpu = threadCPU() - cpu0
                outcome.withLock {
                    $0.hostCPU += cpu - port.cpuInside
                    $0.deviceCPU += port.cpuInside
                    $0.audio += audio
                    $0.minReads = min($0.minReads, reads)
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return outcome.withLock {
            var result = $0
            result.wall = monotonic() - start
            return result
        }
    }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Hands a value that is used by one thread at a time to that thread.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A port that counts the thread CPU time spent inside the wrapped port's transfers.
private final class TimedPort: AudioPort {
    let inner: any AudioPort
    private(set) var cpuInside = 0.0

    init(_ inner: any AudioPort) { self.inner = inner }

    var name: String { inner.name }
    var sampleRate: Int { inner.sampleRate }
    var jackPlugged: Bool? { inner.jackPlugged }
    var levelShortfall: LevelShortfall? { inner.levelShortfall }
    func close() { inner.close() }

    func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        let t0 = FleetBenchmark.threadCPU()
        defer { cpuInside += FleetBenchmark.threadCPU() - t0 }
        try inner.transfer(output: output, input: input)
    }
}
