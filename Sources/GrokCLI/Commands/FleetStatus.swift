import GrokBasics
import Foundation
import GrokFleet
import GrokLedger

// MARK: Reading a ledger without writing to it

/// Opens the ledger `--ledger` (else `$GROKCTL_LEDGER`, else the station's file) names for
/// the commands that only read it: `ledger show`, `export`, `check`, `fleet status`,
/// `fleet report`. A SQLite file must exist and is opened read-only; a shared ledger on
/// PostgreSQL is read without creating, migrating or closing anything.
enum LedgerReader {
    /// The ledger as a store and a fleet view source, and where it is (errors name it).
    struct Opened {
        let store: any LedgerStore & FleetViewSource
        let location: String
        /// The SQLite ledger, when it is one (export and check have file-only paths).
        let file: Ledger?
        let shared: PostgresLedger?
    }

    static func open(option: String?, environment: [String: String]) throws -> Opened {
        let location = StateDirectory.ledger(option: option, environment: environment)
        if LedgerLocation.isShared(location) {
            do {
                let ledger = try PostgresLedger.open(location, station: "grokctl-reader", readOnly: true)
                return Opened(store: ledger, location: ledger.target, file: nil, shared: ledger)
            } catch .cannotOpen(let target, "no_ledger") {
                throw CLIError.ledgerMissing(path: target)
            }
        }
        guard FileManager.default.fileExists(atPath: location) else { throw CLIError.ledgerMissing(path: location) }
        // Read-only: reading never creates, migrates or repairs anything, and a damaged ledger is refused.
        let ledger = try Ledger.open(path: location, readOnly: true)
        return Opened(store: ledger, location: location, file: ledger, shared: nil)
    }
}

// MARK: grokctl fleet status

/// The options `fleet status` and `fleet report` share: the ledger, one rollout, a profile's halt rule.
enum FleetViewOptions {
    static let rollout = OptionDeclaration.option("rollout", value: .valueName, help: .optionFleetRollout)
    static let profile = OptionDeclaration.option("profile", value: .valueFile, help: .optionFleetHaltProfile, type: .profile)

    /// `--profile`'s file (a file or a profile's name), checked while parsing.
    static func profileFile(_ values: ParsedValues) throws(CLIError) -> String? {
        guard let name = values.value(profile) else { return nil }
        return try InstallPaths(environment: values.environment).profile(name, option: profile.spelling)
    }

    /// The halt rule of the profile's rollout, by its rollout id.
    static func haltRules(_ file: String?) throws -> [String: FleetView.HaltRule] {
        guard let file else { return [:] }
        let loaded = try Profile.load(path: file)
        guard let rollout = loaded.rollout, let halt = rollout.halt else { return [:] }
        return [rollout.id: FleetView.HaltRule(afterDevices: halt.afterDevices, maxFailureRate: halt.maxFailureRate)]
    }

    static func rolloutID(_ values: ParsedValues) throws(CLIError) -> String? {
        guard let value = values.value(rollout) else { return nil }
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else { throw .invalidValue(value: value, option: rollout.spelling) }
        return value
    }

    /// The view of the ledger, with `RolloutSelection` deciding which Grokkers a stage selects.
    static func view(_ opened: LedgerReader.Opened, rollout: String?, haltRules: [String: FleetView.HaltRule]) throws -> FleetView {
        let snapshot = try opened.store.fleetSnapshot()
        let view = FleetView(snapshot, selects: { id, serial, percentage in
            RolloutSelection.place(serial: serial, rolloutID: id) < percentage
        }, haltRules: haltRules, rollout: rollout)
        if let rollout, view.rollouts.isEmpty { throw CLIError.noSuchRollout(ledger: opened.location, rollout: rollout) }
        return view
    }
}

/// `grokctl fleet status [--ledger L] [--rollout ID] [--profile P] [--json]`.
struct FleetStatusCommand: Command {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "status", abstract: .commandFleetStatusAbstract, discussion: .commandFleetStatusDiscussion,
                             options: [FleetOptions.ledger, FleetViewOptions.rollout, FleetViewOptions.profile])
    }

    let ledgerFile: String?
    let rollout: String?
    let profileFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
        rollout = try FleetViewOptions.rolloutID(values)
        profileFile = try FleetViewOptions.profileFile(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let haltRules = try FleetViewOptions.haltRules(profileFile)
        let opened = try LedgerReader.open(option: ledgerFile, environment: context.environment)
        let view = try FleetViewOptions.view(opened, rollout: rollout, haltRules: haltRules)
        let console = context.console
        if console.isJSON {
            for rollout in view.rollouts { console.json(FleetRolloutObject(rollout)) }
            for tally in view.firmware { console.json(FleetFirmwareObject(tally)) }
            for rates in view.readRates { console.json(FleetReadRatesObject(rates)) }
            return .success
        }
        FleetStatusText(localizer: context.localizer).print(view, ledger: opened.location, to: console)
        return .success
    }
}

/// The status as tables, in the user's language.
struct FleetStatusText {
    let localizer: Localizer
    var language: Language { localizer.language }

    func percent(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : LocaleFormat.decimal(value, digits: 1, language)
    }

    func rate(_ value: Double?) -> String { value.map { LocaleFormat.decimal($0 * 100, digits: 1, language) + " %" } ?? "–" }

    func state(_ value: RolloutStageState?) -> String {
        switch value {
        case .active: localizer.text(.fleetStateActive)
        case .paused: localizer.text(.fleetStatePaused)
        case .halted: localizer.text(.fleetStateHalted)
        case nil: localizer.text(.fleetStateUnknown)
        }
    }

    func action(_ value: StageAction) -> String {
        switch value {
        case .created: localizer.text(.fleetActionCreated)
        case .paused: localizer.text(.fleetActionPaused)
        case .resumed: localizer.text(.fleetActionResumed)
        case .advanced: localizer.text(.fleetActionAdvanced)
        case .halted: localizer.text(.fleetActionHalted)
        }
    }

    func station(_ name: String) -> String { name.isEmpty ? localizer.text(.fleetStatusUnknownStation) : name }

    func threshold(_ rollout: FleetView.Rollout) -> String {
        guard let halt = rollout.halt else { return localizer.text(.fleetStatusNoThreshold) }
        let above = rollout.aboveThreshold == true && rollout.totals.finished >= halt.afterDevices
        return localizer.text(above ? .fleetStatusAboveThreshold : .fleetStatusWithinThreshold,
                              percent(halt.maxFailureRate * 100), String(halt.afterDevices))
    }

    /// Units finished and the failure rate; against the threshold; units pending.
    /// Why a stage is halted or paused, in the reader's language: a halt as the runs that met
    /// it said it (the ledger keeps its figures, not a sentence), a pause with who made it.
    func why(_ rollout: FleetView.Rollout) -> String? {
        if let halt = rollout.haltFinding {
            return localizer.message(for: FleetError.halted(rollout: rollout.id, failed: halt.failed, finished: halt.finished,
                                                            threshold: halt.threshold, trippedBy: halt.trippedBy,
                                                            stationFailures: halt.stationFailures))
        }
        if rollout.state == .paused {
            return localizer.message(for: FleetError.stagePaused(rollout: rollout.id, by: person(rollout.updatedBy)))
        }
        guard rollout.state == .halted else { return nil }
        let why = [rollout.reasonCode, rollout.reasonDetail.isEmpty ? nil : rollout.reasonDetail].compactMap { $0 }
        return why.isEmpty ? nil : localizer.text(.fleetStatusWhy, why.joined(separator: ": "))
    }

    /// Who changed a stage; a dash when nobody was named (no `--operator` and no `$USER`).
    func person(_ name: String?) -> String { (name ?? "").isEmpty ? "–" : name! }

    /// Units finished and their failure rate ("no unit finished yet" before any did).
    func finished(_ counts: FleetView.Counts) -> String {
        guard let rate = counts.failureRate else { return localizer.text(.fleetStatusNoneFinished) }
        return localizer.text(.fleetStatusFinished, String(counts.finished), LocaleFormat.decimal(rate * 100, digits: 1, language))
    }

    func summary(_ rollout: FleetView.Rollout) -> String {
        localizer.text(.fleetStatusSummary, finished(rollout.totals), threshold(rollout),
                       localizer.text(.fleetStatusPending, String(rollout.totals.pending)))
    }

    func countsTable(_ title: String, _ groups: [FleetView.Group], total: FleetView.Counts?) -> Table {
        var rows = groups.map { group in
            [group.name, String(group.counts.done), String(group.counts.failed), String(group.counts.incomplete),
             String(group.counts.pending), rate(group.counts.failureRate)]
        }
        if let total {
            rows.append([localizer.text(.fleetStatusTotal), String(total.done), String(total.failed), String(total.incomplete),
                         String(total.pending), rate(total.failureRate)])
        }
        return Table(headers: [title, localizer.text(.fleetColumnDone), localizer.text(.fleetColumnFailed),
                               localizer.text(.fleetColumnIncomplete), localizer.text(.fleetColumnPending),
                               localizer.text(.fleetColumnFailureRate)],
                     rows: rows, alignments: [.left, .right, .right, .right, .right, .right])
    }

    func date(_ value: Date?) -> String { value.map { LocaleFormat.dateTime($0, language) } ?? "–" }

    func print(_ view: FleetView, ledger: String, to console: Console) {
        if view.rollouts.isEmpty { console.print(localizer.text(.fleetStatusNone, ledger)) }
        for rollout in view.rollouts {
            console.print(localizer.text(.fleetStatusRollout, rollout.id, rollout.release ?? "–", percent(rollout.percentage),
                                         state(rollout.state)))
            if let why = why(rollout) { console.print("  " + why) }
            if rollout.state == .halted, let tripped = rollout.trippedBy {
                console.print("  " + localizer.text(.fleetStatusTrippedBy, tripped))
            }
            if let by = rollout.updatedBy { console.print("  " + localizer.text(.fleetStatusChanged, date(rollout.updatedAt), person(by))) }
            console.print("  " + summary(rollout))
            console.table(countsTable(localizer.text(.fleetColumnStation),
                                      rollout.byStation.map { FleetView.Group(name: station($0.name), counts: $0.counts) },
                                      total: rollout.totals))
            console.print("")
            console.table(countsTable(localizer.text(.fleetColumnHardwareRevision),
                                      rollout.byHardwareRevision.map { FleetView.Group(name: $0.name.isEmpty ? "–" : $0.name, counts: $0.counts) },
                                      total: nil))
            if rollout.byStage.count > 1 {
                console.print("")
                console.table(countsTable(localizer.text(.fleetColumnStage),
                                          rollout.byStage.map { FleetView.Group(name: percent($0.percentage) + " %", counts: $0.counts) },
                                          total: nil))
            }
            if !rollout.events.isEmpty {
                console.print("")
                console.print("  " + localizer.text(.fleetStatusEvents))
                console.table(Table(
                    headers: [localizer.text(.ledgerColumnWhen), localizer.text(.fleetColumnChange), localizer.text(.fleetColumnStage),
                              localizer.text(.fleetColumnStation), localizer.text(.fleetColumnWho), localizer.text(.fleetColumnNote)],
                    rows: rollout.events.map { event in
                        var stage = [event.percentageBefore, event.percentageAfter].compactMap { $0 }.map { percent($0) + " %" }
                        if stage.count == 2, stage[0] == stage[1] { stage.removeFirst() }
                        return [date(event.at), action(event.action), stage.joined(separator: " → "), event.station ?? "–", event.actor,
                                event.note]
                    }))
            }
            console.print("")
        }
        console.print(localizer.text(.fleetStatusFirmware, String(view.deviceCount)))
        console.table(Table(
            headers: [localizer.text(.fleetColumnFirmware), localizer.text(.fleetColumnGrokkers), localizer.text(.fleetColumnShare)],
            rows: view.firmware.map { tally in
                [tally.name ?? localizer.text(.fleetStatusUnknownFirmware), String(tally.count),
                 rate(view.deviceCount == 0 ? nil : Double(tally.count) / Double(view.deviceCount))]
            }, alignments: [.left, .right, .right]))
        if !view.readRates.isEmpty {
            console.print("")
            console.print(localizer.text(.fleetStatusReadRates))
            console.table(Table(
                headers: [localizer.text(.fleetColumnStation), localizer.text(.fleetColumnTests), localizer.text(.fleetColumnPassed),
                          localizer.text(.fleetColumnMinimum), localizer.text(.fleetColumnMedian), localizer.text(.fleetColumnMaximum)],
                rows: view.readRates.map { rates in
                    [station(rates.station), String(rates.tests), String(rates.passed), LocaleFormat.decimal(rates.minimum, digits: 1, language),
                     LocaleFormat.decimal(rates.median, digits: 1, language), LocaleFormat.decimal(rates.maximum, digits: 1, language)]
                }, alignments: [.left, .right, .right, .right, .right, .right]))
        }
    }
}

// MARK: JSON lines of `fleet status --json` (stable codes, figures as numbers)

struct FleetCountsObject: Encodable {
    let done: Int
    let failed: Int
    let incomplete: Int
    let pending: Int
    let finished: Int
    /// null (not left out) while no unit finished.
    let failureRate: Double?

    init(_ counts: FleetView.Counts) {
        done = counts.done
        failed = counts.failed
        incomplete = counts.incomplete
        pending = counts.pending
        finished = counts.finished
        failureRate = counts.failureRate
    }

    enum CodingKeys: String, CodingKey {
        case done, failed, incomplete, pending, finished
        case failureRate = "failure_rate"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(done, forKey: .done)
        try container.encode(failed, forKey: .failed)
        try container.encode(incomplete, forKey: .incomplete)
        try container.encode(pending, forKey: .pending)
        try container.encode(finished, forKey: .finished)
        try container.encode(failureRate, forKey: .failureRate)
    }
}

struct FleetGroupObject: Encodable {
    let name: String
    let counts: FleetCountsObject

    init(_ group: FleetView.Group) {
        name = group.name
        counts = FleetCountsObject(group.counts)
    }
}

/// A stage's units: `name` is the stage's percentage, a number.
struct FleetStageGroupObject: Encodable {
    let name: Double
    let counts: FleetCountsObject

    init(_ group: FleetView.StageGroup) {
        name = group.percentage
        counts = FleetCountsObject(group.counts)
    }
}

struct FleetRolloutObject: Encodable {
    struct Halt: Encodable {
        let afterDevices: Int
        let maxFailureRate: Double
        enum CodingKeys: String, CodingKey { case afterDevices = "after_devices", maxFailureRate = "max_failure_rate" }
    }

    struct Event: Encodable {
        let action: StageAction
        let percentageBefore: Double?
        let percentageAfter: Double?
        let station: String?
        let actor: String
        let note: String
        let at: String
        enum CodingKeys: String, CodingKey {
            case action, station, actor, note, at
            case percentageBefore = "percentage_before", percentageAfter = "percentage_after"
        }
    }

    let record = "rollout"
    let id: String
    let release: String?
    let percentage: Double
    let state: RolloutStageState?
    let reasonCode: String?
    let reasonDetail: String
    let trippedBy: String?
    let updatedAt: String?
    let updatedBy: String?
    let totals: FleetCountsObject
    let halt: Halt?
    let aboveThreshold: Bool?
    let stations: [FleetGroupObject]
    let hardwareRevisions: [FleetGroupObject]
    let stages: [FleetStageGroupObject]
    let events: [Event]

    init(_ rollout: FleetView.Rollout) {
        id = rollout.id
        release = rollout.release
        percentage = rollout.percentage
        state = rollout.state
        reasonCode = rollout.reasonCode
        reasonDetail = rollout.reasonDetail
        trippedBy = rollout.trippedBy
        updatedAt = rollout.updatedAt.map { Timestamp.iso8601($0) }
        updatedBy = rollout.updatedBy
        totals = FleetCountsObject(rollout.totals)
        halt = rollout.halt.map { Halt(afterDevices: $0.afterDevices, maxFailureRate: $0.maxFailureRate) }
        aboveThreshold = rollout.aboveThreshold
        stations = rollout.byStation.map(FleetGroupObject.init)
        hardwareRevisions = rollout.byHardwareRevision.map(FleetGroupObject.init)
        stages = rollout.byStage.map(FleetStageGroupObject.init)
        events = rollout.events.map {
            Event(action: $0.action, percentageBefore: $0.percentageBefore, percentageAfter: $0.percentageAfter, station: $0.station,
                  actor: $0.actor, note: $0.note, at: Timestamp.iso8601($0.at))
        }
    }

    enum CodingKeys: String, CodingKey {
        case record, id, release, percentage, state, totals, halt, stations, stages, events
        case reasonCode = "reason_code", reasonDetail = "reason_detail", trippedBy = "tripped_by", updatedAt = "updated_at"
        case updatedBy = "updated_by", aboveThreshold = "above_threshold", hardwareRevisions = "hardware_revisions"
    }
}

struct FleetFirmwareObject: Encodable {
    let record = "firmware"
    let version: String?
    let devices: Int

    init(_ tally: FleetView.Tally) {
        version = tally.name
        devices = tally.count
    }

    enum CodingKeys: String, CodingKey { case record, version, devices }
}

struct FleetReadRatesObject: Encodable {
    let record = "smoke_tests"
    let station: String
    let tests: Int
    let passed: Int
    let minimum: Double
    let median: Double
    let maximum: Double

    init(_ rates: FleetView.ReadRates) {
        station = rates.station
        tests = rates.tests
        passed = rates.passed
        minimum = rates.minimum
        median = rates.median
        maximum = rates.maximum
    }

    enum CodingKeys: String, CodingKey {
        case record, station, tests, passed
        case minimum = "reads_per_second_min", median = "reads_per_second_median", maximum = "reads_per_second_max"
    }
}
