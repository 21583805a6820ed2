import Foundation
import GrokBasics
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The watching station's live screen (the same lines `station status` prints) with a port's
/// progress and ETA, and `station status` on a status file whose pid is now another process.
@Suite("A station's live line per port, and station status on a reused pid")
struct WatchScreenTests {
    private func status(pid: Int = 4242, pidStart: UInt64? = 1, updated: Date = Date(), ports: [WatchStatus.Port]) -> WatchStatus {
        WatchStatus(pid: pid, pidStart: pidStart, profile: "bench-us", profileFile: "/p/bench-us.json", mode: "provision",
                    runID: "run-7", started: Timestamp.iso8601(updated.addingTimeInterval(-60)), updated: Timestamp.iso8601(updated),
                    running: true, ports: ports, tally: WatchTally())
    }

    /// A line's cells (the table puts at least two spaces between them).
    private func cells(_ line: String) -> [String] {
        line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("a port mid-update shows its step's percentage and its ETA, in the language's numbers; one without a rate yet shows –")
    func screenLines() throws {
        let ports = [
            WatchStatus.Port(port: "sim:3", holds: "sim:3", serial: "81000003", step: "firmware", doing: "firmware_progress",
                             progress: WatchStatus.Progress(unit: .bytes, done: 21846, total: 65536), etaSeconds: 125.4),
            WatchStatus.Port(port: "usb:1-1.2", holds: "81000004", step: "connect", doing: "step_started"),
        ]
        for (language, percent) in [(Language.en, "33.3%"), (.de, "33,3 %")] {
            let localizer = Localizer(language: language)
            let lines = FleetWatch.screen(status(ports: ports), localizer: localizer)
            let header = try #require(lines.first)
            #expect(cells(header).count == 6 && header.contains(localizer.text(.watchColumnEta)), "\(lines)")
            let updating = try #require(lines.first { $0.hasPrefix("sim:3") })
            // 21846 of 65536 bytes is 33.33 %, shown down to the tenth; 125.4 s left is 2:06.
            #expect(cells(updating) == ["sim:3", "81000003", localizer.stepName(.firmware), percent, "2:06",
                                        localizer.watchDoing("firmware_progress")], "\(lines)")
            let starting = try #require(lines.first { $0.hasPrefix("usb:1-1.2") })
            #expect(cells(starting) == ["usb:1-1.2", "–", localizer.stepName(.connect), "–", "–", localizer.watchDoing("step_started")],
                    "\(lines)")
        }
    }

    @Test("station status: a pid that is now another process (another start time) is not the station; it stopped without closing its status")
    func reusedPid() throws {
        let state = try makeTemporaryDirectory()
        let environment = ["HOME": state, "XDG_STATE_HOME": state]
        let path = WatchStatus.path(stateDirectory: state + "/grokctl")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let pid = Int(getpid())
        let start = try #require(WatchStatus.processStart(pid: pid))
        func write(_ status: WatchStatus) throws {
            try JSONEncoder().encode(status).write(to: URL(fileURLWithPath: path))
        }
        try write(status(pid: pid, pidStart: start + 1, ports: []))
        let reused = runInProcess(["--lang", "en", "station", "status"], environment: environment)
        #expect(reused.standardOutput.hasPrefix(
            "No watch session is running: the one of run run-7 stopped without closing its status (process \(pid) has ended;"), "\(reused)")
        #expect(reused.standardOutput.contains("0 provisioned · 0 already done"), "\(reused)")
        let json = runInProcess(["--json", "station", "status"], environment: environment)
        #expect(json.standardOutput.contains("\"running\":false") && json.standardOutput.contains("\"state\":\"stopped_unclosed\""), "\(json)")
        // The same pid with its own start time, but a status not rewritten for a minute: not answering.
        let staleStatus = status(pid: pid, pidStart: start, updated: Date().addingTimeInterval(-60), ports: [])
        try write(staleStatus)
        let stale = runInProcess(["--lang", "en", "station", "status"], environment: environment)
        #expect(stale.standardOutput.hasPrefix("Watch session not answering: process \(pid) (profile bench-us, run run-7) is there,"), "\(stale)")
        // Its time as the user's language writes a date, not the file's ISO 8601.
        let updated = try #require(WatchStatus.date(staleStatus.updated))
        let german = runInProcess(["--lang", "de", "station", "status"], environment: environment)
        #expect(german.standardOutput.contains(LocaleFormat.dateTime(updated, .de)) && !german.standardOutput.contains("Z,"), "\(german)")
    }
}
