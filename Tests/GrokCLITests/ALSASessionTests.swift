import Foundation
import Synchronization
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// A grokctl started in the background, its output going to files, for sessions where two
/// grokctl processes talk to each other.
///
/// Not thread-safe; the watchdog only needs its ``pid``.
final class GrokctlChild {
    private let process: Process
    private let outputPath: String
    private let errorPath: String
    /// The process id, for the watchdog.
    let pid: Int32

    /// Starts `grokctl arguments` with no standard input and a clean environment.
    init(_ arguments: [String], in directory: String, name: String) throws {
        let process = Process()
        process.executableURL = try grokctlExecutable()
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"]
        outputPath = directory + "/\(name).out"
        errorPath = directory + "/\(name).err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try out.close()
        try err.close()
        self.process = process
        pid = process.processIdentifier
    }

    /// Whether it has not ended yet.
    var isRunning: Bool { process.isRunning }

    /// What it has printed on standard output so far.
    func outputSoFar() -> String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// Waits for the process to end and returns what it printed.
    func wait() throws -> RunResult {
        process.waitUntilExit()
        return RunResult(
            status: process.terminationStatus,
            standardOutput: try String(contentsOfFile: outputPath, encoding: .utf8),
            standardError: try String(contentsOfFile: errorPath, encoding: .utf8))
    }
}

/// Kills the children of a session that has not ended after `seconds` (a session takes well
/// under a second), so a deadlock fails the test instead of hanging CI.
final class SessionWatchdog: Sendable {
    private let done = Atomic<Bool>(false)
    private let fired = Atomic<Bool>(false)
    private let children = Mutex<[Int32]>([])

    init(seconds: Double = 120) {
        Thread.detachNewThread { [self] in
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if done.load(ordering: .acquiring) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            guard !done.load(ordering: .acquiring) else { return }
            fired.store(true, ordering: .releasing)
            for pid in children.withLock({ $0 }) { kill(pid, SIGKILL) }
        }
    }

    /// Watches `child` (it is killed if the session hangs).
    func watch(_ child: GrokctlChild) {
        children.withLock { $0.append(child.pid) }
    }

    /// Stops watching; returns whether the watchdog had to kill the session.
    func finish() -> Bool {
        done.store(true, ordering: .releasing)
        return fired.load(ordering: .acquiring)
    }
}

extension CLI {
    /// `grokctl emulate` in its own process and `grokctl info` on an ALSA device made of the
    /// file and null plugins over two FIFOs: a whole session through the real libasound,
    /// with no sound card (as in CI).
    @Suite("ALSA session")
    struct ALSASessionTests {
        /// The fixture defining the `grokbench_host` PCM (shared with the GrokAudio tests).
        static var asoundrc: String {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("GrokAudioTests/Fixtures/asoundrc").path
        }

        @Test(arguments: [false, true])
        func infoThroughLibasoundReachesAnEmulatorProcess(json: Bool) throws {
            try #require(FileManager.default.fileExists(atPath: Self.asoundrc), "missing \(Self.asoundrc)")
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // The ALSA file plugin expands %-sequences in its file names.
            try #require(!directory.contains("%") && !directory.contains("\"") && !directory.contains(" "))
            let playback = directory + "/host-playback"
            let capture = directory + "/host-capture"
            try #require(mkfifo(playback, 0o600) == 0 && mkfifo(capture, 0o600) == 0)
            let state = directory + "/dev"

            let watchdog = SessionWatchdog()
            var emulatorArguments = ["emulate", "--state", state, "--input", playback, "--output", capture]
            if json { emulatorArguments.append("--json") }
            let emulator = try GrokctlChild(emulatorArguments, in: directory, name: "emulate")
            watchdog.watch(emulator)
            let device = "alsa:grokbench_host:PLAYBACK=\"\(playback)\",CAPTURE=\"\(capture)\""
            var hostArguments = ["--alsa-config", Self.asoundrc, "info", "--device", device]
            if json { hostArguments.append("--json") }
            let host = try GrokctlChild(hostArguments, in: directory, name: "info")
            watchdog.watch(host)
            let hostResult = try host.wait()
            let emulatorResult = try emulator.wait()
            #expect(!watchdog.finish(), "the session hung; the watchdog killed it")

            #expect(hostResult.status == 0, "info: \(hostResult.standardError)")
            #expect(emulatorResult.status == 0, "emulate: \(emulatorResult.standardError)")
            let stateData = try Data(contentsOf: URL(fileURLWithPath: state + "/state.json"))
            let stateObject = try #require(try JSONSerialization.jsonObject(with: stateData) as? [String: Any])
            let serialNumber = try #require(stateObject["serialNumber"] as? Int)
            let serial = String(repeating: "0", count: max(0, 8 - String(serialNumber).count)) + String(serialNumber)
            let firmware = try #require(stateObject["firmwareVersion"] as? String)

            if json {
                let report = try #require(try jsonObjects(hostResult.standardOutput).first)
                #expect(report["status"] as? String == "ok")
                #expect(report["device"] as? String == device)
                #expect(report["serial"] as? String == serial)
                #expect((report["link_bit_rate"] as? Double ?? 0) > 0)
                #expect((report["packets_received"] as? Int ?? 0) > 0)
                let events = try jsonObjects(emulatorResult.standardOutput)
                try #require(events.count == 2, "\(emulatorResult.standardOutput)")
                #expect(events[0]["event"] as? String == "start")
                #expect(events[0]["serial"] as? String == serial)
                #expect(events[0]["firmware"] as? String == firmware)
                #expect(events[1]["event"] as? String == "end")
                #expect(events[1]["reason"] as? String == "host_closed")
                #expect((events[1]["packets_received"] as? Int ?? 0) > 0)
                #expect((events[1]["audio_s"] as? Double ?? 0) > 0)
                #expect(emulatorResult.standardError == "")
            } else {
                let row = try #require(hostResult.standardOutput.split(separator: "\n").first { $0.hasPrefix(device) })
                #expect(row.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == Substring(serial))
                let lines = emulatorResult.standardOutput.split(separator: "\n").map(String.init)
                #expect(lines.first == text(.emulateStarted, .en, serial, firmware, text(.infoRegionNotSet, .en), "44100"))
                #expect(lines.count == 2 && lines[1].hasPrefix(String(text(.emulateStoppedHostClosed, .en).prefix(20))))
                #expect(emulatorResult.standardError == text(.emulateWaiting, .en, playback, capture) + "\n")
            }
        }

        /// The host side of raw PCM (`--device pcm:IN,OUT`): no ALSA at all, two FIFOs between
        /// two grokctl processes, as any outside peer could be connected.
        @Test("info over raw PCM FIFOs (--device pcm:IN,OUT) reaches a grokctl emulate in another process")
        func infoOverRawPCMReachesAnEmulatorProcess() throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let toGrokker = directory + "/to-grokker"
            let fromGrokker = directory + "/from-grokker"
            try #require(mkfifo(toGrokker, 0o600) == 0 && mkfifo(fromGrokker, 0o600) == 0)
            let watchdog = SessionWatchdog()
            let emulator = try GrokctlChild(["emulate", "--json", "--state", directory + "/dev", "--input", toGrokker,
                                             "--output", fromGrokker], in: directory, name: "emulate")
            watchdog.watch(emulator)
            let device = "pcm:\(fromGrokker),\(toGrokker)"
            let host = try GrokctlChild(["info", "--json", "--device", device], in: directory, name: "info")
            watchdog.watch(host)
            let hostResult = try host.wait()
            let emulatorResult = try emulator.wait()
            #expect(!watchdog.finish(), "the session hung; the watchdog killed it")
            #expect(hostResult.status == 0, "info: \(hostResult.standardError)")
            #expect(emulatorResult.status == 0, "emulate: \(emulatorResult.standardError)")
            let report = try #require(try jsonObjects(hostResult.standardOutput).first)
            let started = try #require(try jsonObjects(emulatorResult.standardOutput).first)
            #expect(report["status"] as? String == "ok")
            #expect(report["device"] as? String == device)
            #expect(report["serial"] as? String == started["serial"] as? String)
            #expect(report["firmware"] as? String == started["firmware"] as? String)
        }
    }
}
