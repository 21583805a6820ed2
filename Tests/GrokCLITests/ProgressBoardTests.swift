import Foundation
import GrokBasics
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The live bars: the ETA from measured progress, and lines that fit the terminal.
@Suite("Progress bars and ETA")
struct ProgressBoardTests {
    /// A firmware update as the emulated Grokker's link paces it (docs/benchmarks.md,
    /// "Flashing": 64-byte chunks, ~0.2 s of audio each, 1024 + 61440 bytes, resets between):
    /// connecting and the start request before the first byte, the loader image, the reset
    /// into the loader and its reconnect, the reader image (its first sectors erased on
    /// the way), then the last reset. Times are seconds of the link's sample clock.
    static func flashSeries() -> (samples: [(time: Double, done: Int)], end: Double, total: Int) {
        var samples: [(Double, Int)] = [(0, 0)]
        var time = 6.0  // handshake, GetVersion, battery, the loader's start request
        var done = 0
        let total = 1024 + 61_440
        for _ in 0..<16 { time += 0.2; done += 64; samples.append((time, done)) }
        time += 3.5  // ChangeSoftwareType, the reset into the loader, its reconnect
        samples.append((time, done))
        time += 0.4  // the reader image's start request
        for chunk in 0..<960 {
            time += chunk % 64 == 0 ? 0.35 : 0.2  // a sector erase every 4 KiB
            done += 64
            samples.append((time, done))
        }
        return (samples, time + 3.0, total)
    }

    @Test("after the first tenth of a flash the ETA is within 20 % of the time actually left")
    func etaFollowsTheMeasuredRate() {
        let series = Self.flashSeries()
        var estimate = ETAEstimate()
        var checked = 0
        for sample in series.samples {
            estimate.record(time: sample.time, done: sample.done, total: series.total)
            guard sample.done * 10 >= series.total, sample.time <= 0.9 * series.end else { continue }
            let truth = series.end - sample.time
            let told = estimate.remaining(at: sample.time)
            #expect(told.map { abs($0 - truth) <= 0.2 * truth } ?? false,
                    "at \(sample.time) s (\(sample.done) of \(series.total) bytes): ETA \(told ?? -1) s, truly \(truth) s")
            checked += 1
        }
        #expect(checked > 500)
    }

    @Test("the ETA follows a rate that changes (a link that slows to a third)")
    func etaFollowsAChangedRate() {
        var estimate = ETAEstimate()
        var time = 0.0
        var done = 0
        let total = 100_000
        estimate.record(time: 0, done: 0, total: total)
        while done < 30_000 { time += 0.1; done += 100; estimate.record(time: time, done: done, total: total) }
        // Now 333 bytes/s: 70,000 bytes take 210 s. Thirty seconds into the slow part the
        // estimate must have moved most of the way there.
        while done < 40_000 { time += 0.3; done += 100; estimate.record(time: time, done: done, total: total) }
        let truth = Double(total - done) / (100 / 0.3)
        let told = estimate.remaining(at: time) ?? 0
        #expect(abs(told - truth) <= 0.2 * truth, "ETA \(told) s, truly \(truth) s")
    }

    @Test("no ETA before anything moved, 0:00 when all is done, and a restart measures afresh")
    func etaEdges() {
        var estimate = ETAEstimate()
        #expect(estimate.remaining(at: 0) == nil)
        estimate.record(time: 0, done: 0, total: 1000)
        estimate.record(time: 30, done: 0, total: 1000)
        #expect(estimate.remaining(at: 30) == nil)
        estimate.record(time: 31, done: 100, total: 1000)
        // The 30 s of waiting before the first byte are not counted: 100 bytes a second.
        #expect(estimate.remaining(at: 31).map { abs($0 - 9) < 0.01 } == true)
        estimate.record(time: 32, done: 10, total: 1000)
        #expect(estimate.remaining(at: 32) == nil)
        estimate.record(time: 40, done: 1000, total: 1000)
        #expect(estimate.remaining(at: 40) == 0)
        #expect(ProgressBoard.clock(estimate.remaining(at: 40)) == "0:00")
        #expect(ProgressBoard.clock(nil) == "--:--")
        #expect(ProgressBoard.clock(65) == "1:05")
    }

    @Test("the board shows the estimate of the series it was given, in minutes and seconds")
    func boardShowsTheEstimate() throws {
        let sink = try DevNull()
        let board = ProgressBoard(labels: ["sim:0"], phase: "connecting", localizer: Localizer(language: .en),
                                  sink: sink.sink, columns: 120)
        let start = ContinuousClock.now
        board.update(row: 0, phase: "uploading", done: 0, total: 60_000, at: start)
        for second in 1...20 {
            board.update(row: 0, phase: "uploading", done: second * 1000, total: 60_000, at: start + .seconds(second))
        }
        #expect(board.eta(row: 0, at: start + .seconds(20)) == "0:40")
    }

    @Test("a fleet bar fills by its work but reads as steps, or as KiB during the update")
    func fleetAmounts() throws {
        let capture = try CaptureFile()
        let board = ProgressBoard(labels: ["sim:0"], phase: "connecting", localizer: Localizer(language: .en),
                                  sink: capture.sink, columns: 120)
        let start = ContinuousClock.now
        // Link milliseconds: 5.3 s of 215 done, five steps of nine finished.
        board.update(row: 0, phase: "smoke test", done: 5_300, total: 215_000, amounts: .steps(done: 5, total: 9), at: start)
        board.update(row: 0, phase: "firmware", done: 100_000, total: 215_000, amounts: .bytes(done: 30_720, total: 62_464),
                     at: start + .seconds(1))
        let lines = Self.drawnLines(try capture.contents()).filter { !$0.isEmpty }
        #expect(lines.contains { $0.contains(" 2%") && $0.contains("step 5/9") }, "\(lines)")
        #expect(lines.contains { $0.contains("46%") && $0.contains("30.0/61.0 KiB") }, "\(lines)")
    }

    @Test("a total that grows keeps the measured rate (the fleet learning its update's size)")
    func totalGrowsKeepsRate() {
        var estimate = ETAEstimate()
        for second in 0...20 { estimate.record(time: Double(second), done: second * 1000, total: 30_000) }
        #expect(estimate.remaining(at: 20) == 10)
        estimate.record(time: 21, done: 21_000, total: 221_000)
        #expect(estimate.remaining(at: 21) == 200)
    }

    /// Every line the board drew, escapes removed, split where the terminal would break it.
    static func drawnLines(_ bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        let plain = text.replacingOccurrences(of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
        // (A terminal's `\r\n` is one Character: split the scalars.)
        return plain.unicodeScalars.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" }
            .map { String(String.UnicodeScalarView($0)) }
    }

    @Test("on a 50-column terminal no bar is wider than the terminal, in every language", arguments: Language.allCases)
    func barsFitFiftyColumns(language: Language) throws {
        for labels in [["sim:0", "sim:63"], ["sim:0", "alsa:plughw:CARD=Device,DEV=0"]] {
            try drawFlash(labels: labels, language: language, expectBars: labels.count == 2 && labels[1] == "sim:63")
        }
    }

    func drawFlash(labels: [String], language: Language, expectBars: Bool) throws {
        let capture = try CaptureFile()
        let board = ProgressBoard(labels: labels, phase: "connecting",
                                  localizer: Localizer(language: language), sink: capture.sink, columns: 50)
        let start = ContinuousClock.now
        for step in 0...10 {
            for row in 0..<labels.count {
                board.update(row: row, phase: Localizer(language: language).text(.phaseUploading), done: step * 6_000 + 1,
                             total: 62_464, at: start + .seconds(step * 2 + row))
            }
        }
        board.finish(row: 1, message: Localizer(language: language).text(.progressFailed))
        let lines = Self.drawnLines(try capture.contents())
        if expectBars { #expect(lines.contains { $0.contains("[#") || $0.contains("[-") }, "\(lines)") }
        for line in lines { #expect(TextWidth.of(line) < 50, "\(TextWidth.of(line)) columns: \(line)") }
    }
}

/// A file the board writes to, read back by the test.
final class CaptureFile {
    let path: String
    let sink: FileDescriptorSink
    private let fd: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)").path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        sink = FileDescriptorSink(fileDescriptor: fd)
    }

    func contents() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    deinit {
        close(fd)
        unlink(path)
    }
}

/// A sink that throws its text away.
final class DevNull {
    let sink: FileDescriptorSink
    private let fd: Int32
    init() throws {
        fd = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        sink = FileDescriptorSink(fileDescriptor: fd)
    }
    deinit { close(fd) }
}
