import GrokBasics
import Foundation
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository's root (the verify profile).
private let root: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// The steps that change a Grokker.
private let changing = ["provision", "region", "firmware"]

/// A running `grokctl provision --json` whose standard output the test reads.
private final class RunningProvision {
    let process = Process()
    let reader: FileHandle
    var text = ""

    init(_ world: FleetWorld, devices: String = "sim:0-3", profile: String = FleetWorld.profile, before: [String] = [],
         environment extra: [String: String] = [:]) throws {
        let pipe = Pipe()
        process.executableURL = try grokctlExecutable()
        process.arguments = before + ["provision", "--profile", profile, "--device", devices, "--unattended", "--json"] + world.common
        process.environment = ["PATH": "/usr/bin:/bin"].merging(world.environment) { $1 }.merging(extra) { $1 }
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        reader = pipe.fileHandleForReading
        try process.run()
    }

    /// Reads until `count` steps finished (or the output ends); whether the run is still going.
    func waitForSteps(_ count: Int) -> Bool {
        while text.components(separatedBy: "\"event\":\"step_finished\"").count - 1 < count {
            let chunk = reader.availableData
            if chunk.isEmpty { return false }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return !text.contains("run_finished")
    }

    /// The `run_finished` line's fields, once read.
    var summary: [String: Any]? {
        text.split(separator: "\n").lazy.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.first { $0["event"] as? String == "run_finished" }
    }

    /// Reads to the end and waits for the process.
    func finish() {
        while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        process.waitUntilExit()
    }
}

extension CLI {
    @Suite("Fleet chaos", .serialized)
    struct FleetChaosTests {
        /// What must hold after anything: the ledger's devices are the Grokkers that exist,
        /// every change on every Grokker has exactly one author in the ledger, every run is
        /// closed, no intent is left open, no temporary file is left, and `verify` passes on
        /// every Grokker the ledger calls done (here: all, after a last run).
        private func checkInvariants(_ world: FleetWorld, count: Int = 4, _ label: String) throws {
            let ledger = try Ledger.open(path: world.ledger, readOnly: true)
            let serials = try (0..<count).map { String(format: "%08u", try world.device($0).serialNumber) }
            let recorded = try ledger.devices().map(\.serial)
            #expect(Set(recorded) == Set(serials), "\(label): ledger devices \(recorded) vs \(serials)")
            for serial in serials {
                let steps = try ledger.steps(serial: serial)
                for step in changing {
                    let done = steps.filter { $0.step == step && $0.result == .done }.count
                    #expect(done == 1, "\(label): \(serial) \(step) has \(done) authors")
                }
            }
            let runs = try ledger.runs()
            #expect(runs.allSatisfy { $0.endedAt != nil }, "\(label): open runs \(runs.filter { $0.endedAt == nil }.map(\.id))")
            let open = try ledger.intents(openOnly: true)
            #expect(open.isEmpty, "\(label): open intents \(open)")
            var left: [String] = []
            if let walker = FileManager.default.enumerator(atPath: world.bench) {
                for case let name as String in walker where name.contains(".tmp-") || name.contains(".factory-") { left.append(name) }
            }
            #expect(left.isEmpty, "\(label): temporary files left \(left)")
            let verify = try world.run(["verify", "--profile", root + "/profiles/verify-us.json", "--device", "sim:0-\(count - 1)"]
                + world.common)
            #expect(verify.status == 0, "\(label): verify \(verify.standardOutput)\n\(verify.standardError)")
        }

        @Test("two and four processes started together on the same fresh Grokkers: one identity each, no phantom, no change twice")
        func sameFreshGrokkers() throws {
            for processes in [2, 4, 2] {
                let world = try FleetWorld()
                let runs = try (0..<processes).map { _ in try RunningProvision(world) }
                for run in runs { run.finish() }
                for run in runs {
                    #expect(run.process.terminationReason == .exit && [0, 2].contains(run.process.terminationStatus),
                            "\(processes) processes: status \(run.process.terminationStatus)")
                }
                // Whoever was refused a port finishes nothing there; a last run finishes what is left.
                let last = try world.provision()
                #expect(last.status == 0, "\(last.standardOutput)\n\(last.standardError)")
                try checkInvariants(world, "\(processes) processes")
            }
        }

        @Test("four processes on disjoint Grokkers with a new ledger: all succeed, each Grokker recorded once")
        func disjointGrokkers() throws {
            let world = try FleetWorld()
            let runs = try (0..<4).map { try RunningProvision(world, devices: "sim:\($0)") }
            for run in runs { run.finish() }
            for run in runs { #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 0) }
            #expect(try Ledger.open(path: world.ledger, readOnly: true).runs().count == 4)
            try checkInvariants(world, "disjoint")
        }

        @Test("killed between a change and its record: the re-run asks the Grokker and records the change as the killed run's")
        func killBetweenChangeAndRecord() throws {
            for step in changing {
                let world = try FleetWorld(devices: 1)
                let killed = try RunningProvision(world, devices: "sim:0", environment: ["GROKCTL_CHAOS_KILL_AFTER_CHANGE": step])
                killed.finish()
                #expect(killed.process.terminationReason == .uncaughtSignal, "\(step): the hook did not fire")
                let again = try world.provision([], devices: "sim:0")
                #expect(again.status == 0, "\(again.standardOutput)\n\(again.standardError)")
                try checkInvariants(world, count: 1, "killed after \(step)")
                let ledger = try Ledger.open(path: world.ledger, readOnly: true)
                let first = try #require(try ledger.runs().map(\.id).min())
                let serial = String(format: "%08u", try world.device(0).serialNumber)
                let author = try ledger.steps(serial: serial).first { $0.step == step && $0.result == .done }
                #expect(author?.run == first, "\(step): made by the killed run, recorded as \(author.map { "\($0.run)" } ?? "nobody")'s")
                #expect(try ledger.runs().first { $0.id == first }?.outcome == .abandoned)
            }
        }

        @Test("SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGXFSZ and SIGQUIT (Ctrl-\\) at seeded moments end the run cleanly, closed as interrupted")
        func signals() throws {
            var random = SplitMix64(seed: 0x5160_0A15)
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGXFSZ, SIGQUIT] {
                let world = try FleetWorld()
                let run = try RunningProvision(world)
                let afterSteps = Int.random(in: 2...24, using: &random)
                let going = run.waitForSteps(afterSteps)
                if going { kill(run.process.processIdentifier, signal) }
                run.finish()
                #expect(run.process.terminationReason == .exit, "signal \(signal) killed the process")
                #expect(run.process.terminationStatus == (going ? 130 : 0) || run.process.terminationStatus == 0,
                        "signal \(signal): status \(run.process.terminationStatus)")
                let ledger = try Ledger.open(path: world.ledger, readOnly: true)
                let runs = try ledger.runs()
                // Closed by the run itself, not by a later process.
                #expect(runs.count == 1 && runs[0].endedAt != nil, "signal \(signal): \(runs)")
                if run.process.terminationStatus == 130 { #expect(runs[0].outcome == .interrupted) }
                let last = try world.provision()
                #expect(last.status == 0, "\(last.standardOutput)\n\(last.standardError)")
                try checkInvariants(world, "signal \(signal)")
            }
        }

        @Test("standard output closed under the run (| head) is not a crash: the run ends closed")
        func standardOutputClosed() throws {
            let world = try FleetWorld()
            let run = try RunningProvision(world)
            _ = run.waitForSteps(3)
            try run.reader.close()
            run.process.waitUntilExit()
            #expect(run.process.terminationReason == .exit, "killed by signal \(run.process.terminationStatus)")
            let runs = try Ledger.open(path: world.ledger, readOnly: true).runs()
            #expect(runs.count == 1 && runs[0].endedAt != nil)
            let last = try world.provision()
            #expect(last.status == 0, "\(last.standardOutput)\n\(last.standardError)")
            try checkInvariants(world, "| head")
        }
        // MARK: Wall-clock bounds: a frozen `grokctl emulate` (issue 13 item 5)

        /// A `grokctl emulate` on two FIFOs and the ALSA device (file plugin) a host reaches it by.
        private struct EmulatorOnFIFOs {
            let emulator: GrokctlChild
            let device: String
            let before: [String]

            init(_ world: FleetWorld) throws {
                let playback = world.root + "/host-playback"
                let capture = world.root + "/host-capture"
                try #require(!world.root.contains("%") && !world.root.contains("\"") && !world.root.contains(" "))
                try #require(mkfifo(playback, 0o600) == 0 && mkfifo(capture, 0o600) == 0)
                try FileManager.default.createDirectory(atPath: world.root + "/unit", withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: world.bench + "/sim-0/scene.json", toPath: world.root + "/unit/scene.json")
                emulator = try GrokctlChild(["emulate", "--state", world.root + "/unit", "--input", playback, "--output", capture],
                                            in: world.root, name: "emulate")
                device = "alsa:grokbench_host:PLAYBACK=\"\(playback)\",CAPTURE=\"\(capture)\""
                before = ["--alsa-config", CLI.ALSASessionTests.asoundrc]
            }

            func freeze() { kill(emulator.pid, SIGSTOP) }

            func end() {
                kill(emulator.pid, SIGKILL)
                kill(emulator.pid, SIGCONT)
                _ = try? emulator.wait()
            }
        }

        /// Kills `run` if it is still going after `seconds` (a run that hangs fails the test
        /// instead of hanging it).
        private func killIfHung(_ run: RunningProvision, after seconds: Double = 20) {
            let pid = run.process.processIdentifier
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: seconds)
                // Gone (or a zombie): nothing to do; the test has checked it by then.
                if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            }
        }

        private func seconds(since start: ContinuousClock.Instant) -> Double {
            let elapsed = start.duration(to: .now)
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }

        @Test("SIGTERM ends a run blocked on a frozen grokctl emulate within 2 s: interrupted, closed, report written, exit 130")
        func sigtermEndsARunOnAFrozenReader() throws {
            let world = try FleetWorld(devices: 1)
            let peer = try EmulatorOnFIFOs(world)
            defer { peer.end() }
            let watchdog = SessionWatchdog(seconds: 60)
            watchdog.watch(peer.emulator)
            let run = try RunningProvision(world, devices: peer.device, before: peer.before)
            killIfHung(run)
            // Frozen once the Grokker is identified: the provision step then blocks on audio.
            try #require(run.waitForSteps(2), "the run ended before the reader could be frozen: \(run.text)")
            peer.freeze()
            Thread.sleep(forTimeInterval: 0.5)
            let signalled = ContinuousClock.now
            kill(run.process.processIdentifier, SIGTERM)
            run.finish()
            let took = seconds(since: signalled)
            #expect(!watchdog.finish())
            #expect(took < 2, "the run took \(took) s to end after SIGTERM")
            #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 130,
                    "status \(run.process.terminationStatus)")
            let summary = try #require(run.summary, "no run_finished line: \(run.text)")
            #expect(summary["outcome"] as? String == "interrupted")
            #expect(FileManager.default.fileExists(atPath: summary["report"] as? String ?? "/nonexistent"))
            let runs = try Ledger.open(path: world.ledger, readOnly: true).runs()
            #expect(runs.count == 1 && runs[0].endedAt != nil && runs[0].outcome == .interrupted, "\(runs)")
        }

        @Test("a frozen grokctl emulate and no signal: the run ends by the profile's stall bound (fleet_reader_frozen), closed")
        func frozenReaderEndsByTheWallClockBound() throws {
            let world = try FleetWorld(devices: 1)
            var profile = try String(contentsOfFile: FleetWorld.profile, encoding: .utf8)
            profile = profile.replacingOccurrences(of: "\"reconnect_s\": 20 }", with: "\"reconnect_s\": 20, \"stall_s\": 1 }")
            try #require(profile.contains("stall_s"))
            let profilePath = world.root + "/stall-1s.json"
            try profile.write(toFile: profilePath, atomically: true, encoding: .utf8)
            let peer = try EmulatorOnFIFOs(world)
            defer { peer.end() }
            let watchdog = SessionWatchdog(seconds: 60)
            watchdog.watch(peer.emulator)
            let run = try RunningProvision(world, devices: peer.device, profile: profilePath, before: peer.before)
            killIfHung(run)
            try #require(run.waitForSteps(2), "the run ended before the reader could be frozen: \(run.text)")
            peer.freeze()
            let frozen = ContinuousClock.now
            run.finish()
            let took = seconds(since: frozen)
            #expect(!watchdog.finish())
            #expect(took < 15, "the run took \(took) s to end after the reader froze")
            #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 1,
                    "status \(run.process.terminationStatus)")
            #expect(run.text.contains("\"fleet_reader_frozen\""), "\(run.text)")
            let runs = try Ledger.open(path: world.ledger, readOnly: true).runs()
            #expect(runs.count == 1 && runs[0].endedAt != nil && runs[0].outcome == .failed, "\(runs)")
        }

        @Test("a second SIGHUP while the report is written does not kill the run: handlers stay installed to the end")
        func signalWhileTheReportIsWritten() throws {
            let world = try FleetWorld()
            let run = try RunningProvision(world, environment: ["GROKCTL_CHAOS_SIGNAL_BEFORE_REPORT": String(SIGHUP)])
            let going = run.waitForSteps(3)
            try #require(going, "the run ended before the signal")
            kill(run.process.processIdentifier, SIGHUP)
            run.finish()
            #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 130,
                    "ended by \(run.process.terminationReason == .exit ? "exit" : "signal") \(run.process.terminationStatus)")
            let summary = try #require(run.summary, "no run_finished line")
            #expect(FileManager.default.fileExists(atPath: summary["report"] as? String ?? "/nonexistent"))
            let runs = try Ledger.open(path: world.ledger, readOnly: true).runs()
            #expect(runs.count == 1 && runs[0].outcome == .interrupted)
        }
    }
}
