import Foundation
import GrokBasics
import Testing

@testable import GrokFleet

/// A station's status file: a port's progress and ETA (as a run's bar measures them), the
/// JSON it is kept in, and whether the station that wrote it still runs (its pid and that
/// process's start time, the file's age).
@Suite("A watching station's status: progress, ETA, and whether it runs")
struct WatchStatusTests {
    private func event(_ name: String, _ data: [String: EventValue] = [:]) -> FleetEvent {
        FleetEvent(event: name, device: "sim:3", serial: "81000003", time: Date(timeIntervalSince1970: 0), data: data)
    }

    private func status(pid: Int, pidStart: UInt64?, updated: Date, running: Bool = true, ports: [WatchStatus.Port] = []) -> WatchStatus {
        WatchStatus(pid: pid, pidStart: pidStart, profile: "bench-us", profileFile: "/p/bench-us.json", mode: "provision",
                    runID: "run-1", started: Timestamp.iso8601(updated.addingTimeInterval(-60)), updated: Timestamp.iso8601(updated),
                    running: running, ports: ports, tally: WatchTally())
    }

    @Test("a port's update has its bytes as progress and an ETA once work was measured moving; none before, none once finished")
    func updateProgress() throws {
        var port = PortProgress(smokeTestSeconds: 0)
        port.apply(event("step_started", ["step": "connect"]), at: 0)
        // Nothing has moved yet: no rate, so no ETA (and connect reports no progress of its own).
        #expect(port.eta(at: 0.5) == nil && port.progress(at: 0.5) == nil)
        port.apply(event("step_finished", ["step": "connect", "result": "done", "duration_s": .number(0.7)]), at: 0.7)
        port.apply(event("step_started", ["step": "firmware"]), at: 0.7)
        // In the firmware step before its first firmware_progress: no byte count known yet.
        #expect(port.progress(at: 1) == nil)
        port.apply(event("firmware_progress", ["image": "first", "done": .integer(6400), "total": .integer(64000)]), at: 20.7)
        let progress = try #require(port.progress(at: 20.7))
        #expect(progress == WatchStatus.Progress(unit: .bytes, done: 6400, total: 64000) && progress.fraction == 0.1)
        // FleetWork: 20.7 s of link time done (0.7 s connect + 6400 bytes at 0.2 s per 64) of
        // 207.61 s (connect as measured, identify 0.1, provision 0.9, region 0.5, the update's
        // 200 s + 2 + 3.3, reconnect 0.1, record 0.01); measured by ETAEstimate over the last
        // 20 s the work went at the clock's pace: 186.91 s left.
        #expect(try #require(port.eta(at: 20.7)) == 186.9)
        port.apply(event("device_finished", ["outcome": "done"]), at: 30)
        #expect(port.eta(at: 30) == nil)
    }

    @Test("a smoke test's progress is its seconds run, of the profile's length, at most that")
    func smokeTestProgress() {
        var port = PortProgress(smokeTestSeconds: 30)
        port.apply(event("step_started", ["step": "smoke_test"]), at: 5)
        #expect(port.progress(at: 17.34) == WatchStatus.Progress(unit: .seconds, done: 12.3, total: 30))
        #expect(port.progress(at: 40) == WatchStatus.Progress(unit: .seconds, done: 30, total: 30))
        port.apply(event("step_finished", ["step": "smoke_test", "result": "done", "duration_s": .number(30.6)]), at: 35.6)
        #expect(port.progress(at: 36) == nil)
        // Without a smoke test length in the profile there is nothing to measure it against.
        var none = PortProgress(smokeTestSeconds: 0)
        none.apply(event("step_started", ["step": "smoke_test"]), at: 5)
        #expect(none.progress(at: 10) == nil)
    }

    @Test("the status file keeps the pid's start time, a port's progress and ETA; an unknown ETA is left out")
    func jsonRoundTrip() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("watchstatus-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = WatchStatus.path(stateDirectory: directory)
        let ports = [
            WatchStatus.Port(port: "sim:3", holds: "sim:3", serial: "81000003", step: "firmware", doing: "firmware_progress",
                             progress: WatchStatus.Progress(unit: .bytes, done: 21846, total: 65536), etaSeconds: 125.4),
            WatchStatus.Port(port: "usb:1-1.2", holds: "81000004", step: "connect", doing: "step_started"),
        ]
        let written = status(pid: 4242, pidStart: 987654, updated: Date(timeIntervalSince1970: 1_800_000_000), ports: ports)
        try written.write(to: path)
        #expect(try WatchStatus.read(path: path) == written)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\"pid_start\" : 987654") && text.contains("\"eta_s\" : 125.4"), "\(text)")
        #expect(text.contains("\"unit\" : \"bytes\""), "\(text)")
        // The second port's ETA and progress are unknown: absent, not 0.
        #expect(text.components(separatedBy: "\"eta_s\"").count == 2 && text.components(separatedBy: "\"progress\"").count == 2, "\(text)")
    }

    @Test("a station runs only while its pid is there with the start time it recorded and its status is fresh")
    func stationState() throws {
        let pid = Int(getpid())
        let start = try #require(WatchStatus.processStart(pid: pid))
        let now = Date()
        #expect(status(pid: pid, pidStart: start, updated: now).state(at: now) == .running)
        // The pid is a live process, but not the one that wrote the file (another start time): a reused pid.
        #expect(status(pid: pid, pidStart: start + 1, updated: now).state(at: now) == .stoppedUnclosed)
        // Its process is there, but it stopped rewriting the file (every second while it runs).
        #expect(status(pid: pid, pidStart: start, updated: now.addingTimeInterval(-30)).state(at: now) == .notAnswering)
        #expect(status(pid: pid, pidStart: start, updated: now, running: false).state(at: now) == .stopped)
        // As another machine's /proc would say: no such process.
        #expect(status(pid: pid, pidStart: start, updated: now).state(at: now) { _ in nil } == .stoppedUnclosed)
    }

    @Test("a process's start time is field 22 of its stat, after a command that has spaces and parentheses; none for a zombie")
    func processStart() throws {
        #expect(WatchStatus.processStart(stat: "77 (we (ird) cmd)) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 555 19 20\n") == 555)
        #expect(WatchStatus.processStart(stat: "77 (short) S 1 2 3\n") == nil)
        // Exited, not yet reaped by its parent (a zombie keeps its pid and start time): not running.
        #expect(WatchStatus.processStart(stat: "77 (grokctl) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 555 19 20\n") == nil)
        #expect(WatchStatus.processStart(pid: Int(getpid())) != nil && WatchStatus.processStart(pid: -1) == nil)
    }
}
