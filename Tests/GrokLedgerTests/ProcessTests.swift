import Foundation
import Testing
@testable import GrokLedger

/// The `sqlite3` shell as a second process on the same file (docs/ledger.md's queries use it).
private let sqliteShell = "/usr/bin/sqlite3"
private let hasShell = FileManager.default.isExecutableFile(atPath: sqliteShell)

@Suite("Ledger: other processes", .enabled(if: hasShell, "needs the sqlite3 shell (apt install sqlite3)"))
struct ProcessTests {
    private func shell(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqliteShell)
        process.arguments = ["-bail", path, sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("another process sees committed rows, and its writes are seen here")
    func anotherProcessReadsAndWrites() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath)
        let run = try ledger.beginRun(start())
        try ledger.recordStep(step(run, "GK-1", "identify"))
        try ledger.recordStep(step(run, "GK-1", "region", .failed, detail: "Région refusée"))
        #expect(try shell(scratch.ledgerPath, "SELECT step || '=' || result FROM steps ORDER BY id") == "identify=done\nregion=failed")
        #expect(try shell(scratch.ledgerPath, "SELECT detail FROM steps WHERE result = 'failed'") == "Région refusée")
        _ = try shell(scratch.ledgerPath, "UPDATE devices SET region = 'EU'; INSERT INTO devices (serial, first_seen, last_seen) VALUES ('GK-EXT', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')")
        #expect(try ledger.device(serial: "GK-EXT")?.firstSeen == LedgerTime.parse("2024-01-01T00:00:00.000Z"))
    }

    /// Whether an empty write transaction finds the write lock taken by someone else.
    private func lockIsTaken(_ probe: Ledger) throws -> Bool {
        let result: Result<Void, LedgerError> = Result { () throws(LedgerError) in try probe.write { (_) throws(LedgerError) in } }
        switch result {
        case .success: return false
        case .failure(.locked): return true
        case .failure(let other): throw other
        }
    }

    @Test("a process killed in the middle of a transaction leaves the last committed state")
    func killedWriter() throws {
        let scratch = Scratch()
        do {
            let ledger = try Ledger.open(path: scratch.ledgerPath)
            let run = try ledger.beginRun(start())
            try ledger.recordStep(step(run, "GK-1", "identify"))
        }
        // Opened before the shell takes the lock: a writable open takes the write lock briefly.
        let probe = try Ledger.open(path: scratch.ledgerPath, busyTimeout: .zero, heartbeatInterval: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqliteShell)
        process.arguments = ["-bail", scratch.ledgerPath]
        let input = Pipe()
        process.standardInput = input
        let outputPath = scratch.file("shell.out")
        try Data().write(to: URL(fileURLWithPath: outputPath))
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // The shell prints "inside" once both writes are made, then waits for more input,
        // inside its transaction, holding the write lock.
        let script = """
            .timeout 5000
            BEGIN DEFERRED;
            UPDATE runs SET outcome = 'succeeded', ended_at = '2024-05-01T11:00:00.000Z';
            INSERT INTO steps (run_id, serial, step, started_at, ended_at, duration_ms, result) VALUES (1, 'GK-1', 'firmware', 'a', 'b', 1, 'done');
            .print inside

            """
        input.fileHandleForWriting.write(Data(script.utf8))
        let deadline = ContinuousClock.now + .seconds(10)
        var inside = false
        while !inside, process.isRunning, ContinuousClock.now < deadline {
            inside = (try? String(contentsOfFile: outputPath, encoding: .utf8))?.contains("inside") ?? false
            if !inside { Thread.sleep(forTimeInterval: 0.005) }
        }
        try #require(inside, "the sqlite3 shell never reported its writes")
        // An empty write transaction finds the lock taken: the shell is mid-transaction.
        #expect(try lockIsTaken(probe))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)

        let reopened = try Ledger.open(path: scratch.ledgerPath, busyTimeout: .seconds(2))
        #expect(try reopened.steps().map(\.step) == ["identify"])
        // Its own ledger is gone too: the reopen closed the run as interrupted, when it was last seen alive.
        let closed = try #require(try reopened.runs().first)
        #expect(closed.outcome == .abandoned)
        #expect(closed.endedAt != nil && closed.endedAt == closed.lastSeenAt)
        // The dead process's lock is gone: writing works.
        let next = try reopened.beginRun(start(at: 10))
        try reopened.recordStep(step(next, "GK-1", "region", from: 11, to: 12))
        #expect(try reopened.steps().map(\.step) == ["identify", "region"])
    }
}

@Suite("Ledger: waiting for another process's lock", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
struct LockWaitTests {
    @Test("a write blocked by another process waits the whole busy timeout on the wall clock and says how long it waited")
    func waitsAndSaysHowLong() throws {
        let scratch = Scratch()
        let ledger = try Ledger.open(path: scratch.ledgerPath, busyTimeout: .milliseconds(600), heartbeatInterval: nil)
        _ = try ledger.beginRun(start())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [scratch.ledgerPath]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\n.print holding\n".utf8))
        var seen = ""
        while !seen.contains("holding") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        try #require(seen.contains("holding"))
        let clock = ContinuousClock()
        let began = clock.now
        let error = #expect(throws: LedgerError.self) { try ledger.beginRun(start(at: 5)) }
        let elapsed = began.duration(to: clock.now)
        guard case .locked(_, let waited) = error else {
            Issue.record("expected ledger_locked, got \(String(describing: error))")
            return
        }
        // It waited the whole 600 ms timeout, and says so truly.
        #expect(elapsed >= .milliseconds(600))
        #expect(waited >= 600 && waited <= Ledger.milliseconds(elapsed), "reported \(waited) ms, waited \(elapsed)")
    }
}
