import GrokBasics
import Foundation
import GrokFirmware
import GrokLedger
import UGrokIt

/// One fleet run (`provision`, `rollout`, `verify`), as a use case: ``prepare()`` does
/// everything that can be known to fail before the first unit is touched (the preflight,
/// the firmware channel's refresh, the ledger or the station's spool); ``plan(_:interactive:)``
/// is the dry run; ``run(_:decider:holdEvents:handle:)`` runs the units, hands their events to
/// the caller's thread and ends in the report and its file (docs/fleet.md).
///
/// The caller chooses the words: the session reports stable codes (``FleetError``) and
/// typed events (``FleetEvent``, ``Event``), and asks a person nothing itself (a terminal's
/// questions come in as the decider).
public final class FleetSession: Sendable {
    /// What a run is given: the devices, where things are kept, who runs it, the hooks.
    public struct Configuration: Sendable {
        public var mode: FleetMode
        /// The profile file (`--profile`).
        public var profileFile: String
        /// The units to run (`--device`); none: every emulated Grokker on the bench.
        public var devices: [DeviceSpec]
        /// How the units' ports are opened (the bench, ALSA, recording, the locks).
        public var ports: DevicePortContext
        /// Link options (`--realtime`); the profile's timeouts replace the handshake's.
        public var readerOptions: ReaderOptions
        /// `--station` (or `$GROKCTL_STATION`); `nil`: the profile's `station.name`, else
        /// ``defaultStation``, else the host name.
        public var station: String?
        /// The station's name when neither the command line nor the profile names one (the
        /// station settings' `station`, ``StationSettings``).
        public var defaultStation: String?
        /// Who runs it (`--operator`, else the login name).
        public var operatorName: String
        /// `--ledger` (or `$GROKCTL_LEDGER`); `nil`: the profile's `station.ledger`, else
        /// ``defaultLedger``.
        public var ledger: String?
        /// The ledger when neither the command line nor the profile names one (the station
        /// settings' `ledger`, else `<state dir>/ledger.sqlite`).
        public var defaultLedger: String
        /// Where the stations' spools are (`<state dir>/spool`).
        public var spoolDirectory: String
        /// Where the per-serial and port locks are (`<state dir>/locks`).
        public var lockDirectory: String
        /// `--report`; `nil`: `<reportsDirectory>/<run id>.json`; `-`: no file, the caller
        /// prints the report (``Outcome/reportText``).
        public var reportFile: String?
        /// Where reports go by default (`<state dir>/reports`).
        public var reportsDirectory: String
        /// A plan only (`--dry-run`): the ledger is read, nothing is written.
        public var dryRun: Bool
        /// `--quiet-readers`: the units' speakers play no cues (``FleetRunOptions/quietReaders``).
        public var quietReaders: Bool
        /// The fleet's TUF repository as this station trusts it (`--repository`); `nil`
        /// without one (a profile with a firmware section then refuses to start).
        public var repository: StationRepository?
        /// The run's key in the ledger, the report and the events.
        public var runID: String
        /// Polled while the units run (at least every 100 ms): once true, each unit stops
        /// before its next step (a stop signal, a person's Ctrl-C). A re-run finishes the rest.
        public var stopRequested: @Sendable () -> Bool
        /// Called once the units are done, before the report is written (a caller that
        /// handles signals stops letting them end the process there).
        public var devicesFinished: @Sendable () -> Void
        /// The chaos suite's faults (scripts/chaos.sh); none by default.
        public var chaos: FleetChaos
        /// A watching station (`--watch`, ``FleetSession/watch(_:statusFile:pollInterval:handle:)``):
        /// no devices are given; the bench's ports are watched instead.
        public var watch = false

        public init(mode: FleetMode, profileFile: String, devices: [DeviceSpec], ports: DevicePortContext,
                    readerOptions: ReaderOptions = ReaderOptions(), station: String? = nil, defaultStation: String? = nil,
                    operatorName: String = "",
                    ledger: String? = nil, defaultLedger: String, spoolDirectory: String, lockDirectory: String,
                    reportFile: String? = nil, reportsDirectory: String, dryRun: Bool = false, quietReaders: Bool = false,
                    repository: StationRepository? = nil, runID: String = RunKey.make(),
                    stopRequested: @escaping @Sendable () -> Bool = { false },
                    devicesFinished: @escaping @Sendable () -> Void = {}, chaos: FleetChaos = FleetChaos()) {
            self.mode = mode
            self.profileFile = profileFile
            self.devices = devices
            self.ports = ports
            self.readerOptions = readerOptions
            self.station = station
            self.defaultStation = defaultStation
            self.operatorName = operatorName
            self.ledger = ledger
            self.defaultLedger = defaultLedger
            self.spoolDirectory = spoolDirectory
            self.lockDirectory = lockDirectory
            self.reportFile = reportFile
            self.reportsDirectory = reportsDirectory
            self.dryRun = dryRun
            self.quietReaders = quietReaders
            self.repository = repository
            self.runID = runID
            self.stopRequested = stopRequested
            self.devicesFinished = devicesFinished
            self.chaos = chaos
        }
    }

    public let configuration: Configuration
    /// The profile, read when the session was made.
    public let profile: Profile
    /// How the engine carries the run out (the station resolved, the cancellation switch a
    /// stop flips, the chaos hook).
    public let runOptions: FleetRunOptions

    /// Reads the profile; nothing else is touched yet.
    /// - Throws: the profile's ``FleetError`` (unreadable, not JSON, a bad, missing or unknown key).
    public init(_ configuration: Configuration) throws(FleetError) {
        self.configuration = configuration
        profile = try Profile.load(path: configuration.profileFile)
        var options = FleetRunOptions(mode: configuration.mode, lockDirectory: configuration.lockDirectory,
                                      runID: configuration.runID, readerOptions: configuration.readerOptions)
        // --station, else the profile's station.name, else the station settings', else the host name.
        if let station = configuration.station ?? profile.station?.name ?? configuration.defaultStation { options.station = station }
        options.operatorName = configuration.operatorName
        options.quietReaders = configuration.quietReaders
        options.linkSettings = configuration.ports.linkSettings
        if let repository = configuration.repository {
            options.uploadJournal = UploadJournalFile(directory: repository.stateDirectory + "/uploads")
        }
        if let step = configuration.chaos.killAfterChange {
            options.afterChange = { changed in
                if changed.rawValue == step { kill(getpid(), SIGKILL) }
            }
        }
        runOptions = options
    }

    /// Where the run's plain-text log goes, beside its report: `--report r.json` gives
    /// `r.log` (any other name `<name>.log`); without `--report`, with `--report -` or a
    /// report that is no regular file (`/dev/full`: nothing is made beside a device),
    /// `<reports directory>/<run id>.log` (docs/fleet.md, "The run's log").
    public var logPath: String {
        var info = stat()
        if let file = configuration.reportFile, file != "-", stat(file, &info) != 0 || (info.st_mode & S_IFMT) == S_IFREG {
            return (file.hasSuffix(".json") ? String(file.dropLast(5)) : file) + ".log"
        }
        return joinPath(configuration.reportsDirectory, configuration.runID + ".log")
    }

    /// The ledger the run records into: `--ledger`, else the profile's, else the default.
    public var ledgerLocation: String { configuration.ledger ?? profile.station?.ledger ?? configuration.defaultLedger }

    /// This station's spool (where it records while the shared ledger cannot be reached).
    public var spoolPath: String {
        StationPaths.spool(station: runOptions.station, in: configuration.spoolDirectory)
    }
}

/// Faults the chaos suite injects into a real run (scripts/chaos.sh, docs/fleet.md), read
/// from `GROKCTL_CHAOS_KILL_AFTER_CHANGE` and `GROKCTL_CHAOS_SIGNAL_BEFORE_REPORT`.
public struct FleetChaos: Sendable, Equatable {
    /// Die the hard way (SIGKILL) right after this step (a ``FleetStep`` code) changed a
    /// Grokker, before the change is recorded.
    public var killAfterChange: String?
    /// Send this signal to the process right as the report is about to be written.
    public var signalBeforeReport: Int32?

    public init(killAfterChange: String? = nil, signalBeforeReport: Int32? = nil) {
        self.killAfterChange = killAfterChange
        self.signalBeforeReport = signalBeforeReport
    }

    /// The faults `environment` asks for (none when it names none).
    public init(environment: [String: String]) {
        let step = environment["GROKCTL_CHAOS_KILL_AFTER_CHANGE"]
        killAfterChange = step?.isEmpty == false ? step : nil
        signalBeforeReport = environment["GROKCTL_CHAOS_SIGNAL_BEFORE_REPORT"].flatMap(Int32.init)
    }
}
