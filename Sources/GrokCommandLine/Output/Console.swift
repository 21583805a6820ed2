import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Everything grokctl prints goes through here: localized prose for people, JSON for
/// scripts (`--json`), silence for `--quiet`, and errors on stderr in both forms.
///
/// - Prose (``say(_:_:to:)``, ``warn(_:_:)``) is informational: `--quiet` and `--json`
///   silence it.
/// - Results (``print(_:)``, ``table(_:)``, ``json(_:)``) are what the command was asked
///   for and always print; a command prints either text or JSON, per ``isJSON``.
/// - Errors (``report(_:)``) always print on stderr: `Error: ...` in the user's
///   language, or `{"error":{"code":...,"message":...}}` with the English message.
///
/// Not thread-safe: use it from the thread running the command.
public final class Console {
    /// Which standard stream a line goes to.
    public enum Stream: Sendable {
        case standardOutput, standardError
    }

    /// The language of prose and errors. A command may change it once it knows better than
    /// the environment (a fleet profile's `locale`: ``speak(_:)``), before it prints its result.
    public private(set) var localizer: Localizer
    /// Whether output is JSON (`--json`).
    public let isJSON: Bool
    /// Whether informational prose is silenced (`--quiet`).
    public let isQuiet: Bool
    private let standardOutput: any OutputSink
    private let standardError: any OutputSink
    /// Which streams go to the systemd journal (``JournalPriority``).
    private let journalOutput: Bool
    private let journalError: Bool

    /// How much a line matters to the systemd journal: a service's line that starts `<N>` is
    /// recorded at syslog priority N (systemd.exec, `SyslogLevelPrefix=`, on by default), so
    /// `journalctl -p warning -u grokctl-watch@bench-us` shows only what needs someone.
    /// Prefixed only on a stream that is the journal (``isJournal(_:)``); a terminal, a file
    /// or a pipe gets the line as it is.
    public enum JournalPriority: Int, Sendable {
        /// grokctl itself could not do what it was asked (an `Error:` line).
        case error = 3
        /// A Grokker failed or was left unfinished; a `Warning:` line.
        case warning = 4
        /// Progress and results that need no one (what the journal gives a line without a prefix).
        case info = 6
    }

    /// - Parameters:
    ///   - localizer: The language of prose and errors.
    ///   - json: Machine output (`--json`).
    ///   - quiet: Silence informational prose (`--quiet`).
    ///   - standardOutput: Where results go.
    ///   - standardError: Where errors and warnings go.
    ///   - journalStream: `JOURNAL_STREAM` (`DEVICE:INODE`), which systemd sets for a service
    ///     whose output goes to the journal: a stream with that device and inode is the journal.
    public init(
        localizer: Localizer, json: Bool, quiet: Bool,
        standardOutput: any OutputSink = FileDescriptorSink.standardOutput,
        standardError: any OutputSink = FileDescriptorSink.standardError,
        journalStream: String? = ProcessInfo.processInfo.environment["JOURNAL_STREAM"]
    ) {
        self.localizer = localizer
        self.isJSON = json
        self.isQuiet = quiet
        self.standardOutput = standardOutput
        self.standardError = standardError
        journalOutput = Self.isJournal(standardOutput, journalStream: journalStream)
        journalError = Self.isJournal(standardError, journalStream: journalStream)
    }

    /// Whether `sink` writes to the stream `journalStream` names (`DEVICE:INODE`, decimal).
    private static func isJournal(_ sink: any OutputSink, journalStream: String?) -> Bool {
        guard let journalStream, let descriptor = (sink as? FileDescriptorSink)?.fileDescriptor else { return false }
        let parts = journalStream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// Whether `stream` goes to the systemd journal (lines carry a ``JournalPriority``).
    public func isJournal(_ stream: Stream) -> Bool {
        stream == .standardOutput ? journalOutput : journalError
    }

    /// Speaks `language` from now on (prose, tables and errors; `--json` stays English codes).
    public func speak(_ language: Language) {
        guard language != localizer.language else { return }
        localizer = Localizer(language: language)
    }

    /// A localized informational line; silent under `--quiet` and `--json`.
    public func say(_ key: MessageKey, _ arguments: String..., to stream: Stream = .standardOutput) {
        guard !isQuiet, !isJSON else { return }
        write(localizer.text(key, arguments: arguments) + "\n", to: stream)
    }

    /// A localized `Warning: ...` on stderr; silent under `--quiet`. With `--json` it is
    /// `{"warning":{"code":"<key>","message":"<English>"}}`.
    public func warn(_ key: MessageKey, _ arguments: String...) {
        guard !isQuiet else { return }
        if isJSON {
            let message = Localizer.english.text(key, arguments: arguments)
            write(jsonLine(["warning": Problem(code: key.rawValue, message: message)]), to: .standardError)
        } else {
            let message = localizer.text(key, arguments: arguments)
            write(prefixed(localizer.text(.warningLine, message), .warning, journal: journalError) + "\n", to: .standardError)
        }
    }

    /// Whether `stream` is a terminal a person watches (not a file, a pipe or a test
    /// buffer, and not `TERM=dumb`): progress bars are drawn only there.
    public func isTerminal(_ stream: Stream) -> Bool {
        let sink = stream == .standardOutput ? standardOutput : standardError
        guard let descriptor = sink as? FileDescriptorSink else { return false }
        if let term = getenv("TERM"), String(cString: term) == "dumb" { return false }
        return isatty(descriptor.fileDescriptor) == 1
    }

    /// A line of the command's result on stdout (a newline is added).
    public func print(_ line: String) {
        write(line + "\n", to: .standardOutput)
    }

    /// A line on stdout that the journal records at `priority` (elsewhere, as ``print(_:)``).
    public func print(_ line: String, priority: JournalPriority) {
        write(prefixed(line, priority, journal: journalOutput) + "\n", to: .standardOutput)
    }

    /// `text` with the journal's priority prefix on each of its lines when `journal`.
    private func prefixed(_ text: String, _ priority: JournalPriority, journal: Bool) -> String {
        guard journal else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "<\(priority.rawValue)>" + $0 }.joined(separator: "\n")
    }

    /// Text on stdout as it is (help, a prepared block); no newline is added.
    public func write(_ text: String) {
        write(text, to: .standardOutput)
    }

    /// A table of the command's result on stdout: fitted to the terminal's width when stdout
    /// is one (cells wrapped within their columns), each row on one line otherwise.
    public func table(_ table: Table) {
        let width = isTerminal(.standardOutput) ? LiveTable.terminalSize(fileDescriptor: STDOUT_FILENO).width : nil
        for line in table.lines(width: width) { print(line) }
    }

    /// One JSON object on one line of stdout, keys sorted: an event of a stream, or a
    /// command's whole result.
    public func json(_ value: some Encodable) {
        write(jsonLine(value), to: .standardOutput)
    }

    /// Reports a failure on stderr.
    ///
    /// - Returns: the exit code to end with: 64 for a usage error (``Console/isUsageError(_:)``), 1 otherwise.
    @discardableResult
    public func report(_ error: any Error) -> ExitCode {
        if isJSON {
            writeJSONError(error)
        } else {
            write(prefixed(localizer.text(.errorLine, localizer.message(for: error)), .error, journal: journalError) + "\n",
                  to: .standardError)
        }
        return Self.isUsageError(error) ? .usageError : .failure
    }

    /// Whether the command line was at fault (exit 64): a usage ``CLIError``.
    static func isUsageError(_ error: any Error) -> Bool { (error as? CLIError)?.isUsageError ?? false }

    /// Reports a usage error the swift-argument-parser way: `Error: ...`, the usage line,
    /// and where to find help (JSON: the error object only).
    ///
    /// - Parameters:
    ///   - error: What was wrong.
    ///   - usage: The command's usage line without `Usage:`.
    ///   - helpCommand: The command that shows help (`grokctl devices --help`).
    /// - Returns: ``ExitCode/usageError``.
    @discardableResult
    public func reportUsage(_ error: CLIError, usage: String, helpCommand: String) -> ExitCode {
        if isJSON {
            writeJSONError(error)
        } else {
            let lines = [
                localizer.text(.errorLine, localizer.message(for: error)),
                localizer.text(.usageLine, usage),
                "  " + localizer.text(.usageSeeHelp, helpCommand),
            ]
            write(lines.joined(separator: "\n") + "\n", to: .standardError)
        }
        return .usageError
    }

    private struct Problem: Encodable {
        let code: String
        let message: String
    }

    private func writeJSONError(_ error: any Error) {
        let problem = Problem(code: Localizer.code(for: error), message: Localizer.english.message(for: error))
        write(jsonLine(["error": problem]), to: .standardError)
    }

    private func jsonLine(_ value: some Encodable) -> String {
        JSONLines.line(for: value)
    }

    private func write(_ text: String, to stream: Stream) {
        switch stream {
        case .standardOutput: standardOutput.write(text)
        case .standardError: standardError.write(text)
        }
    }
}

@available(*, unavailable)
extension Console: Sendable {}

/// JSON as grokctl prints it: compact, keys sorted, one object per line, slashes
/// unescaped (paths stay readable).
public enum JSONLines {
    /// `value` as one line of JSON, with the trailing newline.
    ///
    /// A value that cannot be encoded (a non-finite `Double`) becomes an `error` object
    /// with code `internal_json`, so the stream stays valid JSON lines.
    public static func line(for value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
        } catch {
            return "{\"error\":{\"code\":\"internal_json\",\"message\":\"could not encode the output as JSON; report this\"}}\n"
        }
    }
}
