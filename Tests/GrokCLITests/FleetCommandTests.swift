import GrokBasics
import Foundation
import GrokFleet
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Synchronization
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository's root (shipped profiles, scenes and the demo channel).
private let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A station made at test time: a bench of four out-of-the-box emulated Grokkers holding
/// the demo scene, the shipped demo channel (firmware/demo-channel, a file:// TUF repository)
/// with a fresh TUF state directory, and a state directory (ledger, locks, reports).
/// Everything runs through the built grokctl.
final class FleetWorld {
    let root: String
    var bench: String { root + "/bench" }
    /// The station's trusted TUF metadata and verified images.
    var tufState: String { root + "/tuf-state" }
    var state: String { root + "/state" }
    var ledger: String { state + "/grokctl/ledger.sqlite" }
    static let profile = repositoryRoot + "/profiles/bench-us.json"

    init(devices: Int = 4) throws {
        root = try makeTemporaryDirectory()
        let files = FileManager.default
        for n in 0..<devices {
            try files.createDirectory(atPath: bench + "/sim-\(n)", withIntermediateDirectories: true)
            try files.copyItem(atPath: repositoryRoot + "/profiles/scenes/demo.json", toPath: bench + "/sim-\(n)/scene.json")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var environment: [String: String] { ["XDG_STATE_HOME": state, "HOME": root] }

    /// The TUF repository options: the shipped demo channel, its root.json, this world's state.
    var repository: [String] {
        ["--repository", repositoryRoot + "/firmware/demo-channel", "--trusted-root", repositoryRoot + "/firmware/demo-channel/root.json",
         "--state", tufState]
    }

    /// Options every fleet command here takes: the bench and the repository.
    var common: [String] { ["--bench", bench] + repository }

    func run(_ arguments: [String], input: String? = nil) throws -> RunResult {
        try runBinary(arguments, environment: environment, input: input)
    }

    func provision(_ extra: [String] = [], devices: String = "sim:0-3", profile: String = FleetWorld.profile,
                   input: String? = nil) throws -> RunResult {
        try run(["provision", "--profile", profile, "--device", devices, "--unattended"] + common + extra, input: input)
    }

    /// Emulated Grokker `n` as saved.
    func device(_ n: Int) throws -> DeviceState {
        try DeviceStateStore.openOrCreate(directory: bench, index: n).state
    }

    /// The bytes each Grokker keeps (state and flash).
    func deviceBytes(_ count: Int = 4) -> [Data?] {
        (0..<count).flatMap { n in
            ["state.json", "flash.bin"].map { FileManager.default.contents(atPath: bench + "/sim-\(n)/" + $0) }
        }
    }
}

/// Runs the built grokctl with `environment` (plus PATH), `input` on standard input.
func runBinary(_ arguments: [String], environment: [String: String], input: String?) throws -> RunResult {
    guard let input else { return try runBinary(arguments, environment: environment) }
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let process = Process()
    process.executableURL = try grokctlExecutable()
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
    let paths = ["in", "out", "err"].map { directory + "/" + $0 }
    try input.write(toFile: paths[0], atomically: true, encoding: .utf8)
    for path in paths.dropFirst() { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    let handles = try [FileHandle(forReadingFrom: URL(fileURLWithPath: paths[0])),
                       FileHandle(forWritingTo: URL(fileURLWithPath: paths[1])),
                       FileHandle(forWritingTo: URL(fileURLWithPath: paths[2]))]
    process.standardInput = handles[0]
    process.standardOutput = handles[1]
    process.standardError = handles[2]
    try process.run()
    process.waitUntilExit()
    for handle in handles { try handle.close() }
    return RunResult(status: process.terminationStatus, standardOutput: try String(contentsOfFile: paths[1], encoding: .utf8),
                     standardError: try String(contentsOfFile: paths[2], encoding: .utf8))
}

/// The FCC region's vendor number.
private let fcc: UInt16 = 1
/// Steps that change a Grokker: never done twice.
private let changingSteps = ["provision", "region", "firmware"]

extension CLI {
    @Suite("Fleet commands", .serialized)
    struct FleetCommandTests {
        @Test("provision four out-of-the-box Grokkers: 1.8.0, FCC, in the ledger; a second run changes nothing")
        func provisionFour() throws {
            let world = try FleetWorld()
            let first = try world.provision()
            #expect(first.status == 0, "\(first.standardOutput)\n\(first.standardError)")
            var serials: [String] = []
            for n in 0..<4 {
                let state = try world.device(n)
                #expect(state.firmwareVersion == FirmwareVersion(major: 1, minor: 8, build: 0), "sim:\(n)")
                #expect(state.region?.number == fcc, "sim:\(n)")
                serials.append(String(format: "%08u", state.serialNumber))
            }
            // The summary names every serial and the change.
            for serial in serials { #expect(first.standardOutput.contains(serial)) }
            #expect(first.standardOutput.contains("1.7.3 → 1.8.0"))

            let show = try world.run(["ledger", "show"])
            #expect(show.status == 0, "\(show.standardError)")
            for serial in serials { #expect(show.standardOutput.contains(serial)) }
            let history = try world.run(["ledger", "show", "--serial", serials[0]])
            #expect(history.status == 0 && history.standardOutput.contains("1.7.3 → 1.8.0"), "\(history.standardOutput)")

            let csv = try world.run(["ledger", "export", "--csv"])
            #expect(csv.status == 0, "\(csv.standardError)")
            let lines = csv.standardOutput.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines.first?.hasPrefix("id,run_id,serial,step") == true, "\(lines.first ?? "")")
            for serial in serials {
                for step in changingSteps {
                    #expect(lines.contains { $0.contains(",\(serial),\(step),") && $0.contains(",done,") }, "\(serial) \(step)")
                }
            }
            // A report file per run, and its plain-text log beside it.
            let reports = try FileManager.default.contentsOfDirectory(atPath: world.state + "/grokctl/reports").sorted()
            #expect(reports.count == 2 && reports[0].hasSuffix(".json") && reports[1] == reports[0].dropLast(5) + ".log", "\(reports)")

            // Again: every change is satisfied and skipped; the Grokkers' bytes do not change.
            let before = world.deviceBytes()
            let second = try world.provision()
            #expect(second.status == 0, "\(second.standardError)")
            let ledger = try Ledger.open(path: world.ledger)
            let runs = try ledger.runs()
            #expect(runs.count == 2)
            let rerun = try ledger.steps(run: runs.map(\.id).max()!)
            #expect(rerun.count == 4 * 9)
            for record in rerun where !["connect", "identify", "record"].contains(record.step) {
                #expect(record.result == .skipped, "\(record.serial) \(record.step) \(record.result)")
            }
            #expect(world.deviceBytes() == before)
        }

        @Test("kill -9 at seeded random moments, re-run: always converges, no change done twice, nothing missing")
        func killAndRerun() throws {
            var random = SplitMix64(seed: 0x5EED_F1EE7)
            var kills = 0
            // Six moments, each on a fresh bench: after a seeded number of finished steps (1 to
            // 30 of the run's 36) and a seeded delay of up to 2 ms, so kills land between steps
            // and inside them (a region being set, a firmware upload). Then a second kill at
            // another moment of the re-run, and a last run that must finish everything.
            for _ in 0..<6 {
                let world = try FleetWorld()
                var killedRuns = 0
                for _ in 0..<2 {
                    let afterSteps = Int.random(in: 1...30, using: &random)
                    let delay = Double(Int.random(in: 0...2000, using: &random)) / 1_000_000
                    if try killProvision(world, afterSteps: afterSteps, delay: delay) { killedRuns += 1 }
                }
                kills += killedRuns
                let last = try world.provision()
                #expect(last.status == 0, "\(last.standardOutput)\n\(last.standardError)")
                try checkConverged(world, killedRuns: killedRuns)
            }
            #expect(kills >= 5, "the runs ended before most kills")
        }

        private func checkConverged(_ world: FleetWorld, killedRuns: Int) throws {
            let ledger = try Ledger.open(path: world.ledger)
            let runs = try ledger.runs()
            // Two runs were started before the last one. A killed run is closed as interrupted by
            // the next process that opened the ledger, ending when it was last seen alive
            // (unless the kill came after it finished there, while the report was written, or
            // before it began there); a run the kill missed finished normally.
            #expect(runs.allSatisfy { $0.endedAt != nil }, "a run was left open: \(runs.map { ($0.id, $0.outcome) })")
            #expect(runs.filter { $0.outcome == .abandoned }.count <= killedRuns)
            let lastStart = runs.map(\.startedAt).max() ?? .distantPast
            for run in runs where run.outcome == .abandoned {
                // Last seen alive: after it began, before the runs that followed it.
                #expect(run.endedAt.map { $0 >= run.startedAt && $0 <= lastStart } == true, "run \(run.id)")
            }
            #expect(runs.count >= 1 + (2 - killedRuns) && runs.count <= 3, "\(runs.count) runs, \(killedRuns) killed")
            #expect(runs.max { $0.id < $1.id }?.outcome == .succeeded)
            #expect(try ledger.devices().count == 4)
            for n in 0..<4 {
                let state = try world.device(n)
                #expect(state.firmwareVersion == FirmwareVersion(major: 1, minor: 8, build: 0) && state.region?.number == fcc)
                let serial = String(format: "%08u", state.serialNumber)
                let device = try #require(try ledger.device(serial: serial))
                #expect(device.firmware == "1.8.0" && device.provisioned, "\(serial)")
                let steps = try ledger.steps(serial: serial)
                for step in changingSteps {
                    let done = steps.filter { $0.step == step && $0.result == .done }.count
                    #expect(done <= 1, "\(serial) \(step) done \(done) times")
                    // Nothing missing: the change is recorded as done, or (a kill between the
                    // Grokker's answer and the ledger's commit) the next run found it satisfied.
                    let found = steps.contains { $0.step == step && $0.result == .skipped && $0.code == "step_already_satisfied" }
                    #expect(done == 1 || found, "\(serial) \(step) missing from the ledger")
                }
                let tests = try ledger.smokeTests(serial: serial)
                #expect(tests.last?.passed == true, "\(serial): the latest smoke test did not pass")
            }
        }

        /// Starts `grokctl provision --json`, kills it with SIGKILL once `afterSteps` steps
        /// finished and `delay` passed. Returns whether it was killed (not finished first).
        /// Runs `grokctl provision --json` on a pipe and kills it (SIGKILL) right after the
        /// `afterSteps`-th finished step, `delay` seconds later. The pipe wakes the reader as
        /// soon as a line is written (stdout is unbuffered), so the kill lands within
        /// microseconds of that moment whatever the machine's speed, while the steps left
        /// take milliseconds at least. Returns whether the kill landed before the run ended.
        private func killProvision(_ world: FleetWorld, afterSteps: Int, delay: Double) throws -> Bool {
            let pipe = Pipe()
            let process = Process()
            process.executableURL = try grokctlExecutable()
            process.arguments = ["provision", "--profile", FleetWorld.profile, "--device", "sim:0-3", "--unattended", "--json"]
                + world.common
            process.environment = ["PATH": "/usr/bin:/bin"].merging(world.environment) { $1 }
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let reader = pipe.fileHandleForReading
            var text = ""
            var killed = false
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }  // the run ended (or was killed)
                text += String(decoding: chunk, as: UTF8.self)
                if !killed, text.components(separatedBy: "\"event\":\"step_finished\"").count - 1 >= afterSteps {
                    if delay > 0 { usleep(useconds_t(delay * 1_000_000)) }
                    killed = !text.contains("run_finished") && kill(process.processIdentifier, SIGKILL) == 0
                }
            }
            process.waitUntilExit()
            return killed && process.terminationReason == .uncaughtSignal
        }

        @Test("verify changes nothing: Grokker bytes equal, ledger unchanged but for the verify run's rows; with --quiet-readers the units play no cue")
        func verifyChangesNothing() throws {
            let world = try FleetWorld(devices: 2)
            let provision = try world.provision(devices: "sim:0-1")
            #expect(provision.status == 0, "\(provision.standardError)")
            // The shipped profile plays the standard cues: recognised, then done.
            let cues = ReaderCues.standard.melodies
            #expect(PlayedSounds.read(directory: world.bench + "/sim-0") == [cues[.recognised], cues[.done]])
            let ledger = try Ledger.open(path: world.ledger)
            let stepsBefore = try ledger.steps()
            let devicesBefore = try ledger.devices()
            let before = world.deviceBytes(2)
            let verify = try world.run(["verify", "--profile", repositoryRoot + "/profiles/verify-us.json", "--device", "sim:0-1",
                                        "--quiet-readers"] + world.common)
            #expect(verify.status == 0, "\(verify.standardOutput)\n\(verify.standardError)")
            #expect(world.deviceBytes(2) == before)
            #expect(PlayedSounds.read(directory: world.bench + "/sim-0").count == 2)
            #expect(PlayedSounds.read(directory: world.bench + "/sim-1").count == 2)
            let runs = try ledger.runs()
            let verifyRun = try #require(runs.first { $0.kind == .verify })
            let after = try ledger.steps()
            #expect(after.filter { $0.run != verifyRun.id } == stepsBefore)
            #expect(after.filter { $0.run == verifyRun.id }.allSatisfy { $0.result == .done || $0.result == .skipped })
            #expect(try ledger.devices().map(\.firmware) == devicesBefore.map(\.firmware))
        }

        @Test("--dry-run prints the plan and touches nothing (no ledger, no report, no image fetched, Grokkers unchanged)")
        func dryRun() throws {
            let world = try FleetWorld(devices: 2)
            // Let the Grokkers draw their serial numbers first (their first use writes state).
            let info = try world.run(["info", "--device", "sim:0-1", "--bench", world.bench])
            #expect(info.status == 0, "\(info.standardError)")
            let before = world.deviceBytes(2)
            let plan = try world.provision(["--dry-run"], devices: "sim:0-1")
            #expect(plan.status == 0, "\(plan.standardError)")
            #expect(plan.standardOutput.contains(text(.fleetPlanHeading, .en, "sim:0", String(format: "%08u", try world.device(0).serialNumber))))
            #expect(plan.standardOutput.contains(text(.fleetStepFirmware, .en)))
            // Reasons, not outcomes: the region to set, and the smoke test's result unknown.
            #expect(plan.standardOutput.contains(text(.fleetCodeStepRegionNeeded, .en, text(.fleetRegionNotSet, .en), Localizer.english.regionDisplay("fcc"))))
            #expect(!plan.standardOutput.contains(text(.fleetCodeStepSmokeTestPassed, .en)))
            // What a run would fetch, not that it was fetched.
            #expect(plan.standardOutput.contains(text(.fleetWouldFetch, .en, "GR-1_1-8-0_demo.ugif")), "\(plan.standardOutput)")
            #expect(!plan.standardOutput.contains(text(.fleetPrefetched, .en, "GR-1_1-8-0_demo.ugif")))
            #expect(world.deviceBytes(2) == before)
            #expect(!FileManager.default.fileExists(atPath: world.ledger))
            #expect(!FileManager.default.fileExists(atPath: world.state + "/grokctl/reports"))
        }

        @Test("policy at the command line: a region outside the profile's allowed list is refused, nothing set")
        func regionNotAllowed() throws {
            let world = try FleetWorld(devices: 1)
            var profile = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
            profile = profile.replacingOccurrences(of: "\"set\": \"fcc\"", with: "\"set\": \"etsi\"")
            #expect(profile.contains("\"set\": \"etsi\""))
            let file = world.root + "/bad-region.json"
            try profile.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try world.provision(devices: "sim:0", profile: file)
            #expect(result.status != 0)
            // Refused before any Grokker is touched, naming the file, the key and what is wrong.
            #expect(result.standardError.contains(file) && result.standardError.contains("region.set")
                && result.standardError.contains("region.allowed"), "\(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: world.bench + "/sim-0/state.json"))
            #expect(!FileManager.default.fileExists(atPath: world.ledger))
        }

        @Test("policy at the command line: a low battery postpones the update (exit 2), the region is still set")
        func lowBattery() throws {
            let world = try FleetWorld(devices: 1)
            let store = try DeviceStateStore.openOrCreate(directory: world.bench, index: 0)
            try store.update { $0.batteryPercent = 10 }
            let result = try world.provision(devices: "sim:0")
            #expect(result.status == 2, "\(result.standardOutput)\n\(result.standardError)")
            // The reason, without the device its line and its row name already.
            let reason = Localizer(language: .en).fleetMessage(code: "fleet_battery_low", arguments: ["sim:0", "10", "30"], about: "sim:0")
            #expect(result.standardOutput.contains("postponed: " + reason), "\(result.standardOutput)")
            #expect(!result.standardOutput.contains("sim:0: the battery"), "\(result.standardOutput)")
            #expect(try world.device(0).firmwareVersion == FirmwareVersion(major: 1, minor: 7, build: 3))
            #expect(try world.device(0).region?.number == fcc)
            let steps = try Ledger.open(path: world.ledger).steps()
            #expect(steps.contains { $0.step == "firmware" && $0.result == .postponed && $0.code == "fleet_battery_low" })
            // The unit asks for the technician: recognised, then the attention cue (charge it).
            let cues = ReaderCues.standard.melodies
            #expect(PlayedSounds.read(directory: world.bench + "/sim-0") == [cues[.recognised], cues[.attention]])
        }

        @Test("interactive at the terminal: the region the profile names is set without a question; update now, or postponed")
        func interactiveRun() throws {
            let world = try FleetWorld(devices: 2)
            // sim:0: 1 = update now (the profile names the region: nothing to ask about it).
            let now = try world.run(["provision", "--profile", FleetWorld.profile, "--device", "sim:0", "--interactive"] + world.common,
                                    input: "1\n")
            #expect(now.status == 0, "\(now.standardOutput)\n\(now.standardError)")
            #expect(now.standardOutput.contains(text(.promptFirmwareChoices, .en)))
            #expect(!now.standardOutput.contains(text(.promptRegionChoose, .en, text(.promptDevice, .en, "sim:0", String(format: "%08u", try world.device(0).serialNumber)))))
            #expect(try world.device(0).firmwareVersion == FirmwareVersion(major: 1, minor: 8, build: 0))
            #expect(try world.device(0).region?.number == fcc)
            // sim:1: 2 = postpone: region set, firmware left, exit 2 (incomplete).
            let later = try world.run(["provision", "--profile", FleetWorld.profile, "--device", "sim:1", "--interactive", "--lang", "de"]
                + world.common, input: "2\n")
            #expect(later.status == 2, "\(later.standardOutput)\n\(later.standardError)")
            #expect(later.standardOutput.contains(text(.promptFirmwareChoices, .de)))
            #expect(try world.device(1).region?.number == fcc)
            #expect(try world.device(1).firmwareVersion == FirmwareVersion(major: 1, minor: 7, build: 3))
        }
    }
}

/// Lines given in advance, as a technician would type them.
final class ScriptedLines: LineSource {
    private let lines: Mutex<[String]>
    init(_ lines: [String]) { self.lines = Mutex(lines) }
    func readLine() -> String? { lines.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
}

/// What the delegate wrote.
final class LockedBuffer: OutputSink, Sendable {
    private let buffer = Mutex("")
    func write(_ text: String) { buffer.withLock { $0 += text } }
    var text: String { buffer.withLock { $0 } }
}
