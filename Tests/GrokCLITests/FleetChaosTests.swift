import Foundation
import GrokkerEmulator
import GrokLedger
import GrokProtocol
import Testing

@testable import GrokCLI

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

    init(_ world: FleetWorld, devices: String = "sim:0-3", environment extra: [String: String] = [:]) throws {
        let pipe = Pipe()
        process.executableURL = try grokctlExecutable()
        process.arguments = ["provision", "--profile", FleetWorld.profile, "--device", devices, "--unattended", "--json"] + world.common
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
                #expect(try ledger.runs().first { $0.id == first }?.outcome == .interrupted)
            }
        }

        @Test("SIGTERM, SIGINT, SIGHUP, SIGPIPE and SIGXFSZ at seeded moments end the run cleanly, closed as cancelled")
        func signals() throws {
            var random = SeededRandom(state: 0x5160_0A15)
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGXFSZ] {
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
                if run.process.terminationStatus == 130 { #expect(runs[0].outcome == .cancelled) }
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
    }
}
