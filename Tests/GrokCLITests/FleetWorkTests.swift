import Foundation
import GrokBasics
import GrokFleet
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// One Grokker's events from a captured `grokctl provision --json` stream
/// (Tests/Fixtures/fleet-eta; its README says how each was captured), with their times.
struct CapturedRun {
    let events: [FleetEvent]
    /// Seconds since the run's first event, one per event.
    let times: [Double]
    /// When the Grokker finished (`device_finished`), seconds since the first event.
    let end: Double

    static func load(_ name: String) throws -> CapturedRun {
        let text = try String(contentsOfFile: checkout + "/Tests/Fixtures/fleet-eta/" + name, encoding: .utf8)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var events: [FleetEvent] = []
        var dates: [Date] = []
        for line in text.split(separator: "\n") where !line.contains("\"run_finished\"") {
            let event = try JSONDecoder().decode(FleetEvent.self, from: Data(line.utf8))
            events.append(event)
            dates.append(try #require(formatter.date(from: event.time)))
        }
        let start = try #require(dates.first)
        let times = dates.map { $0.timeIntervalSince(start) }
        let end = try #require(events.lastIndex { $0.event == "device_finished" }.map { times[$0] })
        return CapturedRun(events: events, times: times, end: end)
    }

    /// The events a bar is redrawn at (the presenter updates the board on these).
    static let drawn: Set<String> = ["step_started", "firmware_progress", "step_finished"]

    /// Replays the run through `measure` (an event to the bar's done and total) and
    /// ``ETAEstimate``, as the board does, and judges the ETA at every redraw after the
    /// first tenth of the run and before its last tenth: within 20 % of the time truly left.
    func judge(_ measure: (FleetEvent) -> (done: Int, total: Int)) -> (checked: Int, misses: [String], worst: Double) {
        var estimate = ETAEstimate()
        var checked = 0
        var misses: [String] = []
        var worst = 0.0
        for (event, time) in zip(events, times) {
            let (done, total) = measure(event)
            guard Self.drawn.contains(event.event) else { continue }
            estimate.record(time: time, done: done, total: total)
            guard time >= end / 10, time <= end * 0.9 else { continue }
            checked += 1
            let truth = end - time
            let told = estimate.remaining(at: time)
            let error = told.map { abs($0 - truth) / truth } ?? .infinity
            worst = max(worst, error)
            if error > 0.2 {
                misses.append("at \(String(format: "%.1f", time)) s (\(event.event) \(event.data["step"]?.string ?? "")): ETA \(told.map { String(format: "%.1f", $0) } ?? "none") s, truly \(String(format: "%.1f", truth)) s")
            }
        }
        return (checked, misses, worst)
    }
}

/// The old bar (until this change): nine equal steps of 100, the firmware step filled by its bytes.
struct StepsModel {
    private var done = 0
    static let total = FleetStep.allCases.count * 100
    private func index(_ step: FleetStep) -> Int { FleetStep.allCases.firstIndex(of: step) ?? 0 }

    mutating func apply(_ event: FleetEvent) -> (done: Int, total: Int) {
        let step = event.data["step"]?.string.flatMap(FleetStep.init(rawValue:))
        switch event.event {
        case "step_started": if let step { done = index(step) * 100 }
        case "step_finished": if let step { done = (index(step) + 1) * 100 }
        case "firmware_progress":
            if let sent = event.data["done"]?.integer, let all = event.data["total"]?.integer, all > 0 {
                done = index(.firmware) * 100 + sent * 100 / all
            }
        default: break
        }
        return (done, Self.total)
    }
}

/// Builds a Grokker's events for the model alone.
private func event(_ name: String, _ data: [String: EventValue] = [:]) -> FleetEvent {
    FleetEvent(event: name, device: "sim:0", serial: "30000000", time: Date(timeIntervalSince1970: 0), data: data)
}

private func step(_ work: inout FleetWork, _ step: FleetStep, seconds: Double, result: String = "done") {
    work.apply(event("step_started", ["step": .string(step.rawValue)]))
    work.apply(event("step_finished", ["step": .string(step.rawValue), "result": .string(result), "duration_s": .number(seconds)]))
}

@Suite("A Grokker's fleet run as work in link time, and its ETA")
struct FleetWorkTests {
    @Test("without an update the work is the steps: finished ones as measured, the rest as expected; whole when the Grokker finished")
    func stepsAlone() {
        var work = FleetWork(smokeTestSeconds: 2)
        let fresh = work.total
        // No update expected: the reconnect and the final smoke test, which follow one, cost nothing.
        #expect(work.cost(.reconnect) == 0 && work.cost(.finalSmokeTest) == 0)
        #expect(work.cost(.smokeTest) == 2 + FleetWork.expected(.smokeTest))
        #expect(abs(fresh - FleetStep.allCases.filter { $0 != .reconnect && $0 != .finalSmokeTest }.map(work.cost).reduce(0, +)) < 1e-9)
        step(&work, .connect, seconds: 0.8)
        step(&work, .identify, seconds: 0.2)
        #expect(work.done == 1.0 && work.stepsDone == 2)
        #expect(abs(work.total - (1.0 + fresh - FleetWork.expected(.connect) - FleetWork.expected(.identify))) < 1e-9)
        step(&work, .provision, seconds: 1.2)
        step(&work, .region, seconds: 0.9)
        step(&work, .smokeTest, seconds: 2.6)
        step(&work, .firmware, seconds: 0.1, result: "skipped")
        step(&work, .reconnect, seconds: 0, result: "skipped")
        step(&work, .finalSmokeTest, seconds: 0, result: "skipped")
        step(&work, .record, seconds: 0.05)
        #expect(abs(work.done - 5.85) < 1e-9 && abs(work.total - 5.85) < 1e-9 && work.stepsDone == 9)
        work.apply(event("device_finished", ["outcome": "done"]))
        #expect(work.doneMilliseconds == work.totalMilliseconds)
    }

    @Test("an update costs its bytes over the link's rate, the reset into the loader and its completion; sent bytes count as done")
    func updateBytes() {
        var work = FleetWork(smokeTestSeconds: 2)
        for (name, seconds) in [(FleetStep.connect, 1.0), (.identify, 0.5), (.provision, 1.5), (.region, 1.0), (.smokeTest, 2.5)] {
            step(&work, name, seconds: seconds)
        }
        let before = work.total
        work.apply(event("step_started", ["step": "firmware"]))
        work.apply(event("firmware_update_started"))
        #expect(work.total == before, "nothing known of an update before its first progress")
        work.apply(event("firmware_progress", ["image": "first", "done": 0, "total": 62_464]))
        let upload = 62_464 * FleetWork.secondsPerFirmwareByte + FleetWork.resetSeconds + FleetWork.completionSeconds
        let after = 6.5 + upload + FleetWork.expected(.reconnect) + 2 + FleetWork.expected(.finalSmokeTest) + FleetWork.expected(.record)
        #expect(abs(work.total - after) < 1e-9 && work.done == 6.5)
        #expect(work.firmwareBytes == FleetWork.Bytes(done: 0, total: 62_464))
        work.apply(event("firmware_progress", ["image": "first", "done": 1024, "total": 62_464]))
        #expect(abs(work.done - (6.5 + 1024 * FleetWork.secondsPerFirmwareByte)) < 1e-9)
        // The reader image: the loader's reset is behind.
        work.apply(event("firmware_progress", ["image": "reader", "done": 1024, "total": 62_464]))
        #expect(abs(work.done - (6.5 + 1024 * FleetWork.secondsPerFirmwareByte + FleetWork.resetSeconds)) < 1e-9)
        // Finished: the step counts what it measured.
        work.apply(event("step_finished", ["step": "firmware", "result": "done", "duration_s": 210.25]))
        #expect(abs(work.done - (6.5 + 210.25)) < 1e-9 && work.stepsDone == 6)
    }

    @Test("a captured provision with an update: after the first tenth, the ETA is within 20 % of the time truly left")
    func capturedUpdateRun() throws {
        let run = try CapturedRun.load("provision-update.jsonl")
        #expect(run.events.contains { $0.event == "firmware_progress" } && run.end > 60)
        var work = FleetWork(smokeTestSeconds: 2)  // profiles/bench-us.json's smoke_test.duration_s
        let judged = run.judge { event in
            work.apply(event)
            return (work.doneMilliseconds, work.totalMilliseconds)
        }
        #expect(judged.checked > 100)
        #expect(judged.misses.isEmpty, "\(judged.misses.count) of \(judged.checked) misses, worst \(judged.worst): \(judged.misses.prefix(10))")
    }

    @Test("the old bar of nine equal steps misses the same check on the same capture")
    func stepsModelMisses() throws {
        let run = try CapturedRun.load("provision-update.jsonl")
        var steps = StepsModel()
        let judged = run.judge { steps.apply($0) }
        #expect(judged.checked > 100)
        // Off by more than 20 % at most redraws (on this capture: all 206, 3 to 27 times the time left).
        #expect(judged.misses.count * 2 > judged.checked, "the steps model missed only \(judged.misses.count) of \(judged.checked)")
    }

    @Test("a captured provision without an update: the bar counts the steps alone, and ends full")
    func capturedStepsRun() throws {
        let run = try CapturedRun.load("provision-no-update.jsonl")
        #expect(!run.events.contains { $0.event == "firmware_progress" })
        var work = FleetWork(smokeTestSeconds: 2)
        var last = (done: 0, total: 0)
        var totals: [Int] = []
        let judged = run.judge { event in
            work.apply(event)
            last = (work.doneMilliseconds, work.totalMilliseconds)
            totals.append(last.total)
            return last
        }
        #expect(work.stepsDone == FleetStep.allCases.count && last.done == last.total)
        // What the model expects of the steps is the run's length within 20 % from the start.
        let truth = Double(last.total)
        #expect(totals.allSatisfy { abs(Double($0) - truth) <= 0.2 * truth }, "\(totals.map { Double($0) / 1000 }) vs \(truth / 1000)")
        #expect(judged.misses.isEmpty, "\(judged.misses.count) of \(judged.checked) misses, worst \(judged.worst): \(judged.misses.prefix(10))")
    }
}
