import GrokAudio

/// A far end that sends back what it hears.
final class EchoPeer: CablePeer {
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        for i in input.indices { output[i] = input[i] }
    }
}

/// How fast the simulated cable runs: host samples per CPU second through an echoing peer.
enum CableBenchmark {
    static func run() -> Figures {
        var figures = Figures()
        let impaired = Impairments(gainDB: -6, snrDB: 20, dcOffset: 0.05, invertPolarity: true,
                                   highPassHz: 100, lowPassHz: 4000, dropoutMs: 10, dropoutEverySeconds: 1)
        let cases: [(String, CableConfiguration)] = [
            ("clean_matched", .clean),
            ("clean_500ppm", CableConfiguration(deviceClockPPM: 500, deviceClockDriftPPM: 50)),
            ("impaired_500ppm", CableConfiguration(hostToDevice: impaired, deviceToHost: impaired,
                                                   deviceClockPPM: 500, deviceClockDriftPPM: 50)),
        ]
        for (name, configuration) in cases {
            figures.set("\(name)_realtime_factor", measure(configuration), digits: 0)
        }
        return figures
    }

    static func measure(_ configuration: CableConfiguration) -> Double {
        let rate = 44_100
        let cable = SimulatedCablePort(name: "bench", sampleRate: rate, configuration: configuration, peer: EchoPeer())
        let block = 1024
        var out = [Float](repeating: 0, count: block)
        var input = [Float](repeating: 0, count: block)
        for i in 0..<block { out[i] = i % 12 < 6 ? 0.5 : -0.5 }
        let seconds = 120
        let blocks = seconds * rate / block
        let t0 = LinkBenchmark.cpuSeconds()
        for _ in 0..<blocks {
            out.withUnsafeBufferPointer { o in
                input.withUnsafeMutableBufferPointer { i in try? cable.transfer(output: o, input: i) }
            }
        }
        let cpu = LinkBenchmark.cpuSeconds() - t0
        return Double(blocks * block) / Double(rate) / cpu
    }
}
