import Foundation
import GrokAudio
import GrokLedger
import GrokLink
import UGrokIt

/// The link settings a station knows (its state directory's file and, in a fleet run, the
/// ledger's): the newest record of each Grokker and sound-card model.
public struct LinkSettingBook: Sendable {
    public private(set) var records: [LinkSettingRecord.Subject: LinkSettingRecord] = [:]

    public init(_ records: [LinkSettingRecord] = []) {
        for record in records { add(record) }
    }

    /// Keeps `record` unless the book has a newer one of its subject.
    public mutating func add(_ record: LinkSettingRecord) {
        if let known = records[record.subject], known.recordedAt > record.recordedAt { return }
        records[record.subject] = record
    }

    /// The samples per bit stored for `subject` at `sampleRate` (a setting at another rate
    /// does not apply).
    public func samplesPerBit(_ subject: LinkSettingRecord.Subject, sampleRate: Int) -> Int? {
        guard let record = records[subject], record.sampleRate == sampleRate,
              ReaderSession.autoConfigLadder.contains(where: { $0.samplesPerBit == record.samplesPerBit }) else { return nil }
        return record.samplesPerBit
    }
}

/// How a session reaches its Grokker at the right setting (issue 22, AutoConfig): the
/// setting stored for the sound card's model (or, none stored, the fastest) first; the
/// Grokker's own stored setting once its serial is known; AutoConfig, fastest first, when the
/// Grokker is met for the first time (from the fastest) or its stored setting fails (from one
/// step below it). A known Grokker costs one
/// handshake and GetVersion; AutoConfig a few seconds of echoes at the fastest setting that
/// works (the vendor's, slowest first, about 29 s).
public struct LinkSetup: Sendable {
    public var book: LinkSettingBook
    /// The sound-card model of the port (``soundCardModel(_:sysfs:)``), nil if none is known.
    public var cardModel: String?
    /// The station that learns (recorded with what it learns).
    public var station: String

    public init(book: LinkSettingBook, cardModel: String?, station: String = "") {
        self.book = book
        self.cardModel = cardModel
        self.station = station
    }

    /// Where a setting came from (`--json`'s `link_setting`).
    public enum Source: String, Sendable, Hashable {
        /// The setting stored for this Grokker (or its card's model) worked.
        case stored
        /// AutoConfig chose it now.
        case autoconfig
    }

    /// A connected session's setting and what was learned on the way.
    public struct Outcome: Sendable {
        public var info: ReaderInfo
        public var samplesPerBit: Int
        public var sampleRate: Int
        public var source: Source
        /// Records to remember (AutoConfig's result, for the Grokker and the card's model).
        public var learned: [LinkSettingRecord]
        /// Bits per second at the setting.
        public var bitRate: Double { Double(sampleRate) / Double(samplesPerBit) }
    }

    /// The setting tried first: the card model's stored one, else the fastest.
    func firstSetting(sampleRate: Int) -> Int {
        cardModel.flatMap { book.samplesPerBit(.soundCard($0), sampleRate: sampleRate) }
            ?? ReaderSession.autoConfigLadder[0].samplesPerBit
    }

    /// Connects `session` (not connected) at the right setting, running AutoConfig where needed.
    /// - Throws: the session's error when nothing works (the last step's failure).
    public func connect(_ session: ReaderSession, now: () -> Date = Date.init) throws(ReaderError) -> Outcome {
        let rate = session.link.sampleRate
        let first = firstSetting(sampleRate: rate)
        session.samplesPerBit = first
        let info: ReaderInfo
        do {
            info = try session.connect()
        } catch {
            guard Self.worthAnotherSetting(error), let lower = ReaderSession.autoConfigStep(below: first) else { throw error }
            return try autoConfig(session, from: lower, serial: nil, now: now)
        }
        let serial = info.serialNumberText
        guard let own = book.samplesPerBit(.serial(serial), sampleRate: rate) else {
            // Met for the first time: AutoConfig from the fastest (this unit may do better than
            // the card's model did with another); connected there already, that is its first round.
            return try autoConfig(session, from: ReaderSession.autoConfigLadder[0].samplesPerBit, serial: serial, now: now)
        }
        if own == first {
            return Outcome(info: info, samplesPerBit: own, sampleRate: rate, source: .stored, learned: [])
        }
        session.disconnect()
        session.samplesPerBit = own
        do {
            let again = try session.connect()
            return Outcome(info: again, samplesPerBit: own, sampleRate: rate, source: .stored, learned: [])
        } catch {
            guard Self.worthAnotherSetting(error), let lower = ReaderSession.autoConfigStep(below: own) else { throw error }
            return try autoConfig(session, from: lower, serial: serial, now: now)
        }
    }

    private func autoConfig(_ session: ReaderSession, from start: Int, serial: String?, now: () -> Date) throws(ReaderError) -> Outcome {
        let kept = try session.autoConfig(order: .fastestFirst(startingAt: start))
        guard let info = session.info else { throw .cannotGetInfo(port: session.port.name) }
        let rate = session.link.sampleRate
        let time = now()
        var learned = [LinkSettingRecord(subject: .serial(serial ?? info.serialNumberText), samplesPerBit: kept, sampleRate: rate,
                                         reason: .autoconfig, station: station, recordedAt: time)]
        if let cardModel {
            learned.append(LinkSettingRecord(subject: .soundCard(cardModel), samplesPerBit: kept, sampleRate: rate,
                                             reason: .autoconfig, station: station, recordedAt: time))
        }
        return Outcome(info: info, samplesPerBit: kept, sampleRate: rate, source: .autoconfig, learned: learned)
    }

    /// Connects `session` at the setting `file` remembers for its Grokker or `cardModel`,
    /// running AutoConfig where needed, and adds what was learned to `file` (nil: nothing
    /// is remembered): how every device command reaches its Grokkers.
    /// - Throws: the session's ``ReaderError``; ``FleetError/linkSettingsNotWritten(file:detail:)``.
    public static func connect(_ session: ReaderSession, cardModel: String?, remembering file: LinkSettingFile?) throws -> Outcome {
        let outcome = try LinkSetup(book: file?.read() ?? LinkSettingBook(), cardModel: cardModel).connect(session)
        try file?.remember(outcome.learned)
        return outcome
    }

    /// A setting that failed mid-run: the session set one step slower (false at the slowest),
    /// and the record of the fall for the Grokker `serial`. The caller connects again.
    public func fallBack(_ session: ReaderSession, serial: String, now: () -> Date = Date.init) -> LinkSettingRecord? {
        guard let lower = ReaderSession.autoConfigStep(below: session.samplesPerBit) else { return nil }
        session.samplesPerBit = lower
        return LinkSettingRecord(subject: .serial(serial), samplesPerBit: lower, sampleRate: session.link.sampleRate,
                                 reason: .fallback, station: station, recordedAt: now())
    }

    /// Whether a failed connection may work at another setting: not when the port cannot be
    /// used (audio, nothing plugged in) or the reader is too old.
    static func worthAnotherSetting(_ error: ReaderError) -> Bool {
        switch error {
        case .audio, .notPluggedIn, .incompatibleReader: false
        default: true
        }
    }
}
