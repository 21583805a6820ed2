import Foundation
import GrokBasics
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

/// The Grokker tells the technician through its own speaker: what each unit of a run on the
/// emulated bench played, read back from the unit's `sounds.log`.
@Suite("Reader cues")
struct ReaderCueTests {
    static let fcc = Profile.RegionPolicy(set: RegionCatalog.find("fcc"), allowed: RegionCatalog.find("fcc").map { [$0] } ?? [])
    static let standard = ReaderCues.standard.melodies

    /// Runs `profile` on emulated Grokker 0 (out of the box), and returns its report and the
    /// melodies the unit was asked to play, in order.
    static func run(_ profile: Profile, quiet: Bool = false) async throws -> (DeviceReport, [[SoundTone]]) {
        let bench = FleetBench()
        try bench.prepare(0, serial: 30_000_040)
        var options = bench.options(.provision)
        options.quietReaders = quiet
        let report = try await FleetRunner(profile: profile, firmware: nil, delegate: PolicyDelegate(profile: profile, mode: .provision),
                                           recorder: try TestLedger(), options: options).run([bench.device(0)])
        return (report.devices[0], PlayedSounds.read(directory: DeviceStateStore.deviceDirectory(in: bench.path, index: 0)))
    }

    @Test("a good unit plays recognised, then done, in that order")
    func goodUnit() async throws {
        let (report, played) = try await Self.run(Profile(name: "cues", region: Self.fcc))
        #expect(report.outcome == .done, "\(report.steps.map { "\($0.step) \($0.result) \($0.code)" })")
        #expect(played == [Self.standard[.recognised], Self.standard[.done]])
    }

    @Test("a unit whose smoke test fails plays recognised, then failed")
    func failedSmokeTest() async throws {
        let smoke = Profile.SmokeTestPolicy(duration: 0.2, minReadsPerSecond: 100_000)
        let (report, played) = try await Self.run(Profile(name: "cues", region: Self.fcc, retries: Profile.Retries(smokeTest: 0), smokeTest: smoke))
        #expect(report.outcome == .failed && report.step(.smokeTest)?.code == "fleet_smoke_test_failed")
        #expect(played == [Self.standard[.recognised], Self.standard[.failed]])
    }

    @Test("a unit whose region nobody chose (unattended, several allowed) plays recognised, then needs attention")
    func regionNotChosen() async throws {
        let region = Profile.RegionPolicy(set: nil, allowed: ["fcc", "australia"].compactMap(RegionCatalog.find))
        let (report, played) = try await Self.run(Profile(name: "cues", region: region))
        #expect(report.outcome == .refused && report.step(.region)?.code == "fleet_region_not_chosen")
        #expect(played == [Self.standard[.recognised], Self.standard[.attention]])
    }

    @Test("with quiet readers (--quiet-readers) the unit plays nothing, and its run is the same")
    func quiet() async throws {
        let (report, played) = try await Self.run(Profile(name: "cues", region: Self.fcc), quiet: true)
        #expect(report.outcome == .done)
        #expect(played.isEmpty)
    }

    @Test("the profile's cues are played: its own melody for done, none for a cue it silences")
    func profileCues() async throws {
        let json = #"{"format": 1, "name": "cues", "region": {"set": "fcc"}, "cues": {"recognised": false, "done": [{"frequency_hz": 3100, "duration_ms": 40}, {"frequency_hz": 0, "duration_ms": 20}, {"frequency_hz": 3900, "duration_ms": 60}]}}"#
        let profile = try Profile.parse(Array(json.utf8), file: "cues.json")
        let (report, played) = try await Self.run(profile)
        #expect(report.outcome == .done)
        #expect(played == [[SoundTone(frequencyHz: 3100, durationMs: 40), SoundTone(frequencyHz: 0, durationMs: 20),
                            SoundTone(frequencyHz: 3900, durationMs: 60)]])
    }

    static func step(_ step: FleetStep, _ result: StepResult, _ code: String) -> StepOutcome {
        StepOutcome(step: step, result: result, code: code, arguments: [], detail: "", firmwareBefore: nil, firmwareAfter: nil,
                    regionBefore: nil, regionAfter: nil, started: Date(timeIntervalSince1970: 0), duration: 0)
    }

    @Test("the closing cue: a low battery needs attention, a station's postponement or a stop plays none, nor does a unit never recognised")
    func closing() {
        let identified = Self.step(.identify, .done, "step_identified")
        #expect(ReaderCue.closing(.postponed, steps: [identified, Self.step(.firmware, .postponed, "fleet_battery_low")], mode: .provision) == .attention)
        #expect(ReaderCue.closing(.postponed, steps: [identified, Self.step(.firmware, .postponed, "fleet_outside_maintenance_window")], mode: .provision) == nil)
        #expect(ReaderCue.closing(.refused, steps: [identified, Self.step(.firmware, .refused, "fleet_downgrade_refused")], mode: .provision) == .failed)
        #expect(ReaderCue.closing(.interrupted, steps: [identified], mode: .provision) == nil)
        #expect(ReaderCue.closing(.notInStage, steps: [identified], mode: .provision) == nil)
        #expect(ReaderCue.closing(.refused, steps: [Self.step(.identify, .refused, "fleet_device_locked")], mode: .provision) == nil)
        #expect(ReaderCue.closing(.failed, steps: [Self.step(.connect, .failed, "fleet_reader")], mode: .provision) == nil)
    }

    @Test("a done unit that changed: done; one left as it was, or only verified, at a provision: already done (a greeting); verify's done: done")
    func closingAlreadyDone() {
        let identified = Self.step(.identify, .done, "step_identified")
        let record = Self.step(.record, .done, "step_recorded")
        #expect(ReaderCue.closing(.done, steps: [identified, Self.step(.provision, .done, "step_provisioned"), record], mode: .provision) == .done)
        #expect(ReaderCue.closing(.done, steps: [identified, Self.step(.smokeTest, .done, "step_smoke_test_passed"), record], mode: .rollout) == .done)
        #expect(ReaderCue.closing(.done, steps: [identified, Self.step(.provision, .skipped, "step_already_satisfied"), record], mode: .provision)
                == .alreadyDone)
        #expect(ReaderCue.closing(.done, steps: [identified, Self.step(.smokeTest, .done, "step_verified"), record], mode: .provision) == .alreadyDone)
        #expect(ReaderCue.closing(.done, steps: [identified, Self.step(.smokeTest, .done, "step_verified"), record], mode: .verify) == .done)
        #expect(ReaderCue.closing(.failed, steps: [identified, Self.step(.smokeTest, .failed, "fleet_smoke_test_failed")], mode: .provision) == .failed)
    }

    @Test("the shipped profiles play the standard cues, five distinct melodies", arguments: ["bench-us", "rollout-eu-night", "verify-us"])
    func shipped(_ name: String) throws {
        let profile = try Profile.load(path: repositoryRoot + "/profiles/\(name).json")
        #expect(profile.cues == .standard)
        #expect(Set(ReaderCue.allCases.compactMap { profile.cues.melodies[$0] }).count == ReaderCue.allCases.count)
    }

    static let base = #"{"format": 1, "name": "t", "cues": "#

    @Test("a bad cue is refused with its key path, what a cue must be and what was found", arguments: [
        (base + #"{"done": true}}"#, ["p.json", "cues.done", "true", "cue", "16"]),
        (base + #"{"done": []}}"#, ["p.json", "cues.done", "[…]", "cue", "16"]),
        (base + #"{"done": [{"frequency_hz": 100, "duration_ms": 50}]}}"#, ["p.json", "cues.done[0].frequency_hz", "100", "tone_frequency", "200", "8000"]),
        (base + #"{"failed": [{"frequency_hz": 2000, "duration_ms": 50}, {"frequency_hz": 2700.5, "duration_ms": 50}]}}"#,
         ["p.json", "cues.failed[1].frequency_hz", "2700.5", "tone_frequency"]),
        (base + #"{"attention": [{"frequency_hz": 2000, "duration_ms": 0}]}}"#, ["p.json", "cues.attention[0].duration_ms", "0", "whole_number_range", "1", "1000"]),
        (base + #"{"done": [{"frequency_hz": 2000, "duration_ms": 1000}, {"frequency_hz": 2000, "duration_ms": 1000}, {"frequency_hz": 2000, "duration_ms": 1000}, {"frequency_hz": 0, "duration_ms": 1}]}}"#,
         ["p.json", "cues.done", "3001 ms", "cue_length", "3000"]),
        (base + #"{"finished": false}}"#, ["p.json", "cues.finished", "recognised, done, already_done, failed, attention"]),
        (base + #"{"done": [{"frequency_hz": 2000}]}}"#, ["p.json", "cues.done[0].duration_ms"]),
        (base + #"false}"#, ["p.json", "cues", "false", "object"]),
    ])
    func badCue(_ json: String, _ arguments: [String]) {
        do {
            _ = try Profile.parse(Array(json.utf8), file: "p.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(Array(error.arguments.prefix(arguments.count)) == arguments, "\(error)")
        }
    }

    @Test("17 tones are one too many for a cue")
    func tooManyTones() {
        let tones = Array(repeating: #"{"frequency_hz": 2000, "duration_ms": 10}"#, count: ReaderCues.maxTones + 1).joined(separator: ", ")
        #expect(throws: FleetError.profileInvalid(file: "p.json", keyPath: "cues.done", expected: ErrorDetail("cue", ["16"]), found: "[…]")) {
            try Profile.parse(Array((Self.base + #"{"done": ["# + tones + "]}}").utf8), file: "p.json")
        }
    }
}
