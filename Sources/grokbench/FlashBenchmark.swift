import GrokBasics
import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokLink
import GrokProtocol
import UGrokIt

/// Updating an out-of-the-box emulated Grokker (1.7.3) with a 64 KiB `.ugif` through the
/// vendor procedure (FirmwareUpdater: the LOADER section, the reset into the loader, the
/// READER section, the reset into the application): audio seconds from the first request to
/// the unit answering on the new version, at the vendor's default setting (12 samples per
/// bit) and at each setting the unit accepts; and the host's SHA-256 verify speed next to
/// `openssl dgst -sha256`. The image: a 4 KiB loader (the demo loader, padded) at 0x0000 and
/// the demo channel's READER, the first 61440 bytes of firmware/demo/grokker-app-1.8.0.hex
/// (real machine code: the start of libasound's x86-64 `.text`), at 0x1000.
///
/// `update_s_end_to_end` is ours from plug-in to verified: our AutoConfig on a unit met for
/// the first time, the update and the reconnect on the new version. With `GROKCTL_VENDOR_SDK`
/// naming the vendor library, `update_time_vs_vendor_end_to_end` is that over the vendor
/// host's own (the harness' `vendorhost autoconfig firmware-update`, scripts/vendor-harness.sh:
/// its AutoConfig, then its update) on the same kind of out-of-the-box emulated Grokker and
/// the same image, in audio seconds; the vendor's run is in real time (about four minutes).
/// A vendor half that was asked for and failed fails the benchmark (exit 1, naming why).
enum FlashBenchmark {
    static let appHexPath = "firmware/demo/grokker-app-1.8.0.hex"
    static let loaderHexPath = "firmware/demo/grokker-loader-1.0.0.hex"

    static func run() -> Figures {
        var figures = Figures()
        let image = loadImage()
        let bytes = (image.loader?.bytes.count ?? 0) + image.reader.bytes.count
        figures.set("image_bytes", Double(bytes))
        let deflated = (try? Deflater.compress((image.loader?.bytes ?? []) + image.reader.bytes, level: 9).count) ?? bytes
        figures.set("image_deflate_ratio", Double(deflated) / Double(bytes), digits: 3)

        var accepted: [String] = []
        var oursDefault: Double?
        for samplesPerBit in VendorModemSetting.supportedSamplesPerBit {
            guard let report = flash(image, samplesPerBit: samplesPerBit) else { continue }
            accepted.append(String(samplesPerBit))
            figures.set("update_s_spb_\(samplesPerBit)", report.audioSeconds, digits: 1)
            if samplesPerBit == VendorModemSetting.defaultSamplesPerBit {
                figures.set("update_s_default", report.audioSeconds, digits: 1)
                oursDefault = report.audioSeconds
                figures.set("chunk_bytes", Double(report.chunkBytes))
                figures.set("chunks", Double(report.chunks))
                // The bytes' air time at this setting (a UART byte is 10 bits).
                let air = Double(bytes * 10 * samplesPerBit) / 44_100
                figures.set("update_vs_air_time_default", report.audioSeconds / air, digits: 3)
            }
        }
        figures.set("accepted_spb", accepted.joined(separator: ","))
        if oursDefault == nil { figures.fail("update_s_default", "our update at the vendor's default setting did not complete") }
        // Plug-in to verified on the new firmware, both hosts, the same kind of out-of-the-box
        // unit and the same image: ours (our AutoConfig, the update, the reconnect) over the
        // vendor host's (its AutoConfig, its update).
        let ours = endToEnd(image)
        if let ours {
            figures.set("update_s_end_to_end", ours.total, digits: 1)
            figures.set("autoconfig_s", ours.autoConfig, digits: 1)
            figures.set("end_to_end_spb", Double(ours.samplesPerBit))
            figures.set("end_to_end_chunk_cycle_ms", ours.chunkCycleMs, digits: 1)
        } else {
            figures.fail("update_s_end_to_end", "our AutoConfig and update did not complete")
        }
        switch vendorUpdateSeconds(image) {
        case .skipped(let why):
            figures.set("update_time_vs_vendor_end_to_end", "skipped: \(why)")
        case .failed(let why):
            figures.fail("update_time_vs_vendor_end_to_end", "the vendor host's AutoConfig and update: \(why)")
        case .measured(let vendor):
            figures.set("vendor_update_s", vendor.update, digits: 1)
            figures.set("vendor_end_to_end_s", vendor.endToEnd, digits: 1)
            figures.set("vendor_autoconfig_s", vendor.autoConfig, digits: 1)
            figures.set("vendor_end_to_end_spb", Double(vendor.samplesPerBit))
            figures.set("vendor_chunk_cycle_ms", vendor.chunkCycleMs, digits: 1)
            if let ours {
                figures.set("update_time_vs_vendor_end_to_end", ours.total / vendor.endToEnd, digits: 3)
            } else {
                figures.fail("update_time_vs_vendor_end_to_end", "our AutoConfig and update did not complete")
            }
        }

        let (verify, openssl) = verifySpeeds()
        figures.set("verify_mb_per_s", verify, digits: 0)
        figures.set("openssl_dgst_mb_per_s", openssl, digits: 0)
        figures.set("verify_vs_openssl", verify / openssl, digits: 3)
        return figures
    }

    /// The 64 KiB image: loader 1.0.0 (4096 bytes) and the demo READER (61440 bytes, 1.8.0).
    static func loadImage() -> UgifImage {
        do {
            func flat(_ path: String) throws -> [UInt8] {
                let text = try Data(contentsOf: URL(fileURLWithPath: path))
                let hex = try IntelHex.parse([UInt8](text), file: path)
                guard let flat = hex.flattened() else { fatalError("\(path) holds no data") }
                return flat.bytes
            }
            var loader = try flat(loaderHexPath)
            var state: UInt64 = 0x4C4F_4144
            while loader.count < 4096 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                loader.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            let reader = Array(try flat(appHexPath).prefix(61_440))
            return try UgifImage(hardwareTypeName: "GR-1", version: UgifVersion(major: 1, minor: 8, build: 0), date: "2026-11-01",
                                 loader: UgifSection(address: 0x0000, bytes: loader), reader: UgifSection(address: 0x1000, bytes: reader))
        } catch {
            fatalError("grokbench flash: cannot read \(appHexPath) / \(loaderHexPath) (run from the repository root): \(error)")
        }
    }

    /// One update at `samplesPerBit` onto a fresh out-of-the-box unit; `nil` when the unit
    /// does not connect at that setting.
    static func flash(_ image: UgifImage, samplesPerBit: Int) -> FirmwareUpdateReport? {
        let bench = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-flash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: bench) }
        do {
            let grokker = try EmulatedGrokker(benchDirectory: bench, index: 0)
            let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
            let session = try ReaderSession(port: cable, samplesPerBit: samplesPerBit)
            guard (try? session.connect()) != nil else { return nil }
            var options = FirmwareUpdateOptions()
            options.batteryPercent = nil
            let report = FirmwareUpdater(session: session, options: options).update(to: image)
            guard report.result == .success else {
                FileHandle.standardError.write(Data("grokbench flash: \(samplesPerBit) spb: \(report.result.vendorName) \(report.detail)\n".utf8))
                return nil
            }
            return report
        } catch {
            fatalError("grokbench flash: cannot make the emulated unit: \(error)")
        }
    }

    /// Ours, plug-in to verified: AutoConfig on a unit met for the first time (``LinkSetup``,
    /// nothing stored), then the update (which ends with the unit answering on the new
    /// version), in audio seconds from the first sample; nil when either failed.
    static func endToEnd(_ image: UgifImage) -> (total: Double, autoConfig: Double, samplesPerBit: Int, chunkCycleMs: Double)? {
        let bench = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-e2e-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: bench) }
        do {
            let grokker = try EmulatedGrokker(benchDirectory: bench, index: 0)
            let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
            let session = try ReaderSession(port: cable)
            guard let setup = try? LinkSetup(book: LinkSettingBook(), cardModel: "emulated").connect(session) else { return nil }
            let autoConfig = session.elapsedMilliseconds / 1000
            var options = FirmwareUpdateOptions()
            options.batteryPercent = nil
            var chunkEnds: [Double] = []
            let report = FirmwareUpdater(session: session, options: options).update(to: image, progress: { _ in
                chunkEnds.append(session.audioSeconds)
            })
            guard report.result == .success else {
                FileHandle.standardError.write(Data("grokbench flash: end to end: \(report.result.vendorName) \(report.detail)\n".utf8))
                return nil
            }
            return (session.elapsedMilliseconds / 1000, autoConfig, setup.samplesPerBit, medianCycleMilliseconds(chunkEnds))
        } catch {
            fatalError("grokbench flash: cannot make the emulated unit: \(error)")
        }
    }

    /// How the vendor side of the comparison went.
    enum VendorRun {
        /// Not asked for (no library named): the comparison is left out, and says so.
        case skipped(String)
        /// Asked for and failed: the comparison fails (grokbench exits 1).
        case failed(String)
        /// Audio seconds: the update alone (`firmware_update_started` to `firmware_completed`),
        /// and from the first sample (plug-in: AutoConfig, then the update) to its completion.
        /// Also its AutoConfig's end (audio seconds from the first sample) and the samples
        /// per bit it kept, so the two sides' settings are shown beside the ratio, and its
        /// median chunk cycle (between two progress reports) beside ours.
        case measured((update: Double, endToEnd: Double, autoConfig: Double, samplesPerBit: Int, chunkCycleMs: Double))
    }

    /// The vendor host's AutoConfig (`autoconfig`, from 12 spb) and update of `image` onto an
    /// out-of-the-box emulated Grokker, on the harness' sample clock.
    static func vendorUpdateSeconds(_ image: UgifImage) -> VendorRun {
        guard let sdk = ProcessInfo.processInfo.environment["GROKCTL_VENDOR_SDK"], !sdk.isEmpty else {
            return .skipped("GROKCTL_VENDOR_SDK is not set")
        }
        guard FileManager.default.isReadableFile(atPath: sdk) else { return .failed("GROKCTL_VENDOR_SDK=\(sdk) is not readable") }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-vendor-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        do {
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let build = Process()
            build.executableURL = URL(fileURLWithPath: "scripts/vendor-harness.sh")
            build.arguments = [work + "/harness"]
            build.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try build.run()
            build.waitUntilExit()
            guard build.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: work + "/harness/vendorhost") else {
                return .failed("the harness did not build (scripts/vendor-harness.sh)")
            }
            let file = work + "/" + image.fileName(name: "bench")
            try image.encoded().write(toFile: file, atomically: true, encoding: .utf8)
            let h2p = work + "/h2p", p2h = work + "/p2h", events = work + "/host.jsonl"
            guard mkfifo(h2p, 0o600) == 0, mkfifo(p2h, 0o600) == 0 else { return .failed("mkfifo failed") }
            let grokker = try EmulatedGrokker(benchDirectory: work + "/bench", index: 0)
            let host = Process()
            let arguments = ["--sdk", sdk, "--pcm-out", h2p, "--pcm-in", p2h, "--events", events,
                             "autoconfig", "12", "120", "firmware-update", file, "900"]
            // Every thread of the vendor host (its library's send loop too, not only the
            // harness' sound-card clock) at real-time priority where the system allows it, so
            // other work on this machine (builds) does not make it late, as nothing else on a
            // phone in use for an update would; without it, only a quiet machine measures it.
            let realtimeHost = canRunRealtime()
            if realtimeHost {
                host.executableURL = URL(fileURLWithPath: "/usr/bin/chrt")
                host.arguments = ["--fifo", "10", work + "/harness/vendorhost"] + arguments
            } else {
                host.executableURL = URL(fileURLWithPath: work + "/harness/vendorhost")
                host.arguments = arguments
            }
            host.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try host.run()
            let started = Date()
            let port = try RawPipePort(inputPath: h2p, outputPath: p2h)
            // The harness' sound-card clock runs at real-time priority; the emulated unit
            // feeding it must keep up too (the clock waits up to 30 ms for late samples, then
            // plays silence the unit never sent, which the underrun check below refuses).
            let realtime = RealtimePriority.raise()
            // Without real-time priority the vendor library's own threads (its send loop after
            // each ACK) run late on a busy machine and its figure comes out slower than the
            // library is: the load is sampled through the run.
            // The run is given up as soon as the load passes the core count.
            let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
            var busiest = 0.0, lastSample = Date.distantPast
            _ = try? DeviceRunner.run(grokker, on: port, shouldStop: {
                if Date().timeIntervalSince(lastSample) >= 5 {
                    lastSample = Date()
                    busiest = max(busiest, loadAverage())
                }
                return !host.isRunning || (!realtimeHost && busiest > cores) || Date().timeIntervalSince(started) > 1000
            })
            realtime.restore()
            port.close()
            if host.isRunning { host.terminate() }
            host.waitUntilExit()
            let text = (try? String(contentsOfFile: events, encoding: .utf8)) ?? ""
            var start: Double?, end: Double?, failure: String?
            var configured: Double?, samplesPerBit: Int?, underruns: Int?, firstUnderrun: Double?
            var chunkEnds: [Double] = []
            for line in text.split(separator: "\n") {
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                      let event = object["event"] as? String, let t = object["t"] as? Double else { continue }
                // Its AutoConfig's end and the setting it kept (the audio parameters' first
                // field is the samples per bit, as in the fixtures under autoconfig/).
                if event == "autoconfig_completed", (object["success"] as? Bool) == true {
                    configured = t
                    samplesPerBit = (object["audio_params"] as? [Any])?.first as? Int
                }
                if event == "firmware_update_started", (object["rc"] as? Int) == 0 { start = t }
                if event == "done" {
                    underruns = object["underruns_running"] as? Int
                    firstUnderrun = object["first_underrun_s"] as? Double
                }
                if event == "firmware_progress" { chunkEnds.append(t) }
                if event == "firmware_completed" {
                    let result = object["result"] as? Int ?? (object["a"] as? [Int])?.first
                    if result == 0 { end = t } else { failure = "firmware_completed with result \(result.map(String.init) ?? "?")" }
                }
            }
            guard realtimeHost || busiest <= cores else {
                return .failed("the machine was busy during the vendor host's real-time run (load average up to \(busiest) on \(Int(cores)) cores): its threads ran late, so its figure is not the library's; run again on a quieter machine")
            }
            guard let start, let end else {
                return .failed(failure ?? "no completed update in the vendor host's events (vendorhost exited \(host.terminationStatus))")
            }
            // Samples the harness had to invent once the emulated unit's audio had begun
            // (it was late; silence before its first sample is what the line carries): the
            // vendor host then heard silence mid-packet and its timers ran on a different
            // clock from ours, so its figure is not comparable (a busy machine does this).
            guard let underruns else { return .failed("the vendor host's events hold no final \"done\" (it did not finish)") }
            // Silence after the update ended (the unit stops when the host does) is no matter.
            if underruns > 0, (firstUnderrun ?? 0) < end {
                let at = firstUnderrun.map { " at \($0) s" } ?? ""
                return .failed("the harness ran short of the emulated unit's audio\(at) (\(underruns) samples of silence inserted): the machine could not keep real time; run again on a quieter machine")
            }
            guard let configured, let samplesPerBit else {
                return .failed("the vendor host's events hold no successful autoconfig_completed with its setting")
            }
            return .measured((update: end - start, endToEnd: end, autoConfig: configured, samplesPerBit: samplesPerBit,
                              chunkCycleMs: medianCycleMilliseconds(chunkEnds)))
        } catch {
            return .failed("\(error)")
        }
    }

    /// Whether `chrt --fifo` may be used here (root, or CAP_SYS_NICE).
    static func canRunRealtime() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chrt") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/chrt")
        probe.arguments = ["--fifo", "10", "/bin/true"]
        probe.standardError = FileHandle(forWritingAtPath: "/dev/null")
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    /// The one-minute load average (/proc/loadavg), 0 where it cannot be read.
    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
              let first = text.split(separator: " ").first else { return 0 }
        return Double(first) ?? 0
    }

    /// The median time between two consecutive chunk ends (audio seconds in), in ms: one
    /// chunk's request, the unit's work and its ACK, and what the host leaves idle.
    static func medianCycleMilliseconds(_ ends: [Double]) -> Double {
        let cycles = zip(ends.dropFirst(), ends).map { ($0 - $1) * 1000 }.sorted()
        return cycles.isEmpty ? .nan : cycles[cycles.count / 2]
    }

    /// SHA-256 of a 256 MiB file read in 1 MiB pieces, ours and `openssl dgst -sha256`'s,
    /// in MB/s of wall time (both read the file from the page cache).
    static func verifySpeeds() -> (Double, Double) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-verify-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let megabytes = 256
        var rng = SplitMix64(seed: 7)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        FileManager.default.createFile(atPath: path, contents: nil)
        let writer = FileHandle(forWritingAtPath: path)!
        for _ in 0..<megabytes {
            for i in stride(from: 0, to: chunk.count, by: 8) {
                let value = rng.next()
                for j in 0..<8 { chunk[i + j] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(j))) }
            }
            writer.write(Data(chunk))
        }
        try? writer.close()
        func wall(_ body: () -> Void) -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        // Warm the page cache, then take the best of three for each.
        var ours = Double.infinity, theirs = Double.infinity
        var digest = ""
        for _ in 0..<3 {
            ours = min(ours, wall {
                let reader = FileHandle(forReadingAtPath: path)!
                let hasher = try! SHA256()
                while let piece = try? reader.read(upToCount: 1 << 20), !piece.isEmpty {
                    piece.withUnsafeBytes { hasher.update($0) }
                }
                digest = hasher.finalize().hex
                try? reader.close()
            })
            theirs = min(theirs, wall {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
                process.arguments = ["dgst", "-sha256", path]
                let out = Pipe()
                process.standardOutput = out
                try! process.run()
                let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                precondition(text.contains(digest) || digest.isEmpty, "openssl and grokctl disagree on the digest")
            })
        }
        return (Double(megabytes) * 1.048576 / ours, Double(megabytes) * 1.048576 / theirs)
    }
}

/// SCHED_FIFO for the calling thread while a real-time peer depends on it (where the system
/// allows it: root or CAP_SYS_NICE); `restore()` puts back what it had.
struct RealtimePriority {
    private let policy: Int32
    private let parameters: sched_param
    private let raised: Bool

    static func raise(priority: Int32 = 10) -> RealtimePriority {
        var policy: Int32 = 0
        var old = sched_param()
        pthread_getschedparam(pthread_self(), &policy, &old)
        var wanted = sched_param()
        wanted.sched_priority = priority
        let raised = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &wanted) == 0
        if !raised { FileHandle.standardError.write(Data("grokbench flash: no real-time priority for the emulated unit (the vendor half may run short on a busy machine)\n".utf8)) }
        return RealtimePriority(policy: policy, parameters: old, raised: raised)
    }

    func restore() {
        guard raised else { return }
        var old = parameters
        pthread_setschedparam(pthread_self(), policy, &old)
    }
}
