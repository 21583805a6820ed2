import Foundation
import GrokAudio
import GrokCrypto
import GrokFirmware
import GrokkerEmulator
import GrokLink
import GrokProtocol
import UGrokIt

/// Flashing a 64 KiB image of real machine code (firmware/demo/grokker-app-1.8.0.hex: the
/// start of libasound's x86-64 `.text`, through `objcopy -O ihex`) onto an out-of-the-box
/// emulated Grokker, in audio seconds from the first request to the confirmation (verify,
/// restart and reconnect included); and the host's SHA-256 verify speed next to
/// `openssl dgst -sha256`.
enum FlashBenchmark {
    static let hexPath = "firmware/demo/grokker-app-1.8.0.hex"

    static func run() -> Figures {
        var figures = Figures()
        let image = loadImage()
        figures.set("image_bytes", Double(image.bytes.count))
        let plain = (try? Deflater.compress(image.bytes, level: 9).count) ?? image.bytes.count
        figures.set("image_deflate_ratio", Double(plain) / Double(image.bytes.count), digits: 3)

        let fixed = flash(image, autoUpgrade: false)
        figures.set("flash_s_default", fixed.report.seconds, digits: 1)
        figures.set("default_mode_bps", Double(fixed.bps))
        figures.set("transfer_ratio", Double(fixed.report.encodedBytesSent) / Double(image.bytes.count), digits: 3)
        figures.set("transfer_encoding", "\(fixed.report.encoding)")
        figures.set("upload_s_default", fixed.upload, digits: 1)
        figures.set("switch_s_default", fixed.switching, digits: 1)
        let best = flash(image, autoUpgrade: true)
        figures.set("flash_s_best", best.report.seconds, digits: 1)
        figures.set("best_mode_bps", Double(best.bps))
        figures.set("raw_bits_s_default", Double(image.bytes.count * 8) / Double(fixed.bps), digits: 1)

        let (ours, openssl) = verifySpeeds()
        figures.set("verify_mb_per_s", ours, digits: 0)
        figures.set("openssl_dgst_mb_per_s", openssl, digits: 0)
        figures.set("verify_vs_openssl", ours / openssl, digits: 3)
        return figures
    }

    static func loadImage() -> FirmwareImage {
        do {
            let text = try Data(contentsOf: URL(fileURLWithPath: hexPath))
            let hex = try IntelHex.parse([UInt8](text), file: hexPath)
            guard let flat = hex.flattened() else { fatalError("\(hexPath) holds no data") }
            let firmware = FirmwareDescriptor(
                hardwareType: .grokker1, hardwareRevisions: [DeviceState.outOfBoxHardwareRevision],
                version: FirmwareVersion(major: 1, minor: 8, build: 0), buildDate: Date(timeIntervalSince1970: 1_790_000_000),
                readerProtocolVersion: ReaderInfo.vendorReaderProtocolVersion,
                appliesTo: [try VersionRange(min: FirmwareVersion(major: 1, minor: 0, build: 0),
                                             max: FirmwareVersion(major: 1, minor: 8, build: 0))])
            return FirmwareImage(firmware: firmware, loadAddress: flat.address, bytes: flat.bytes)
        } catch {
            fatalError("grokbench flash: cannot read \(hexPath) (run from the repository root): \(error)")
        }
    }

    /// One update; also the audio seconds of its upload and of its switch (activate,
    /// restart, reconnect, confirm).
    static func flash(_ image: FirmwareImage, autoUpgrade: Bool)
        -> (report: FirmwareUpdateReport, bps: Int, upload: Double, switching: Double) {
        let bench = FileManager.default.temporaryDirectory.appendingPathComponent("grokbench-flash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: bench) }
        do {
            var link = LinkConfiguration()
            link.autoUpgrade = autoUpgrade
            let grokker = try EmulatedGrokker(benchDirectory: bench, index: 0, link: link)
            let cable = SimulatedCablePort(name: "sim:0", sampleRate: 44_100, configuration: .clean, peer: grokker)
            var options = ReaderOptions()
            options.link = link
            let session = ReaderSession(port: cable, options: options)
            try session.connect()
            let bps = Int(session.engine.mode.bitRate)
            var starts: [(FirmwareUpdateProgress.Phase, Double)] = []
            let report = try FirmwareUpdater(session: session).update(to: image, progress: { progress in
                if starts.last?.0 != progress.phase { starts.append((progress.phase, session.elapsedMilliseconds / 1000)) }
            })
            starts.append((.confirming, session.elapsedMilliseconds / 1000))
            func span(_ from: FirmwareUpdateProgress.Phase, _ to: FirmwareUpdateProgress.Phase) -> Double {
                (starts.last { $0.0 == to }?.1 ?? 0) - (starts.first { $0.0 == from }?.1 ?? 0)
            }
            return (report, bps, span(.uploading, .verifying), span(.switching, .confirming))
        } catch {
            fatalError("grokbench flash: the update failed: \(error)")
        }
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
