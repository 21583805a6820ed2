import Foundation
import GrokBasics
import GrokFirmware
import GrokkerEmulator
import GrokLedger
import UGrokIt

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FleetSession {
    /// A run ready to start: what ``FleetSession/prepare()`` found and opened.
    public struct Prepared: Sendable {
        /// The units, in the order given.
        public let devices: [FleetDevice]
        /// The profile's firmware channel, read (and for a run, prefetched); `nil` without a
        /// firmware section.
        public let firmware: FleetFirmware?
        /// The releases downloaded and verified before the run (their names); none for a dry run.
        public let prefetched: [String]
        /// A dry run's: the releases a run would fetch and verify before it starts (their
        /// names); the dry run fetches none. Empty for a run.
        public let wouldFetch: [String]
        /// Where a run records (the shared ledger, or the spool); `nil` for a dry run.
        public let ledger: StationLedger?
        /// The history a dry run reads (whether a smoke test is owed); `nil` for a run, or
        /// when there is no ledger yet.
        public let history: (any LedgerStore)?
        /// The profile's policy for this run (a rollout's with its stage): the decider of an
        /// unattended run, the answers behind a person's.
        public let policy: PolicyDelegate
    }

    /// Everything before the first unit is touched: the devices (or the bench's), the
    /// preflight (every emulated unit's scene holds the smoke test's reference tags, the report
    /// can be written), the firmware channel refreshed through TUF with the profile's targets
    /// downloaded and verified, and the ledger (or, unreachable, a refusal or this station's
    /// spool; a dry run only reads it).
    /// - Throws: ``FleetError`` (``FleetError/noDevices(bench:)``,
    ///   ``FleetError/sceneLacksReferenceTags(device:scene:missing:)``,
    ///   ``FleetError/reportNotWritable(path:detail:)``, ``FleetError/firmwareCache(channel:cause:)``,
    ///   ``FleetError/ledgerOffline(database:detail:)``, ...) or the ledger's error; nothing was started.
    public func prepare() async throws -> Prepared {
        let specs = try deviceSpecs()
        try checkScenes(specs)
        if !configuration.dryRun { try checkReportWritable() }
        let firmware = try await openFirmware()
        let prefetched = firmware.map { firmware in firmware.listings.filter { firmware.isDownloaded($0) }.map(\.name) } ?? []
        var wouldFetch: [String] = []
        if configuration.dryRun, let firmware, let policy = profile.firmware {
            wouldFetch = firmware.listings(targetedBy: policy).map(\.name)
        }
        let devices = specs.map { DevicePorts.fleetDevice($0, context: configuration.ports) }
        let offline = profile.station?.offline ?? .refuse
        let reconnect = profile.station?.ledgerReconnectSeconds ?? Profile.StationConfig.defaultLedgerReconnectSeconds
        if configuration.dryRun {
            // The plan reads the ledger's history (whether a smoke test is owed) and writes nothing.
            let history = try StationLedger.openForPlan(location: ledgerLocation, station: runOptions.station,
                                                        mode: configuration.mode, offline: offline, spoolPath: spoolPath,
                                                        reconnectSeconds: reconnect)
            return Prepared(devices: devices, firmware: firmware, prefetched: prefetched, wouldFetch: wouldFetch, ledger: nil,
                            history: history, policy: try policy(ledger: history, readOnly: true))
        }
        // The shared ledger, or (unreachable) a refusal or this station's spool.
        let ledger = try StationLedger.open(location: ledgerLocation, station: runOptions.station,
                                            mode: configuration.mode, offline: offline, spoolPath: spoolPath,
                                            reconnectSeconds: reconnect)
        return Prepared(devices: devices, firmware: firmware, prefetched: prefetched, wouldFetch: wouldFetch, ledger: ledger,
                        history: nil, policy: try policy(ledger: ledger.ledger, readOnly: false))
    }

    /// The devices named, or without any, every emulated Grokker on the bench.
    func deviceSpecs() throws(FleetError) -> [DeviceSpec] {
        if !configuration.devices.isEmpty { return configuration.devices }
        // A watching station works the Grokkers as they are plugged in.
        if configuration.watch { return [] }
        let bench = configuration.ports.bench
        let onBench = try bench.emulatedDevices()
        guard !onBench.isEmpty else { throw .noDevices(bench: bench.directory) }
        return onBench.map { DeviceSpec.emulated(index: $0) }
    }

    /// Preflight: every emulated Grokker's scene holds the smoke test's reference tags (a unit
    /// without a scene file has the default bench, `RFScene.defaultBench`, which holds the
    /// shipped profiles' tags).
    func checkScenes(_ specs: [DeviceSpec]) throws(FleetError) {
        guard let wanted = profile.smokeTest?.referenceTags, !wanted.isEmpty else { return }
        for spec in specs {
            // The scene is the Grokker's (in its state directory), wherever it is plugged in.
            guard case .emulated(let port) = spec, case .unit(let index) = try configuration.ports.bench.content(ofPort: port) else { continue }
            let path = configuration.ports.bench.stateDirectory(for: index) + "/scene.json"
            var present: Set<[UInt8]> = []
            if FileManager.default.fileExists(atPath: path) {
                if let scene = try? RFScene.load(path: path) { present = Set(scene.tags.map(\.epc)) }
            } else {
                present = Set(RFScene.defaultBench(seed: UInt64(index)).tags.map(\.epc))
            }
            let missing = wanted.filter { !present.contains($0.bytes) }
            if !missing.isEmpty {
                throw .sceneLacksReferenceTags(device: spec.description, scene: path, missing: missing.map(\.description))
            }
        }
    }

    /// Preflight: the report's folder can be written to, and the report file (when it is
    /// there) written over. The station's reports folder is made when missing; the folder of
    /// a `--report` the user gave must exist (a typo is not made into folders).
    func checkReportWritable() throws(FleetError) {
        let reportFile = configuration.reportFile
        if reportFile == "-" { return }  // standard output: checked as every write to it is
        let path = reportFile ?? joinPath(configuration.reportsDirectory, "preflight.json")
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        if reportFile != nil {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw .reportDirectoryMissing(path: path, directory: directory)
            }
        }
        // Made folder by folder with mkdir(2), so the refusal names the system's code (EACCES,
        // EROFS, ...), the same in every language, not Foundation's English sentence.
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw .reportNotWritable(path: path, detail: systemErrorName(errno))
            }
        }
        var isDirectory: ObjCBool = false
        if reportFile != nil, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw .reportNotWritable(path: path, detail: systemErrorName(EISDIR)) }
            if access(path, W_OK) != 0 { throw .reportNotWritable(path: path, detail: systemErrorName(errno)) }
        }
        let probe = directory + "/.grokctl-preflight-\(getpid())"
        let descriptor = open(probe, O_CREAT | O_EXCL | O_WRONLY, 0o600)
        guard descriptor >= 0 else { throw .reportNotWritable(path: path, detail: systemErrorName(errno)) }
        close(descriptor)
        unlink(probe)
    }

    /// The profile's firmware channel, refreshed through TUF from the repository, its
    /// listings and region catalogue read and the images the profile targets downloaded and
    /// verified before any device starts (so the devices never wait on the network). `nil`
    /// when the profile has no firmware section.
    func openFirmware() async throws(FleetError) -> FleetFirmware? {
        guard let policy = profile.firmware else { return nil }
        guard let repository = configuration.repository else {
            throw .noRepository(profile: profile.file, channel: policy.channel)
        }
        // A dry run changes nothing: it reads the listings and fetches no image.
        return try await FleetFirmware.load(FirmwareChannel(repository: repository, name: policy.channel),
                                            prefetch: configuration.dryRun ? nil : policy)
    }

    /// The profile's policy for this run; a rollout's is given its stage in `ledger` (a dry
    /// run's only reads it). Without a ledger yet (a dry run before the first run), the
    /// profile's percentage and no halt.
    func policy(ledger: (any LedgerStore)?, readOnly: Bool) throws -> PolicyDelegate {
        let mode = configuration.mode
        guard mode == .rollout, let rollout = profile.rollout, let ledger else { return PolicyDelegate(profile: profile, mode: mode) }
        // Only a station's spool keeps no stages, and a rollout never spools (its halt rule
        // needs the fleet): the same refusal as an unreachable shared ledger.
        guard let stages = ledger as? any RolloutStageStore else {
            throw FleetError.ledgerOfflineRollout(database: ledger.location, detail: "no_stages")
        }
        let tracker = RolloutStageTracker(store: stages, rollout: rollout, release: profile.firmware.map { "\($0.target)" },
                                          station: runOptions.station, operatorName: runOptions.operatorName,
                                          runKey: runOptions.runID, readOnly: readOnly)
        return PolicyDelegate(profile: profile, mode: mode, stage: tracker)
    }
}
