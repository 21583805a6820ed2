import GrokBasics
import Foundation
import GrokPostgres

/// A link setting AutoConfig (or a fallback after a failure) chose for a Grokker or a
/// sound-card model, as the ledger keeps it (`link_settings`, schema version 7): so every
/// station of a fleet starts from what any station learned (docs/ledger.md, "Link settings").
/// The table is a history; the newest record of a subject is its setting.
public struct LinkSettingRecord: Sendable, Hashable {
    /// What the setting belongs to.
    public enum Subject: Sendable, Hashable {
        /// A Grokker, by its serial.
        case serial(String)
        /// A sound-card model: `vvvv:pppp` (the USB vendor:product of an ALSA card), or
        /// `emulated` for the emulated bench.
        case soundCard(String)

        /// The `subject_kind` column.
        public var kind: String {
            switch self {
            case .serial: "serial"
            case .soundCard: "sound_card"
            }
        }

        /// The `subject` column.
        public var key: String {
            switch self {
            case .serial(let key), .soundCard(let key): key
            }
        }

        /// The subject of a `subject_kind` and `subject` (the ledger's columns, the station
        /// file's keys); `nil` for a kind no subject has.
        public init?(kind: String, key: String) {
            switch kind {
            case "serial": self = .serial(key)
            case "sound_card": self = .soundCard(key)
            default: return nil
            }
        }
    }

    /// Why it was recorded.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// AutoConfig chose it (a Grokker met for the first time, or its stored setting failed).
        case autoconfig
        /// A command's setting failed mid-run and it dropped one step.
        case fallback
    }

    public var subject: Subject
    public var samplesPerBit: Int
    public var sampleRate: Int
    public var reason: Reason
    /// The station that learned it (empty where the station has no name).
    public var station: String
    public var recordedAt: Date

    public init(subject: Subject, samplesPerBit: Int, sampleRate: Int, reason: Reason, station: String, recordedAt: Date) {
        self.subject = subject
        self.samplesPerBit = samplesPerBit
        self.sampleRate = sampleRate
        self.reason = reason
        self.station = station
        self.recordedAt = recordedAt
    }
}

extension LedgerRows {
    static let linkSettingColumns = "subject_kind, subject, samples_per_bit, sample_rate, reason, station, recorded_at"

    /// The newest record of each subject.
    static let newestLinkSettings = """
        SELECT \(linkSettingColumns) FROM link_settings
        WHERE id IN (SELECT max(id) FROM link_settings GROUP BY subject_kind, subject) ORDER BY subject_kind, subject
        """

    static func linkSetting(_ row: some LedgerRow) throws(LedgerError) -> LinkSettingRecord {
        let kind = try row.required(0, "link_settings.subject_kind")
        let key = try row.required(1, "link_settings.subject")
        guard let subject = LinkSettingRecord.Subject(kind: kind, key: key) else {
            throw row.damage("unknown_value", ["link_settings.subject_kind", kind])
        }
        let reasonText = try row.required(4, "link_settings.reason")
        guard let reason = LinkSettingRecord.Reason(rawValue: reasonText) else {
            throw row.damage("unknown_value", ["link_settings.reason", reasonText])
        }
        return LinkSettingRecord(
            subject: subject, samplesPerBit: Int(try row.requiredInteger(2, "link_settings.samples_per_bit")),
            sampleRate: Int(try row.requiredInteger(3, "link_settings.sample_rate")), reason: reason,
            station: try row.required(5, "link_settings.station"), recordedAt: try row.date(6, "link_settings.recorded_at"))
    }
}

extension Ledger {
    /// Records a link setting (one transaction).
    public func recordLinkSetting(_ record: LinkSettingRecord) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            try db.execute(
                """
                INSERT INTO link_settings (subject_kind, subject, samples_per_bit, sample_rate, reason, station, recorded_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """,
                [.text(record.subject.kind), .text(record.subject.key), .integer(Int64(record.samplesPerBit)),
                 .integer(Int64(record.sampleRate)), .text(record.reason.rawValue), .text(record.station),
                 .text(LedgerTime.format(record.recordedAt))])
        }
    }

    /// The newest setting of each subject; none from a file older than schema version 7
    /// (opened read-only), which has no such table.
    public func linkSettings() throws(LedgerError) -> [LinkSettingRecord] {
        guard fileVersion >= 7 else { return [] }
        return try read { (db) throws(LedgerError) in
            try db.rows(LedgerRows.newestLinkSettings) { (row) throws(LedgerError) in try LedgerRows.linkSetting(row) }
        }
    }
}

extension PostgresLedger {
    /// Records a link setting, as this station.
    public func recordLinkSetting(_ record: LinkSettingRecord) throws(LedgerError) {
        try write { (db) throws(LedgerError) in
            _ = try Self.query(db, target, """
                INSERT INTO link_settings (subject_kind, subject, samples_per_bit, sample_rate, reason, station, recorded_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                """,
                [record.subject.kind, record.subject.key, String(record.samplesPerBit), String(record.sampleRate),
                 record.reason.rawValue, record.station.isEmpty ? station : record.station, LedgerTime.format(record.recordedAt)])
        }
    }

    /// The newest setting of each subject, learned by any station.
    public func linkSettings() throws(LedgerError) -> [LinkSettingRecord] {
        try read { (db) throws(LedgerError) in
            try Self.rows(db, target, LedgerRows.newestLinkSettings) { (row) throws(LedgerError) in try LedgerRows.linkSetting(row) }
        }
    }
}

extension SpoolFailover {
    /// Records a link setting in the shared ledger while it is reachable; once the station
    /// spools, in the spool's file (a spool's sync does not carry it to the shared ledger).
    public func recordLinkSetting(_ record: LinkSettingRecord) throws(LedgerError) {
        if let online { try online.recordLinkSetting(record) } else if let spool { try spool.ledger.recordLinkSetting(record) }
    }

    /// The newest setting of each subject, from the shared ledger or (spooling) the spool.
    public func linkSettings() throws(LedgerError) -> [LinkSettingRecord] {
        if let online { return try online.linkSettings() }
        return try spool?.ledger.linkSettings() ?? []
    }
}
