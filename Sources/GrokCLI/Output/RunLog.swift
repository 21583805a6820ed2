import Foundation
import GrokBasics
import GrokCommandLine

/// A fleet run's plain-text log beside its report (``GrokFleet/FleetSession/logPath``):
/// every line the run shows as plain text (each step, the summary, errors; never the live
/// bars), in the run's language, each stamped with the UTC time, appended as it happens so
/// a run that is killed leaves the log up to that moment.
///
/// Writing the log never stops the run: a log that cannot be opened or written is reported
/// once as a warning, and the summary then does not name it (``isComplete``).
final class RunLogFile: OutputSink {
    let path: String
    private let handle: FileHandle?
    private var pending = ""
    /// Set once a write failed.
    private var failed = false
    private let formatter: ISO8601DateFormatter

    /// Creates (or replaces) the log at `path`, making its directory.
    init(path: String) {
        self.path = path
        formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        try? FileManager.default.createDirectory(atPath: AtomicFile.parent(of: path), withIntermediateDirectories: true)
        if FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]) {
            handle = FileHandle(forWritingAtPath: path)
        } else {
            handle = nil
        }
        failed = handle == nil
    }

    /// Whether every line reached the file.
    var isComplete: Bool { !failed }

    func write(_ text: String) {
        pending += text
        while let newline = pending.firstIndex(of: "\n") {
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            append(formatter.string(from: Date()) + "  " + line + "\n")
        }
    }

    /// Writes what is left of a last line without its newline, and closes the file.
    func close() {
        if !pending.isEmpty { write("\n") }
        try? handle?.close()
    }

    private func append(_ line: String) {
        guard let handle, !failed else { return }
        do {
            try handle.write(contentsOf: Data(line.utf8))
        } catch {
            failed = true
        }
    }
}
