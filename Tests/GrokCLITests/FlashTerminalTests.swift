import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// `firmware flash` on a real terminal (a pty): bars that fit it, and Ctrl-C.
@Suite("firmware flash on a terminal")
struct FlashTerminalTests {
    /// The package root (where `firmware/demo/` is).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test("Ctrl-C during a flash on a 50-column terminal: exit 130, cancelled, bars never wider than the terminal")
    func ctrlCCancels() throws {
        let bench = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: bench) }
        let terminal = try PseudoTerminal(columns: 50, rows: 24)
        let process = Process()
        process.executableURL = try grokctlExecutable()
        process.arguments = ["--bench", bench, "--lang", "en", "firmware", "flash", "--device", "sim:0",
                             "--package", Self.root + "/firmware/demo/GR-1_1-8-0_demo.ugif", "--allow-unlisted"]
        process.environment = ["PATH": "/usr/bin:/bin", "COLUMNS": "50", "TERM": "xterm", "HOME": bench]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = terminal.slave
        process.standardError = terminal.slave
        try process.run()
        terminal.closeSlave()
        // Once a bar is drawn the upload is under way (1024 chunks to go): Ctrl-C.
        let drawn = terminal.waitFor(seconds: 300) { String(decoding: $0, as: UTF8.self).contains("[#") ||
                                                     String(decoding: $0, as: UTF8.self).contains("[-") }
        #expect(drawn, "no bar: \(String(decoding: terminal.output, as: UTF8.self))")
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        _ = terminal.waitFor(seconds: 10) { _ in false }
        let output = terminal.output
        let screen = String(decoding: output, as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(process.terminationStatus): \(screen)")
        let lines = ProgressBoardTests.drawnLines(output)
        // The board's rows (a label, two spaces); the messages after it wrap as any text does.
        let rows = lines.filter { $0.hasPrefix("sim:0  ") }
        #expect(rows.count >= 2)
        for line in rows { #expect(TextWidth.of(line) < 50, "\(TextWidth.of(line)) columns: \(line)") }
        // The bar's row ends as "cancelled", never "failed", and the summary says how to finish.
        #expect(lines.contains { $0.hasPrefix("sim:0  cancelled") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("sim:0  failed") })
        let summary = collapsed(screen.replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\u{1B}[2K", with: ""))
        #expect(summary.contains(collapsed(text(.flashCancelledSummary, .en, "0", "0", "0", "1", "1"))), "\(summary)")
        // Nothing is left half drawn: the last bar frame is followed only by the summary.
        let lastFrame = try #require(screen.range(of: "\u{1B}[1A", options: .backwards))
        #expect(!screen[lastFrame.upperBound...].contains("[#") && !screen[lastFrame.upperBound...].contains("[-"))
    }
}

/// A pseudo-terminal of a given size: the slave side for a child, the master side read
/// into ``output`` by a thread of its own.
final class PseudoTerminal: @unchecked Sendable {
    let slave: FileHandle
    private let master: Int32
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var ended = false

    init(columns: Int, rows: Int) throws {
        master = c_posix_openpt(O_RDWR | O_NOCTTY)
        guard master >= 0, c_grantpt(master) == 0, c_unlockpt(master) == 0, let name = c_ptsname(master) else {
            throw CocoaError(.fileReadUnknown)
        }
        let fd = open(String(cString: name), O_RDWR | O_NOCTTY)
        guard fd >= 0 else { throw CocoaError(.fileReadUnknown) }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(fd, UInt(TIOCSWINSZ), &size)
        slave = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        let reader = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress!, $0.count) }
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                lock.lock(); bytes += buffer[0..<n]; lock.unlock()
            }
            lock.lock(); ended = true; lock.unlock()
        }
        reader.start()
    }

    /// The parent's copy of the slave: closed once the child has it, so the master reads
    /// end when the child does.
    func closeSlave() { close(slave.fileDescriptor) }

    var output: [UInt8] { lock.lock(); defer { lock.unlock() }; return bytes }

    /// Waits until `condition` holds for the output so far (true), or the child's side is
    /// closed or `seconds` pass (false).
    func waitFor(seconds: Double, _ condition: ([UInt8]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            lock.lock(); let now = bytes; let done = ended; lock.unlock()
            if condition(now) { return true }
            if done { return false }
            usleep(20_000)
        }
        return false
    }

    deinit { close(master) }
}

// glibc's pty calls: declared behind _XOPEN_SOURCE, which the Glibc module does not set.
@_silgen_name("posix_openpt") private func c_posix_openpt(_ flags: Int32) -> Int32
@_silgen_name("grantpt") private func c_grantpt(_ fd: Int32) -> Int32
@_silgen_name("unlockpt") private func c_unlockpt(_ fd: Int32) -> Int32
@_silgen_name("ptsname") private func c_ptsname(_ fd: Int32) -> UnsafeMutablePointer<CChar>?

/// Memory of many emulated Grokkers in one process (issue 12, item 9).
@Suite("Memory of a bench")
struct BenchMemoryTests {
    @Test("64 emulated Grokkers, each with a scene file, in one grokctl process peak under 150 MB")
    func sixtyFourUnitsFitIn150MB() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for index in 0..<64 {
            let unit = dir + "/bench/sim-\(index)"
            try FileManager.default.createDirectory(atPath: unit, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: FlashTerminalTests.root + "/profiles/scenes/demo.json", toPath: unit + "/scene.json")
        }
        let path = try grokctlExecutable().path
        // Through /usr/bin/time: a child spawned from this (large) test process counts this
        // process's pages until it execs, so its own ru_maxrss says more about us than about
        // grokctl (156 MB in a full suite run, 40 MB alone); grokctl as time's child starts small.
        let words: [String] = ["/usr/bin/time", "-f", "%M", "-o", dir + "/maxrss", path, "--bench", dir + "/bench", "info", "--device", "sim:0-63"]
        let environment: [String] = ["PATH=/usr/bin:/bin", "HOME=" + dir]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, dir + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, dir + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, "/usr/bin/time", &actions, nil, argv, envp) == 0)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: dir + "/stdout", encoding: .utf8)) ?? ""
        #expect(status == 0, "\(output)\((try? String(contentsOfFile: dir + "/stderr", encoding: .utf8)) ?? "")")
        #expect((0..<64).allSatisfy { output.contains("sim:\($0) ") || output.contains("sim:\($0)\n") }, "\(output)")
        // In KiB; 16 MiB per reader made this 650 MB.
        let peak = Int(((try? String(contentsOfFile: dir + "/maxrss", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines))
        let kib = try #require(peak, "no peak from /usr/bin/time")
        #expect(kib < 150 * 1024, "peak RSS \(kib / 1024) MB")
        _ = usage
    }
}
