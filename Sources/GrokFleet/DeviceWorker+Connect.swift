import GrokBasics
import Foundation
import GrokAudio
import GrokFirmware
import GrokLedger
import GrokLink
import GrokProtocol
import UGrokIt

// Reaching the unit: the port and its lock, the link, identify (and the serial's locks,
// the ledger's history), and the reconnect after an update.
extension DeviceWorker {
    func readerFailure(_ step: FleetStep, _ error: ReaderError) -> Result {
        .failing(.failed, .reader(device: device.name, step: step.rawValue, cause: ErrorCause(error)))
    }


    func connect() throws(Stop) -> Result {
        guard delegate.requestMicrophonePermission(context) else {
            return .failing(.refused, .portUnavailable(device: device.name, cause: ErrorCause(code: "fleet_port_not_allowed")))
        }
        if session == nil {
            // Lock before you look: the port is this run's before anything is read from it.
            if portLock == nil, let key = device.portKey {
                do {
                    guard let held = try DeviceLock.acquire(directory: runner.options.lockDirectory, port: key) else {
                        let error = FleetError.portLocked(
                            device: device.name,
                            lockFile: DeviceLock.path(directory: runner.options.lockDirectory, fileName: DeviceLock.portLockName(key)))
                        lockedOut = error
                        return .failing(.refused, error)
                    }
                    portLock = held
                } catch {
                    return .failing(.failed, error)
                }
            }
            do {
                // Opening (a FIFO waits for its peer) and every transfer are bounded.
                let open = device.openPort
                session = try ReaderSession(port: try bound.guarding(port: device.name) { try open() }, options: runner.readerOptions)
                session?.driver.bound = bound
            } catch {
                return .failing(.failed, .portUnavailable(device: device.name, error: error))
            }
        }
        do {
            let connected: ReaderInfo
            if let session, linkSetting == nil {
                // The first connection of the run: at the setting stored for this Grokker or
                // its card's model, AutoConfig where none is known or the stored one fails.
                let setup = linkSetup()
                let outcome = try setup.connect(session, now: runner.options.clock)
                linkSetting = outcome
                learnedLinkSettings += outcome.learned
                connected = outcome.info
            } else {
                connected = try connectWithRetries()
            }
            if let failure = rememberLinkSettings() { return failure }
            context.info = connected
            if first == nil {
                first = connected
                firstRegion = regionText
            }
            return .done("step_connected", "connected in \(FleetError.number((session?.connectMilliseconds ?? 0) / 1000)) s of audio")
        } catch {
            return readerFailure(.connect, error)
        }
    }

    /// Connects again at the run's setting, up to the profile's retries; when they are spent
    /// on a known Grokker, drops one setting slower (recorded as a fallback, ``LinkSetup/fallBack(_:serial:now:)``)
    /// and retries once more.
    func connectWithRetries() throws(ReaderError) -> ReaderInfo {
        guard let session else { throw .lostConnection(port: device.name) }
        var attempt = 0
        var dropped = false
        while true {
            do {
                return try session.connect()
            } catch {
                attempt += 1
                if attempt > profile.retries.connect {
                    guard !dropped, LinkSetup.worthAnotherSetting(error), let serial = info?.serialNumberText,
                          let fall = linkSetup().fallBack(session, serial: serial, now: runner.options.clock) else { throw error }
                    dropped = true
                    attempt = 0
                    learnedLinkSettings.append(fall)
                }
                try? session.rest(forAtMost: 0.5)
            }
        }
    }

    /// How this unit's link is set up: what the station's file and the ledger remember.
    func linkSetup() -> LinkSetup {
        var book = runner.options.linkSettings?.read() ?? LinkSettingBook()
        if let store = recording?.store, let shared = try? store.linkSettings() {
            for record in shared { book.add(record) }
        }
        return LinkSetup(book: book, cardModel: device.cardModel, station: runner.options.station)
    }

    /// Writes what the link learned (AutoConfig's choice, a fallback) to the station's file
    /// and the ledger; nil when written, else the step's failure.
    func rememberLinkSettings() -> Result? {
        guard !learnedLinkSettings.isEmpty else { return nil }
        let records = learnedLinkSettings
        learnedLinkSettings = []
        do {
            try runner.options.linkSettings?.remember(records)
        } catch {
            return .failing(.failed, error)
        }
        guard let store = recording?.store else { return nil }
        for record in records {
            do {
                try store.recordLinkSetting(record)
            } catch {
                return .failing(.failed, .recorderFailed(operation: "record_link_setting", subject: record.subject.key, error: error))
            }
        }
        return nil
    }

    func identify() throws(Stop) -> Result {
        guard let session else { throw Stop() }
        let identified: ReaderInfo
        do {
            identified = try session.identify()
        } catch {
            return readerFailure(.identify, error)
        }
        context.info = identified
        if let refused = lockBySerial(identified.serialNumberText) { return refused }
        // The stations' shared ledger: no other station's run may work on it either.
        do {
            if let holder = try ledger.store.lockFleetWide(serial: identified.serialNumberText, run: ledger.run) {
                let error = FleetError.deviceLocked(device: device.name, serial: identified.serialNumberText,
                                                    lockFile: "station \(holder.station), run \(holder.runKey)")
                lockedOut = error
                return .failing(.refused, error)
            }
        } catch {
            return .failing(.failed, .recorderFailed(operation: "lock_device", subject: identified.serialNumberText, error: error))
        }
        // A unit left in its loader by an interrupted update (GetVersion's software type 1)
        // has no application to go back to: the firmware step repairs it first (``DeviceWorkflow``).
        inLoader = session.version?.software == .loader
        do {
            try ledger.store.upsertDevice(sighting(provisioning: nil))
            history = try Self.completedSteps(serial: identified.serialNumberText, in: ledger.store)
            // Asked once the Grokker is locked and before this run records any intent for it,
            // so every open intent found belongs to a run that is no longer working on it.
            if mode != .verify { openIntents = try ledger.store.intents(serial: identified.serialNumberText, openOnly: true) }
        } catch {
            return .failing(.failed, .recorderFailed(operation: "read_history", subject: identified.serialNumberText, error: error))
        }
        if let failure = resolveUpdateShownByTheUnit(identified) { return failure }
        return .done("step_identified", identified.description)
    }

    /// Takes this station's lock on the Grokker `serial` (a run and a plan alike): nil when
    /// taken, else the step's end (another run holds it: refused, and nothing of this run is
    /// recorded for it).
    func lockBySerial(_ serial: String) -> Result? {
        do {
            guard let held = try DeviceLock.acquire(directory: runner.options.lockDirectory, serial: serial) else {
                let path = (runner.options.lockDirectory as NSString).appendingPathComponent(serial + ".lock")
                let error = FleetError.deviceLocked(device: device.name, serial: serial, lockFile: path)
                lockedOut = error
                return .failing(.refused, error)
            }
            lock = held
            return nil
        } catch {
            return .failing(.failed, error)
        }
    }

    /// An update an ended run was making, that the unit now runs (the run was stopped after
    /// the new image was started, before its step was recorded): resolved as that run's now,
    /// at identification, not at the firmware step. The smoke test before the firmware step
    /// is decided on history, and must see the update as a change that run made, not as
    /// firmware changed elsewhere (which would test the unit again before the final test).
    /// Region and provisioning are resolved at their own steps, which come before it.
    func resolveUpdateShownByTheUnit(_ info: ReaderInfo) -> Result? {
        let running = "\(info.firmwareVersion)"
        guard !inLoader, let latest = openIntents.last(where: { $0.step == FleetStep.firmware.rawValue }), latest.target == running else { return nil }
        let now = runner.options.clock()
        let found = StepOutcome(step: .firmware, result: .skipped, code: "step_already_satisfied",
                                detail: "runs \(running), the update an ended run was making",
                                firmwareBefore: running, firmwareAfter: running, regionBefore: regionText, regionAfter: regionText,
                                started: now, duration: 0)
        do {
            try resolveOpenIntents(of: .firmware, outcome: found)
            return nil
        } catch {
            return .failing(.failed, .recorderFailed(operation: "resolve_intent", subject: "\(serial), firmware", error: error))
        }
    }


    func reconnect() throws(Stop) -> Result {
        guard let session else { throw Stop() }
        guard let info else { throw Stop() }
        if let known = Self.result(of: decider.reconnect(facts(info))) { return known }
        guard let target = firmwareTarget else { return .skipped("step_not_needed") }
        session.disconnect()
        do {
            try? session.rest(forAtMost: 0.2)
            _ = try connectWithRetries()
            context.info = try session.identify()
        } catch {
            return readerFailure(.reconnect, error)
        }
        if let failure = rememberLinkSettings() { return failure }
        inLoader = session.version?.software == .loader
        guard let info = self.info, info.firmwareVersion == target, !inLoader else {
            return .failing(.failed, .firmwareNotRunning(device: device.name, expected: "\(target)", found: firmwareText ?? "?"))
        }
        return .done("step_reconnected", "runs \(info.firmwareVersion)")
    }
}
