// demod-measure: the host demodulator's CPU per audio second and what it decodes, on a
// synthetic signal or on a recording (raw s16le mono). Test-free; built by
// scripts/demod-measure.sh together with the modem's sources (no package target).
//
//   demod-measure synth SPB [RATE] [SECONDS] [REPEATS]   continuous random bytes
//   demod-measure rec FILE SPB [RATE] [REPEATS]          a recording; prints the bytes
#if canImport(Glibc)
import Glibc
#endif

func threadCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Runs the demodulator over `samples` in 256-sample blocks (as the modem feeds it).
func run(_ samples: [Float], _ setting: VendorModemSetting) -> (cpu: Double, bytes: [UInt8], measurements: Int, gated: Int) {
    var d = VendorFSKDemodulator(setting: setting)
    var out: [VendorFSKDemodulator.Byte] = []
    out.reserveCapacity(samples.count / 8)
    // The clock is read around the whole loop: reading the thread CPU clock costs about a
    // microsecond, as much as the demodulator spends on a block.
    let t0 = threadCPU()
    samples.withUnsafeBufferPointer { all in
        var i = 0
        while i < all.count {
            let n = min(256, all.count - i)
            d.process(UnsafeBufferPointer(rebasing: all[i..<(i + n)]), into: &out)
            i += n
        }
    }
    let cpu = threadCPU() - t0
    return (cpu, out.map(\.value), d.measurements, d.gatedHalfBits)
}

@main
struct Main {
    static func main() throws {
        let a = CommandLine.arguments
        guard a.count >= 3 else {
            print("usage: demod-measure synth SPB [RATE] [SECONDS] [REPEATS] | rec FILE SPB [RATE] [REPEATS]")
            exit(2)
        }
        if a[1] == "synth" {
            let spb = Int(a[2])!
            let rate = a.count > 3 ? Int(a[3])! : 44_100
            let seconds = a.count > 4 ? Double(a[4])! : 20
            let repeats = a.count > 5 ? Int(a[5])! : 5
            let s = try VendorModemSetting(samplesPerBit: spb, sampleRate: rate)
            var m = VendorFSKModulator()
            m.setCarrier(.data(s))
            var rng: UInt64 = 0x9E37_79B9_7F4A_7C15
            let count = Int(seconds * Double(rate))
            var sent: [UInt8] = []
            for _ in 0..<(count / (10 * spb) + 1) {
                rng = rng &* 6364136223846793005 &+ 1442695040888963407
                sent.append(UInt8(truncatingIfNeeded: rng >> 33))
            }
            var samples = [Float](repeating: 0, count: count + 40 * spb)
            samples.withUnsafeMutableBufferPointer { b in
                // 20 bits of idle, then the bytes back to back.
                m.render(into: UnsafeMutableBufferPointer(rebasing: b[0..<(20 * spb)]))
                m.enqueue(sent)
                m.render(into: UnsafeMutableBufferPointer(rebasing: b[(20 * spb)...]))
            }
            var cpus: [Double] = []
            var got: [UInt8] = []
            var measurements = 0
            var gated = 0
            for _ in 0..<repeats {
                let r = run(samples, s)
                cpus.append(r.cpu)
                got = r.bytes
                measurements = r.measurements
                gated = r.gated
            }
            cpus.sort()
            let audio = Double(samples.count) / Double(rate)
            let right = zip(got, sent).prefix(while: { $0 == $1 }).count
            print("{\"mode\":\"synth\",\"spb\":\(spb),\"rate\":\(rate),\"audio_seconds\":\(audio),\"bytes_sent\":\(sent.count),\"bytes_decoded\":\(got.count),\"bytes_right_in_order\":\(right),\"measurements_per_sample\":\(Double(measurements) / Double(samples.count)),\"gated_half_bits\":\(gated),\"cpu_seconds_min\":\(cpus[0]),\"cpu_seconds_median\":\(cpus[cpus.count / 2]),\"cpu_per_audio_second_min\":\(cpus[0] / audio),\"cpu_per_audio_second_median\":\(cpus[cpus.count / 2] / audio)}")
        } else {
            let path = a[2]
            let spb = Int(a[3])!
            let rate = a.count > 4 ? Int(a[4])! : 44_100
            let repeats = a.count > 5 ? Int(a[5])! : 5
            let s = try VendorModemSetting(samplesPerBit: spb, sampleRate: rate)
            guard let f = fopen(path, "rb") else { print("cannot open \(path)"); exit(1) }
            var raw: [Int16] = []
            var chunk = [Int16](repeating: 0, count: 65_536)
            while true {
                let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 2, 65_536, f) }
                if n == 0 { break }
                raw += chunk[0..<n]
            }
            fclose(f)
            let samples = raw.map { Float(Int16(littleEndian: $0)) / 32_768 }
            var cpus: [Double] = []
            var got: [UInt8] = []
            var measurements = 0
            var gated = 0
            for _ in 0..<repeats {
                let r = run(samples, s)
                cpus.append(r.cpu)
                got = r.bytes
                measurements = r.measurements
                gated = r.gated
            }
            cpus.sort()
            let audio = Double(samples.count) / Double(rate)
            let hex = got.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            print("{\"mode\":\"rec\",\"recording\":\"\(path)\",\"spb\":\(spb),\"rate\":\(rate),\"audio_seconds\":\(audio),\"bytes_received\":\(got.count),\"measurements_per_sample\":\(Double(measurements) / Double(samples.count)),\"gated_half_bits\":\(gated),\"cpu_seconds_min\":\(cpus[0]),\"cpu_seconds_median\":\(cpus[cpus.count / 2]),\"cpu_per_audio_second_min\":\(cpus[0] / audio),\"cpu_per_audio_second_median\":\(cpus[cpus.count / 2] / audio),\"received\":\"\(hex)\"}")
        }
    }
}
