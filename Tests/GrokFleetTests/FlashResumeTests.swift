import Foundation
import GrokBasics
import GrokFirmware
import GrokFleet
import GrokkerEmulator
import GrokTestSupport
import Synchronization
import Testing
import UGrokIt

/// A `firmware flash` stopped during the reader image's upload goes on, on a re-run, where
/// the unit stands (issue 23 item 4, issue 27 item 9): at the last 4 KiB boundary the unit
/// acknowledged, proven by ChangeSoftwareType's CRCs; when the unit's flash does not hold
/// what the journal says, the whole image is sent again.
@Suite("A stopped upload resumes")
struct FlashResumeTests {
    static let applicationBytes = 16_384

    /// Flashes the channel's 1.8.0 (a 16 KiB reader image) onto unit 0, stopping once the
    /// reader image's upload passed `stopAfter` bytes (never, when `nil`).
    static func flash(_ bench: FleetBench, _ fixture: FirmwareFixture, journal: UploadJournalFile,
                      stopAfter: Int? = nil) async throws -> (FlashReport, FlashLog) {
        var job = FlashJob(source: try await FlashJobTests.source(fixture, directory: bench.path))
        job.journal = journal
        let stop = Atomic<Bool>(false)
        let log = FlashLog()
        let report = await job.run([bench.device(0)], shouldCancel: { stop.load(ordering: .relaxed) }) { event in
            log.record(event)
            if let stopAfter, case .progress(_, .reader, let done, _) = event, done >= 256 + stopAfter {
                stop.store(true, ordering: .relaxed)
            }
        }
        return (report, log)
    }

    @Test("stopped past 9000 bytes of the reader image: the re-run starts at a 4 KiB boundary past 8192, sends fewer chunks, and the unit runs 1.8.0; the journal is gone after")
    func resumesWhereTheUnitStands() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 1001)
        let fixture = try await FirmwareFixture(directory: bench.path + "/firmware", applicationBytes: Self.applicationBytes)
        let journal = UploadJournalFile(directory: bench.path + "/uploads")
        let (stopped, _) = try await Self.flash(bench, fixture, journal: journal, stopAfter: 9000)
        #expect(stopped.cancelled == 1, "\(stopped.outcomes)")
        #expect(FileManager.default.fileExists(atPath: journal.path(1001)))

        let (again, _) = try await Self.flash(bench, fixture, journal: journal)
        guard case .done(_, _, let to, _, let report) = again.outcomes[0] else { Issue.record("\(again.outcomes)"); return }
        #expect(to == "1.8.0")
        #expect(report.resumedFromByte >= 8192 && report.resumedFromByte % 4096 == 0 && report.resumedFromByte < Self.applicationBytes,
                "\(report.resumedFromByte)")
        let whole = (Self.applicationBytes + report.chunkBytes - 1) / report.chunkBytes
        #expect(report.chunks < whole, "\(report.chunks) chunks of \(whole)")
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
        #expect(!FileManager.default.fileExists(atPath: journal.path(1001)))
    }

    @Test("a journal that claims more than the unit's flash holds: the unit refuses the CRCs, the whole image goes again, and the update succeeds")
    func wrongJournalFallsBack() async throws {
        let bench = FleetBench()
        try bench.prepare(0, serial: 1001)
        let fixture = try await FirmwareFixture(directory: bench.path + "/firmware", applicationBytes: Self.applicationBytes)
        let journal = UploadJournalFile(directory: bench.path + "/uploads")
        _ = try await Self.flash(bench, fixture, journal: journal, stopAfter: 2000)
        let image = try #require(fixture.images[FirmwareFixture.v180])
        let reader = try UgifImage.parse(String(decoding: image, as: UTF8.self), fileName: "GR-1_1-8-0_test.ugif").reader
        journal.record(serial: 1001, section: reader, bytes: Self.applicationBytes)
        #expect(journal.written(serial: 1001, section: reader) == Self.applicationBytes)

        let (again, _) = try await Self.flash(bench, fixture, journal: journal)
        guard case .done(_, _, let to, _, let report) = again.outcomes[0] else { Issue.record("\(again.outcomes)"); return }
        #expect(to == "1.8.0" && report.resumedFromByte == 0)
        #expect(try bench.state(0).firmwareVersion == FirmwareFixture.v180)
    }
}
