#if canImport(Glibc)
import Glibc
#endif
import GrokBasics
import Foundation
import GrokAudio
import GrokLink

/// An ordered set of named figures that prints as one JSON object.
struct Figures {
    private(set) var entries: [(String, String)] = []
    /// The comparisons that could not be made because a side of them failed: grokbench
    /// prints them with the rest (the key's value `"failed: …"`) and exits 1, so a figure
    /// with one side missing never passes for a measurement.
    private(set) var failures: [String] = []

    /// `key` could not be measured: one side of its comparison failed, for `reason`.
    mutating func fail(_ key: String, _ reason: String) {
        entries.append((key, "\"failed: \(reason.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""))
        failures.append("\(key): \(reason)")
    }

    mutating func set(_ key: String, _ value: Double, digits: Int = 3) {
        guard value.isFinite else {
            entries.append((key, "null"))
            return
        }
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

/// The host end of a bench link that keeps what it captured (device → host audio) for the
/// demodulator figures, up to `keep` samples.
final class RecordingHost: SamplePump {
    let link: VendorLink
    let keep: Int
    private(set) var captured: [Float] = []
    private(set) var events: [VendorLinkEvent] = []

    init(link: VendorLink, keep: Int) {
        self.link = link
        self.keep = keep
        captured.reserveCapacity(keep)
    }

    var now: Int64 { link.now }
    var sampleRate: Int { link.sampleRate }

    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        if captured.count < keep { captured += input.prefix(keep - captured.count) }
        link.process(input: input, output: output)
        events += link.drainEvents()
    }

    func drainEvents() -> [VendorLinkEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }
}

/// `grokbench link`: the vendor link (``VendorLink`` at both ends, ``SimulatedCablePort``
/// between them) at the vendor's default setting and at each of the nine samples per bit at
/// 44.1 kHz, on a cable whose device clock runs 300 ppm fast, with our receiver and Debian's
/// `minimodem` side by side; and, when `GROKCTL_VENDOR_SDK` names the vendor library, ours
/// against the vendor's receive path (`scripts/demod-vs-vendor.py`).
enum LinkBenchmark {
    static let rate = 44_100
    /// The device clock's offset on the bench cable.
    static let clockPPM = 300.0
    /// Bytes of firmware the bulk transfer carries.
    static let bulkBytes = 65_536
    /// Data bytes per ProgramReader (`[addr LE16][data]`, 250 bytes of payload at most).
    static let chunk = 248
    /// ProgramReader's opcode.
    static let programReader: UInt8 = 0x01
    /// Seconds of continuous FSK for the demodulator CPU figures.
    static let demodSeconds = 20.0

    static func run() -> Figures {
        var figures = Figures()
        figures.set("cable", "device clock +\(Int(clockPPM)) ppm, 256-sample blocks")
        figures.set("default_samples_per_bit", Double(VendorModemSetting.defaultSamplesPerBit))
        var rows: [(Int, Row)] = []
        for spb in VendorModemSetting.supportedSamplesPerBit {
            rows.append((spb, measure(samplesPerBit: spb)))
        }
        let minimodem = MinimodemProbe.find()
        if let base = rows.first(where: { $0.0 == VendorModemSetting.defaultSamplesPerBit })?.1 {
            add(base, prefix: "", minimodem: minimodem, samplesPerBit: VendorModemSetting.defaultSamplesPerBit, to: &figures)
        }
        for (spb, row) in rows { add(row, prefix: "spb\(spb)_", minimodem: minimodem, samplesPerBit: spb, to: &figures) }
        if minimodem == nil { figures.set("minimodem", "skipped: minimodem not installed (scripts/setup.sh --test)") }
        VendorComparison.run(into: &figures)
        return figures
    }

    /// What one setting measured.
    struct Row {
        var handshakeSamples: Int64?
        var bulkSamples: Int64?
        var bulkRetries = 0
        var bulkFailures = 0
        /// Our receiver on the device → host recording of the bulk run, µs per audio second.
        var demodRecordingMicros = Double.nan
        /// Our receiver on continuous random bytes, µs per audio second, and whether every
        /// byte came out right.
        var demodContinuousMicros = Double.nan
        var demodContinuousExact = false
    }

    static func add(_ row: Row, prefix: String, minimodem: MinimodemProbe?, samplesPerBit spb: Int, to figures: inout Figures) {
        let bps = Double(rate) / Double(spb)
        figures.set("\(prefix)raw_bps", bps, digits: 1)
        figures.set("\(prefix)handshake_ms", row.handshakeSamples.map { Double($0) * 1000 / Double(rate) } ?? .nan, digits: 1)
        if let samples = row.bulkSamples {
            let seconds = Double(samples) / Double(rate)
            let goodput = Double(bulkBytes * 8) / seconds
            figures.set("\(prefix)bulk_s", seconds, digits: 2)
            figures.set("\(prefix)goodput_bps", goodput, digits: 0)
            // Against the line's byte rate: 10 bits (start, 8 data, stop) carry 8.
            figures.set("\(prefix)goodput_ratio", goodput / (bps * 0.8))
        } else {
            figures.set("\(prefix)bulk_s", .nan)
        }
        figures.set("\(prefix)bulk_retries", Double(row.bulkRetries))
        figures.set("\(prefix)demod_us_per_audio_s", row.demodRecordingMicros, digits: 1)
        figures.set("\(prefix)demod_continuous_us_per_audio_s", row.demodContinuousMicros, digits: 1)
        if !row.demodContinuousExact { figures.set("\(prefix)demod_continuous_error", "bytes decoded wrong") }
        if let minimodem {
            let m = minimodem.measure(bitsPerSecond: bps, sampleRate: rate, seconds: 60)
            if !m.micros.isFinite {
                figures.fail("\(prefix)demod_cpu_vs_minimodem", "minimodem did not run at \(bps) bit/s")
            } else if !m.exact {
                // An anchor that decoded wrong did not do the same work: no ratio.
                figures.fail("\(prefix)demod_cpu_vs_minimodem", "minimodem did not decode every byte of its own FSK at \(bps) bit/s")
            } else {
                figures.set("\(prefix)minimodem_us_per_audio_s", m.micros, digits: 1)
                figures.set("\(prefix)minimodem_bytes_right", "all")
                figures.set("\(prefix)demod_cpu_vs_minimodem", row.demodContinuousMicros / m.micros, digits: 4)
            }
        }
    }

    /// Handshake, bulk transfer and receiver CPU at one setting.
    static func measure(samplesPerBit spb: Int) -> Row {
        var row = Row()
        guard let hostLink = try? VendorLink(role: .host, sampleRate: rate),
              let device = try? VendorLink(role: .device, sampleRate: rate) else { return row }
        device.packets.onRequest = { _ in .ack }
        let host = RecordingHost(link: hostLink, keep: 30 * rate)
        let cable = SimulatedCablePort(name: "bench", sampleRate: rate,
                                       configuration: CableConfiguration(deviceClockPPM: clockPPM), peer: device)
        let driver = LinkDriver(port: cable, engine: host, blockSize: 256)
        guard (try? hostLink.open(samplesPerBit: spb)) != nil, (try? device.start()) != nil else { return row }

        // Handshake: first sample until the host modem says connected (the event's own sample).
        _ = try? driver.run(forAtMost: 10) {
            for case .modem(.stateChanged(_, .connected, let at)) in host.drainEvents() { row.handshakeSamples = at }
            return row.handshakeSamples != nil && device.isConnected
        }
        guard row.handshakeSamples != nil else { return row }

        // Bulk: 64 KiB of ProgramReader requests, one in flight, each answered ACK_0.
        let start = hostLink.now
        var address = 0
        var pending = false
        var failed = false
        let data = (0..<bulkBytes).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let done = (try? driver.run(forAtMost: Double(bulkBytes) * Double(10 * spb) / Double(rate) * 3 + 30) {
            for event in host.drainEvents() {
                switch event {
                case .packet(.completed): pending = false
                case .packet(.failed): pending = false; failed = true; row.bulkFailures += 1
                default: break
                }
            }
            if failed { return true }
            if !pending {
                guard address < bulkBytes else { return true }
                let n = min(chunk, bulkBytes - address)
                let payload = [UInt8(address & 0xFF), UInt8(address >> 8 & 0xFF)] + data[address..<(address + n)]
                guard (try? hostLink.send(command: programReader, payload: payload)) != nil else { failed = true; return true }
                address += n
                pending = true
            }
            return false
        }) ?? false
        row.bulkRetries = hostLink.packets.statistics.sendRetries
        if done, !failed { row.bulkSamples = hostLink.now - start }

        let setting = try? VendorModemSetting(samplesPerBit: spb, sampleRate: rate)
        if let setting {
            row.demodRecordingMicros = demodMicros(host.captured, setting).micros
            let (samples, sent) = continuousFSK(setting, seconds: demodSeconds)
            let r = demodMicros(samples, setting)
            row.demodContinuousMicros = r.micros
            row.demodContinuousExact = r.bytes == sent
        }
        return row
    }

    /// Our host receiver over `samples` in 256-sample blocks (as the modem feeds it), best of
    /// three, thread CPU read once around the whole loop.
    static func demodMicros(_ samples: [Float], _ setting: VendorModemSetting) -> (micros: Double, bytes: [UInt8]) {
        var best = Double.infinity
        var bytes: [UInt8] = []
        for _ in 0..<3 {
            var demodulator = VendorFSKDemodulator(setting: setting)
            var out: [VendorFSKDemodulator.Byte] = []
            out.reserveCapacity(samples.count / setting.samplesPerByte + 1)
            let t0 = threadCPUSeconds()
            samples.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(256, all.count - i)
                    demodulator.process(UnsafeBufferPointer(rebasing: all[i..<(i + n)]), into: &out)
                    i += n
                }
            }
            best = min(best, threadCPUSeconds() - t0)
            bytes = out.map(\.value)
        }
        return (best * 1e6 / (Double(samples.count) / Double(setting.sampleRate)), bytes)
    }

    /// `seconds` of back-to-back random bytes at `setting`, after 20 bits of idle carrier.
    static func continuousFSK(_ setting: VendorModemSetting, seconds: Double) -> (samples: [Float], sent: [UInt8]) {
        var modulator = VendorFSKModulator()
        modulator.setCarrier(.data(setting))
        var rng = SplitMix64(seed: 0x6772_6F6B)
        let count = Int(seconds * Double(setting.sampleRate))
        let spb = setting.samplesPerBit
        let sent = (0..<(count / (10 * spb))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var samples = [Float](repeating: 0, count: count + 60 * spb)
        samples.withUnsafeMutableBufferPointer { b in
            modulator.render(into: UnsafeMutableBufferPointer(rebasing: b[0..<(20 * spb)]))
            modulator.enqueue(sent)
            modulator.render(into: UnsafeMutableBufferPointer(rebasing: b[(20 * spb)...]))
        }
        return (samples, sent)
    }

    static func cpuSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Debian's `minimodem` decoding its own FSK at a bit rate and sample rate: the CPU its
/// receiver needs per audio second (child CPU time of `minimodem --rx`, best of three).
struct MinimodemProbe {
    let path: String

    static func find() -> MinimodemProbe? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let p = "\(dir)/minimodem"
            if access(p, X_OK) == 0 { return MinimodemProbe(path: p) }
        }
        return nil
    }

    /// minimodem's receiver CPU per audio second on `seconds` of its own FSK, its start-up
    /// (its filter set-up is most of a run on short files) taken out: the CPU of a run on one
    /// second of audio is subtracted, and the difference divided by the extra audio.
    func measure(bitsPerSecond bps: Double, sampleRate: Int, seconds: Double) -> (micros: Double, exact: Bool) {
        let dir = NSTemporaryDirectory() + "grokbench-mm-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard let long = rxCPU(bps: bps, sampleRate: sampleRate, seconds: seconds, path: dir + "/long.wav"),
              let short = rxCPU(bps: bps, sampleRate: sampleRate, seconds: 1, path: dir + "/short.wav"),
              long.audio > short.audio else { return (.nan, false) }
        return ((long.cpu - short.cpu) * 1e6 / (long.audio - short.audio), long.exact)
    }

    /// Best of three CPU times of `minimodem --rx` on `seconds` of its own FSK.
    private func rxCPU(bps: Double, sampleRate: Int, seconds: Double, path wav: String) -> (cpu: Double, audio: Double, exact: Bool)? {
        let baud = bps == bps.rounded() ? String(Int(bps)) : String(bps)
        var rng = SplitMix64(seed: 7)
        // Printable text: minimodem's receiver prints what it decodes as bytes.
        let text = (0..<Int(seconds * bps / 10)).map { _ in UInt8(0x41 + rng.next() % 26) }
        guard run(["--tx", "-q", "-f", wav, "-R", String(sampleRate), baud], input: Data(text)) != nil,
              let audio = try? WAVFile.read(path: wav), audio.sampleRate > 0 else { return nil }
        var best = Double.infinity
        var exact = false
        for _ in 0..<3 {
            let before = childCPUSeconds()
            guard let out = run(["--rx", "-q", "-f", wav, baud], input: nil) else { return nil }
            best = min(best, childCPUSeconds() - before)
            exact = out.starts(with: Data(text))
        }
        return (best, Double(audio.frameCount) / Double(audio.sampleRate), exact)
    }

    private func run(_ arguments: [String], input: Data?) -> Data? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let inPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        guard (try? process.run()) != nil else { return nil }
        if let input {
            inPipe.fileHandleForWriting.write(input)
            try? inPipe.fileHandleForWriting.close()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? data : nil
    }

    private func childCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}

/// Ours against the vendor's receive path, when `GROKCTL_VENDOR_SDK` names the vendor's
/// library: a 12 spb session of data answers (a device `VendorLink` answering 32-byte requests
/// with their bytes) is recorded on the host's input, and `scripts/demod-vs-vendor.py` runs
/// both receivers on that file, without and with a +300 ppm clock (one implementation of
/// the noise, clock and packet counting: the script's). Needs the harness
/// (`scripts/vendor-harness.sh`, built into `GROKCTL_VENDOR_HARNESS` or
/// `.build/vendor-harness`) and the package root as the working directory.
enum VendorComparison {
    /// `grokbench vendor-demod`: the comparison alone, without the link's other figures.
    static func alone() -> Figures {
        var figures = Figures()
        run(into: &figures)
        return figures
    }

    static func run(into figures: inout Figures) {
        let env = ProcessInfo.processInfo.environment
        guard let sdk = env["GROKCTL_VENDOR_SDK"], !sdk.isEmpty else {
            figures.set("demod_cpu_vs_vendor", "skipped: GROKCTL_VENDOR_SDK is not set")
            figures.set("snr_margin_db_vs_vendor", "skipped: GROKCTL_VENDOR_SDK is not set")
            return
        }
        let root = FileManager.default.currentDirectoryPath
        let script = root + "/scripts/demod-vs-vendor.py"
        let harness = env["GROKCTL_VENDOR_HARNESS"] ?? root + "/.build/vendor-harness"
        if access(harness + "/vendorhost", X_OK) != 0 {
            _ = shell(["/bin/bash", root + "/scripts/vendor-harness.sh", harness])
        }
        // Asked for (the library is named) but impossible here: a failure, not a skip.
        guard access(script, R_OK) == 0, access(harness + "/vendorhost", X_OK) == 0 else {
            figures.fail("demod_cpu_vs_vendor", "no \(script) or no harness at \(harness) (run from the package root; scripts/vendor-harness.sh builds it)")
            return
        }
        let dir = NSTemporaryDirectory() + "grokbench-vendor-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard record(rec: dir + "/rec.raw", peer: dir + "/peer.jsonl", seconds: 12) else {
            figures.fail("demod_cpu_vs_vendor", "the recording session did not connect")
            return
        }
        for (ppm, suffix) in [(0, ""), (300, "_300ppm")] {
            let out = shell(["/usr/bin/env", "python3", script, harness, dir + "/rec.raw", dir + "/peer.jsonl",
                             "--spb", "12", "--ppm", String(ppm)]) ?? ""
            guard let last = out.split(separator: "\n").last,
                  let summary = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any] else {
                figures.fail("snr_margin_db_vs_vendor\(suffix)", "demod-vs-vendor.py gave no summary")
                continue
            }
            if let side = summary["failed"] as? String {
                let why = "\(side): \(summary["why"] as? String ?? "")"
                if ppm == 0 { figures.fail("demod_cpu_vs_vendor", why) }
                figures.fail("snr_margin_db_vs_vendor\(suffix)", why)
                continue
            }
            if ppm == 0, let cpu = summary["demod_cpu_vs_vendor"] as? Double { figures.set("demod_cpu_vs_vendor", cpu, digits: 4) }
            for key in ["snr_margin_db_vs_vendor", "ours_lowest_snr_db_99", "vendor_lowest_snr_db_99"] {
                figures.set(key + suffix, (summary[key] as? Double) ?? .nan, digits: 2)
            }
        }
    }

    /// A clean-cable session at 12 spb: the host sends 32-byte requests back to back, the
    /// device answers each with its bytes. Writes what the host captured (s16le mono) and
    /// the device's answers in grokpeer's event form (`{"dir":"tx","t":…,"bytes":"…"}`).
    static func record(rec: String, peer: String, seconds: Double) -> Bool {
        let rate = LinkBenchmark.rate
        guard let hostLink = try? VendorLink(role: .host, sampleRate: rate),
              let device = try? VendorLink(role: .device, sampleRate: rate) else { return false }
        device.packets.onRequest = { VendorReply(ResponsePacket(id: 0, data: $0.payload)) }
        let host = RecordingHost(link: hostLink, keep: Int(seconds * Double(rate)))
        let cable = SimulatedCablePort(name: "bench", sampleRate: rate, configuration: .clean, peer: device)
        let driver = LinkDriver(port: cable, engine: host, blockSize: 256)
        guard (try? hostLink.open()) != nil, (try? device.start()) != nil else { return false }
        var rng = SplitMix64(seed: 12)
        var lines: [String] = []
        _ = try? driver.run(forAtMost: seconds) {
            for case .packet(.requestReceived(let request, _)) in device.drainEvents() {
                if let bytes = try? ResponsePacket(id: 0, data: request.payload).encoded() {
                    let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
                    lines.append("{\"dir\":\"tx\",\"t\":\(Double(device.now) / Double(rate)),\"bytes\":\"\(hex)\"}")
                }
            }
            if hostLink.isConnected, !hostLink.packets.isSending {
                _ = try? hostLink.send(command: 0x10, payload: (0..<32).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            }
            return false
        }
        guard !lines.isEmpty else { return false }
        let pcm = host.captured.map { Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded()))).littleEndian }
        let data = pcm.withUnsafeBytes { Data($0) }
        return FileManager.default.createFile(atPath: rec, contents: data)
            && FileManager.default.createFile(atPath: peer, contents: Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    static func shell(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
