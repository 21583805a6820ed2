import Foundation
import GrokBasics
import GrokLedger

/// The station's own memory of link settings: `link-settings.json` in its state directory,
/// the newest setting of each Grokker (by serial) and sound-card model. Every device command
/// reads it before it connects and adds what AutoConfig learned; a fleet run also reads and
/// writes the ledger's (``LedgerStore/linkSettings()``), so stations share what they learn.
///
/// Writes are whole-file replacements (``AtomicFile``) under an exclusive `flock` of the file
/// `link-settings.json.lock`, so two commands adding at once both keep theirs. A file that
/// cannot be read is treated as empty (each Grokker is then configured again, and the next
/// write replaces it): it is a cache of what the Grokkers answer, never the only copy of a fact.
public struct LinkSettingFile: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The file in the state directory `directory`.
    public init(stateDirectory directory: String) {
        self.init(path: joinPath(directory, "link-settings.json"))
    }

    struct Entry: Codable {
        var subjectKind: String
        var subject: String
        var samplesPerBit: Int
        var sampleRate: Int
        var reason: String
        var station: String
        var recordedAt: Date

        enum CodingKeys: String, CodingKey {
            case subject, station, reason
            case subjectKind = "subject_kind"
            case samplesPerBit = "samples_per_bit"
            case sampleRate = "sample_rate"
            case recordedAt = "recorded_at"
        }

        init(_ record: LinkSettingRecord) {
            subjectKind = record.subject.kind
            subject = record.subject.key
            samplesPerBit = record.samplesPerBit
            sampleRate = record.sampleRate
            reason = record.reason.rawValue
            station = record.station
            recordedAt = record.recordedAt
        }

        /// The record; `nil` for an entry of a kind or reason no record has (skipped).
        var record: LinkSettingRecord? {
            guard let subject = LinkSettingRecord.Subject(kind: subjectKind, key: subject),
                  let reason = LinkSettingRecord.Reason(rawValue: reason) else { return nil }
            return LinkSettingRecord(subject: subject, samplesPerBit: samplesPerBit, sampleRate: sampleRate, reason: reason,
                                     station: station, recordedAt: recordedAt)
        }
    }

    /// What the file holds (empty when it is missing or unreadable).
    public func read() -> LinkSettingBook {
        guard let data = FileManager.default.contents(atPath: path) else { return LinkSettingBook() }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let entries = try? decoder.decode([Entry].self, from: data) else { return LinkSettingBook() }
        return LinkSettingBook(entries.compactMap(\.record))
    }

    /// Adds `records` (each kept unless the file has a newer one of its subject).
    /// - Throws: ``SystemCallError`` when the file or its lock cannot be written.
    public func add(_ records: [LinkSettingRecord]) throws(SystemCallError) {
        guard !records.isEmpty else { return }
        try AtomicFile.makeDirectories(AtomicFile.parent(of: path))
        let lockPath = path + ".lock"
        let fd = try SystemCall.value("open", path: lockPath) { open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        defer { close(fd) }
        _ = try SystemCall.value("flock", path: lockPath) { flock(fd, LOCK_EX) }
        var book = read()
        for record in records { book.add(record) }
        let entries = book.records.values.map(Entry.init).sorted { ($0.subjectKind, $0.subject) < ($1.subjectKind, $1.subject) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = (try? encoder.encode(entries)) ?? Data("[]".utf8)
        try AtomicFile.write(Array(data) + [0x0A], to: path)
    }

    /// ``add(_:)`` as the fleet's error: ``FleetError/linkSettingsNotWritten(file:detail:)``.
    public func remember(_ records: [LinkSettingRecord]) throws(FleetError) {
        do {
            try add(records)
        } catch {
            throw .linkSettingsNotWritten(file: path, detail: systemErrorName(error.errno))
        }
    }
}
