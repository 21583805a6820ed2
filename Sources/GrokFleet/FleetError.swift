import GrokBasics

/// Everything that can go wrong in a fleet run: a profile that cannot be used, a device
/// that is locked, refused or failed a step, a policy that held a device back, the ledger.
///
/// `code` is stable (`fleet_*`) for `--json` output and the message catalog
/// (`error.<code>`); `arguments` are the values a localized message fills in, in order;
/// `description` is the English text for logs, naming the file, key or device and what to do.
public enum FleetError: Error, Sendable, Hashable, CodedError {
    // MARK: Profiles

    /// The profile file cannot be read; `detail` is a code (`no_such_file`,
    /// `permission_denied`, `read_error`, `too_large`), shown through `fleet.profile_unreadable.<code>`.
    case profileUnreadable(file: String, detail: String)
    /// The profile is not strict JSON: a syntax error, a key given twice in one object, a
    /// trailing comma; `line` and `column` (from 1, columns in characters) are where the
    /// parser stopped, `detail` a code under `tuf.detail` (the strict parser's).
    case profileNotJSON(file: String, line: Int, column: Int, detail: ErrorDetail)
    /// The value at `keyPath` is `found` (JSON as written: `"mars"`, `3`, `[…]`), but
    /// `expected` is what the key takes (a ``ProfileRule``: a code under `profile.rule`).
    case profileInvalid(file: String, keyPath: String, expected: ErrorDetail, found: String)
    /// `keyPath` is required and missing; `expected` says what it takes (a ``ProfileRule``).
    case profileMissingKey(file: String, keyPath: String, expected: ErrorDetail)
    /// `keyPath` is not a key the schema knows (a typo?); `known` lists the keys allowed there.
    case profileUnknownKey(file: String, keyPath: String, known: [String])

    // MARK: Devices and steps

    /// The device's audio port could not be opened; `cause` is the port's error (its code
    /// and arguments: `audio_*`, `emulator_*`, or `fleet_port_not_allowed` / `fleet_port_not_connected`).
    case portUnavailable(device: String, cause: ErrorCause)
    /// Another run holds the lock of the Grokker with this serial number.
    case deviceLocked(device: String, serial: String, lockFile: String)
    /// Another run holds the device's port (the sound card, the emulated unit's directory),
    /// so this run did not open it: nothing was read from or sent to the Grokker.
    case portLocked(device: String, lockFile: String)
    /// The lock directory or a lock file could not be used; `detail` is the system's error
    /// name (`EACCES`, `ENOTDIR`), the same in every language.
    case lockFailed(path: String, detail: String)
    /// The restore record of `mixer`'s levels could not be written at `path` (`detail`: the
    /// system's error name), so no level was changed.
    case levelsNotSaved(mixer: String, path: String, detail: String)
    /// No USB sound card is plugged into port `path` (`usb:PATH`); `plugged` lists the
    /// `usb:` names that have one.
    case usbCardNotFound(path: String, plugged: [String])
    /// The reader failed or refused during `step`; `cause` is the reader's error.
    case reader(device: String, step: String, cause: ErrorCause)
    /// The region chosen is not one the profile allows.
    case regionNotAllowed(device: String, region: String, allowed: [String])
    /// No region was chosen (the delegate cancelled, or the policy cannot pick one).
    case regionNotChosen(device: String)
    /// The person asked answered "no" to the region's confirmation: declined, nothing set.
    case regionDeclined(device: String)
    /// The reader's firmware does not support setting the region.
    case regionUnsupported(device: String, firmware: String)
    /// The target firmware is older than what runs and the profile does not allow downgrades.
    case downgradeNotAllowed(device: String, running: String, target: String)
    /// The target firmware runs already and the profile does not allow re-installing it.
    case sameVersionNotAllowed(device: String, version: String)
    /// The channel lists no firmware `version` that this reader may take.
    case firmwareNotAvailable(device: String, channel: String, version: String)
    /// The firmware cache could not give the channel or image; `cause` is the cache's error.
    case firmwareCache(channel: String, cause: ErrorCause)
    /// The profile updates firmware from `channel`, but no repository was named (no
    /// `--repository`, no `$GROKCTL_REPOSITORY`, no `repository` in the station settings).
    case noRepository(profile: String, channel: String)
    /// The firmware update failed: `code` is the updater's result (`firmware_update_<vendor
    /// name>`, shown through `fleet.update_result.<code>`); `detail` is the updater's English
    /// detail, for logs only (it is not one of the message's arguments).
    case firmwareUpdateFailed(device: String, code: String, detail: String)
    /// After the update and a reconnect the reader runs `found`, not `expected`.
    case firmwareNotRunning(device: String, expected: String, found: String)
    /// The smoke test (function test) did not pass: `measurement` holds the reasons (stable
    /// codes: `missing_tags`, `reads_per_second`, `rssi`, `no_reads`, `region_not_set`)
    /// and the figures, which the message shows in the reader's language.
    case smokeTestFailed(device: String, measurement: SmokeTestMeasurement)
    /// Verification found the unit different from the profile: `difference` says how, as data.
    case verifyMismatch(device: String, difference: VerifyDifference)

    // MARK: Policy

    /// Now is outside every maintenance window of the profile (in `timeZone`).
    case outsideMaintenanceWindow(device: String, timeZone: String)
    /// The battery is below the profile's minimum.
    case batteryLow(device: String, percent: Int, minimum: Int)
    /// The staged rollout does not select this serial number (yet). `source` says whose
    /// percentage it was: `ledger` (the rollout stage's) or `profile` (no stage yet);
    /// `profilePercentage` is the profile's when the stage's differs from it.
    case notInRollout(device: String, serial: String, percentage: Double, source: String = "profile", profilePercentage: Double? = nil)
    /// The halt rule stopped rollout `rollout` fleet-wide: `failed` of the `finished` units
    /// in its window failed, above `threshold`; the station `trippedBy` had the most of them
    /// (`stationFailures`).
    case halted(rollout: String, failed: Int, finished: Int, threshold: Double, trippedBy: String, stationFailures: Int)
    /// Someone paused the rollout's stage (`grokctl fleet stage pause`): no unit starts.
    case stagePaused(rollout: String, by: String)
    /// The delegate postponed or cancelled the firmware update; `decision` is a code
    /// (`postponed`, `cancelled`), shown through `fleet.decision.<code>`.
    case updateDeclined(device: String, decision: String)
    /// The run was cancelled before this device finished; re-run to finish it.
    case interrupted(device: String)
    /// The run was stopped during the firmware upload and the unit was left in its loader
    /// (its application erased, the update not finished): the same command run again
    /// installs the update (a unit in its loader takes it whatever its loader's version).
    case updateUnfinished(device: String)
    /// The Grokker was pulled out of its port during `step` at a watching station: the step
    /// ended there; plugged back in (any port), the same session finishes it.
    case unplugged(device: String, step: String)
    /// A watching station's status file is there and is not one (`grokctl station status`).
    case watchStatusUnreadable(path: String)
    /// During `step`, one call on the device's audio port blocked for `seconds` of wall-clock
    /// time with nothing moving (the profile's `timeouts.stall_s`): the reader, or the
    /// program on the other end of its FIFOs, is frozen.
    case readerFrozen(device: String, step: String, seconds: String)
    /// `what` (`step <name>` or `device run`) ran past its wall-clock limit of `seconds`
    /// (the profile's `timeouts.step_s` / `device_run_s`, or derived from its timeouts).
    case timedOut(device: String, step: String, what: String, seconds: String)

    // MARK: The ledger

    /// The run recorder failed while `operation` (a code: `begin_run`, `finish_run`,
    /// `record_step`, `record_intent`, `lock_device`, `read_history`, `record_smoke_test`,
    /// `record_device`, `dry_run`; shown through `fleet.recorder_operation.<code>`) on
    /// `subject` (a device, a serial, a step); `cause` is the ledger's error.
    case recorderFailed(operation: String, subject: String, cause: ErrorCause)
    /// The shared ledger `database` (without its password) cannot be reached and the
    /// profile's `station.offline` is `refuse` (the default): nothing was started.
    case ledgerOffline(database: String, detail: String)
    /// The shared ledger cannot be reached and this is a rollout, which never spools (its
    /// halt rule counts every station's results): nothing was started.
    case ledgerOfflineRollout(database: String, detail: String)

    /// Nothing has been recorded at the ledger `path` yet (no file, or a database without
    /// the ledger's tables): the views have nothing to read.
    case ledgerMissing(path: String)
    /// The ledger `path` has never seen the Grokker `serial`.
    case ledgerNoDevice(serial: String, path: String)
    /// The ledger `ledger` holds no rollout `rollout` (no stage and no unit's result).
    case noSuchRollout(ledger: String, rollout: String)

    // MARK: Preflight (before any unit is touched)

    /// The run's report cannot be written where it goes: nothing was started.
    case reportNotWritable(path: String, detail: String)
    /// The folder `directory` of the report `path` the user gave does not exist (or is not a
    /// folder): nothing was started, and no folder was made.
    case reportDirectoryMissing(path: String, directory: String)
    /// The emulated Grokker's scene lacks reference tags the smoke test requires: nothing was started.
    case sceneLacksReferenceTags(device: String, scene: String, missing: [String])
    /// The run's report could not be written at its end (`detail`: the system's error name);
    /// the run's outcome is in the ledger.
    case reportNotWritten(path: String, detail: String)

    // MARK: Devices named and the bench

    /// A device spec that is not `sim:N`, `sim:A-B`, `alsa:NAME` or `pcm:IN,OUT`.
    case invalidDevice(String)
    /// A device spec without its scheme that names one with it: `hw:1,0` (`alsa:hw:1,0`),
    /// `3` or `sim3` (`sim:3`); `suggestion` is the spec meant.
    case deviceWithoutScheme(spec: String, suggestion: String)
    /// `sim:N` with N outside 0...63.
    case deviceOutOfRange(index: String, spec: String)
    /// The same device named twice (directly or through a range).
    case duplicateDevice(String)
    /// `grokctl emulate` given a sound device (`alsa:`, `usb:`) for one end and a file or
    /// FIFO for the other: both ends are sound devices, or both are files.
    case emulatorEndsMixed(input: String, output: String)
    /// The bench directory exists but cannot be listed.
    case benchUnreadable(path: String, detail: String)
    /// The bench path names something that is not a directory.
    case benchNotDirectory(path: String)
    /// The bench's ports.json cannot be read or is not a ports file (`detail`: a code under
    /// `fleet.bench_ports`).
    case benchPortsUnreadable(path: String, detail: String)
    /// Plugging into a port of the bench that holds a Grokker (`unit`).
    case benchPortOccupied(port: String, unit: String)
    /// Plugging a Grokker that sits in another port of the bench.
    case benchUnitPluggedElsewhere(unit: String, port: String)
    /// A run without devices named found no emulated Grokker on the bench.
    case noDevices(bench: String)
    /// Another process (`pid`, running `command`) holds the device's port lock and kept it
    /// past the wait: nothing was sent to the Grokker.
    case deviceBusy(device: String, pid: String, command: String, lockFile: String)
    /// A station settings file (station.json) exists but cannot be read (`detail`: a code
    /// under `fleet.profile_unreadable`).
    case stationSettingsUnreadable(file: String, detail: String)
    /// A station settings file is not strict JSON at `line`, `column`.
    case stationSettingsNotJSON(file: String, line: Int, column: Int, detail: ErrorDetail)
    /// A station settings file holds something other than one JSON object.
    case stationSettingsNotObject(file: String)
    /// A station settings file names a setting there is not.
    case stationSettingsUnknownKey(file: String, key: String, known: [String])
    /// A station setting's value is not of its form (`rule`: a code under `station.rule`).
    case stationSettingsInvalid(file: String, key: String, found: String, rule: String)
    /// `grokctl station init` found the file there and was not told `--force`.
    case stationSettingsExists(file: String)
    /// `grokctl station init` could not write the file (`detail`: the system error's name).
    case stationSettingsNotWritten(file: String, detail: String)
    /// The station's link settings (`link-settings.json` in its state directory) could not be
    /// written (`detail`: the system error's name): the Grokker answered, but what AutoConfig
    /// learned is not remembered.
    case linkSettingsNotWritten(file: String, detail: String)

    /// The stable code.
    public var code: String {
        switch self {
        case .profileUnreadable: "fleet_profile_unreadable"
        case .profileNotJSON: "fleet_profile_not_json"
        case .profileInvalid: "fleet_profile_invalid"
        case .profileMissingKey: "fleet_profile_missing_key"
        case .profileUnknownKey: "fleet_profile_unknown_key"
        case .portUnavailable: "fleet_port_unavailable"
        case .deviceLocked: "fleet_device_locked"
        case .portLocked: "fleet_port_locked"
        case .lockFailed: "fleet_lock_failed"
        case .levelsNotSaved: "fleet_levels_not_saved"
        case .usbCardNotFound: "fleet_usb_card_not_found"
        case .reader: "fleet_reader_failed"
        case .regionNotAllowed: "fleet_region_not_allowed"
        case .regionNotChosen: "fleet_region_not_chosen"
        case .regionDeclined: "fleet_region_declined"
        case .regionUnsupported: "fleet_region_unsupported"
        case .downgradeNotAllowed: "fleet_downgrade_not_allowed"
        case .sameVersionNotAllowed: "fleet_same_version_not_allowed"
        case .firmwareNotAvailable: "fleet_firmware_not_available"
        case .firmwareCache: "fleet_firmware_cache"
        case .noRepository: "fleet_no_repository"
        case .firmwareUpdateFailed: "fleet_firmware_update_failed"
        case .firmwareNotRunning: "fleet_firmware_not_running"
        case .smokeTestFailed: "fleet_smoke_test_failed"
        case .verifyMismatch: "fleet_verify_mismatch"
        case .outsideMaintenanceWindow: "fleet_outside_window"
        case .batteryLow: "fleet_battery_low"
        case .notInRollout: "fleet_not_in_rollout"
        case .halted: "fleet_halted"
        case .stagePaused: "fleet_stage_paused"
        case .updateDeclined: "fleet_update_declined"
        case .interrupted: "fleet_interrupted"
        case .updateUnfinished: "fleet_update_unfinished"
        case .unplugged: "fleet_unplugged"
        case .watchStatusUnreadable: "fleet_watch_status_unreadable"
        case .readerFrozen: "fleet_reader_frozen"
        case .timedOut: "fleet_timed_out"
        case .recorderFailed: "fleet_recorder_failed"
        case .ledgerOffline: "fleet_ledger_offline"
        case .ledgerOfflineRollout: "fleet_ledger_offline_rollout"
        case .ledgerMissing: "ledger_missing"
        case .ledgerNoDevice: "ledger_no_device"
        case .noSuchRollout: "fleet_no_such_rollout"
        case .reportNotWritable: "fleet_report_not_writable"
        case .reportDirectoryMissing: "fleet_report_directory_missing"
        case .sceneLacksReferenceTags: "fleet_scene_lacks_reference_tags"
        case .reportNotWritten: "fleet_report_not_written"
        case .invalidDevice: "usage_invalid_device"
        case .deviceWithoutScheme: "usage_device_without_scheme"
        case .deviceOutOfRange: "usage_device_out_of_range"
        case .duplicateDevice: "usage_duplicate_device"
        case .emulatorEndsMixed: "usage_emulate_ends_mixed"
        case .benchUnreadable: "bench_unreadable"
        case .benchNotDirectory: "bench_not_directory"
        case .benchPortsUnreadable: "bench_ports_unreadable"
        case .benchPortOccupied: "bench_port_occupied"
        case .benchUnitPluggedElsewhere: "bench_unit_plugged_elsewhere"
        case .noDevices: "fleet_no_devices"
        case .deviceBusy: "device_busy"
        case .stationSettingsUnreadable: "station_settings_unreadable"
        case .stationSettingsNotJSON: "station_settings_not_json"
        case .stationSettingsNotObject: "station_settings_not_object"
        case .stationSettingsUnknownKey: "station_settings_unknown_key"
        case .stationSettingsInvalid: "station_settings_invalid"
        case .stationSettingsExists: "station_settings_exists"
        case .stationSettingsNotWritten: "station_settings_not_written"
        case .linkSettingsNotWritten: "link_settings_not_written"
        }
    }

    /// The values the localized message fills in, in order.
    public var arguments: [String] {
        switch self {
        case .profileUnreadable(let file, let detail): [file, detail]
        case .profileNotJSON(let file, let line, let column, let detail): [file, String(line), String(column)] + detail.flattened
        case .profileInvalid(let file, let keyPath, let expected, let found): [file, keyPath, found] + expected.flattened
        case .profileMissingKey(let file, let keyPath, let expected): [file, keyPath] + expected.flattened
        case .profileUnknownKey(let file, let keyPath, let known): [file, keyPath, known.joined(separator: ", ")]
        case .portUnavailable(let device, let cause): [device, cause.code] + cause.arguments
        case .deviceLocked(let device, let serial, let lockFile): [device, serial, lockFile]
        case .portLocked(let device, let lockFile): [device, lockFile]
        case .lockFailed(let path, let detail): [path, detail]
        case .levelsNotSaved(let mixer, let path, let detail): [mixer, path, detail]
        case .usbCardNotFound(let path, let plugged): [path, plugged.isEmpty ? "-" : plugged.joined(separator: ", ")]
        case .reader(let device, let step, let cause): [device, step, cause.code] + cause.arguments
        case .regionNotAllowed(let device, let region, let allowed): [device, region, allowed.joined(separator: ", ")]
        case .regionNotChosen(let device), .regionDeclined(let device), .interrupted(let device), .updateUnfinished(let device): [device]
        case .readerFrozen(let device, let step, let seconds): [device, step, seconds]
        case .unplugged(let device, let step): [device, step]
        case .watchStatusUnreadable(let path): [path]
        case .timedOut(let device, let step, let what, let seconds): [device, step, what, seconds]
        case .regionUnsupported(let device, let firmware): [device, firmware]
        case .downgradeNotAllowed(let device, let running, let target): [device, running, target]
        case .sameVersionNotAllowed(let device, let version): [device, version]
        case .firmwareNotAvailable(let device, let channel, let version): [device, channel, version]
        case .firmwareCache(let channel, let cause): [channel, cause.code] + cause.arguments
        case .noRepository(let profile, let channel): [profile, channel]
        case .firmwareUpdateFailed(let device, let code, _): [device, code]
        case .firmwareNotRunning(let device, let expected, let found): [device, expected, found]
        case .smokeTestFailed(let device, let measurement): [device] + measurement.messageArguments
        case .verifyMismatch(let device, let difference): [device] + difference.arguments
        case .outsideMaintenanceWindow(let device, let timeZone): [device, timeZone]
        case .batteryLow(let device, let percent, let minimum): [device, String(percent), String(minimum)]
        case .notInRollout(let device, let serial, let percentage, let source, let profilePercentage):
            [device, serial, Self.number(percentage), source, profilePercentage.map(Self.number) ?? ""]
        case .halted(let rollout, let failed, let finished, let threshold, let station, let stationFailures):
            [rollout, String(failed), String(finished), Self.number((threshold * 100_000).rounded() / 1000), station, String(stationFailures)]
        case .stagePaused(let rollout, let by): [rollout, by]
        case .updateDeclined(let device, let decision): [device, decision]
        case .recorderFailed(let operation, let subject, let cause): [operation, subject, cause.code] + cause.arguments
        case .ledgerOffline(let database, let detail), .ledgerOfflineRollout(let database, let detail): [database, detail]
        case .ledgerMissing(let path): [path]
        case .ledgerNoDevice(let serial, let path): [serial, path]
        case .noSuchRollout(let ledger, let rollout): [ledger, rollout]
        case .reportNotWritable(let path, let detail): [path, detail]
        case .reportDirectoryMissing(let path, let directory): [path, directory]
        case .sceneLacksReferenceTags(let device, let scene, let missing): [device, scene, missing.joined(separator: " ")]
        case .reportNotWritten(let path, let detail), .benchUnreadable(let path, let detail): [path, detail]
        case .invalidDevice(let spec), .duplicateDevice(let spec): [spec]
        case .deviceWithoutScheme(let spec, let suggestion): [spec, suggestion]
        case .deviceOutOfRange(let index, let spec): [index, spec]
        case .emulatorEndsMixed(let input, let output): [input, output]
        case .benchNotDirectory(let path): [path]
        case .benchPortsUnreadable(let path, let detail): [path, detail]
        case .benchPortOccupied(let port, let unit): [port, unit]
        case .benchUnitPluggedElsewhere(let unit, let port): [unit, port]
        case .noDevices(let bench): [bench]
        case .deviceBusy(let device, let pid, let command, let lockFile): [device, pid, command, lockFile]
        case .stationSettingsUnreadable(let file, let detail), .stationSettingsNotWritten(let file, let detail),
             .linkSettingsNotWritten(let file, let detail): [file, detail]
        case .stationSettingsNotJSON(let file, let line, let column, let detail): [file, String(line), String(column)] + detail.flattened
        case .stationSettingsNotObject(let file), .stationSettingsExists(let file): [file]
        case .stationSettingsUnknownKey(let file, let key, let known): [file, key, known.joined(separator: ", ")]
        case .stationSettingsInvalid(let file, let key, let found, let rule): [file, key, found, rule]
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }

    // MARK: Typed causes

    /// `error` as a cause kept inside a ``FleetError``: its code and arguments when it is a
    /// ``CodedError`` (every library's error is), else `fleet_untyped_cause` with its text.
    public static func cause(_ error: any Error) -> ErrorCause {
        if let coded = error as? any CodedError { return ErrorCause(coded) }
        return ErrorCause(code: "fleet_untyped_cause", arguments: [String(describing: error)])
    }

    /// The port failure `error` (from opening the port) of `device`.
    public static func portUnavailable(device: String, error: any Error) -> FleetError {
        .portUnavailable(device: device, cause: cause(error))
    }

    /// The recorder failure `error` while `operation` on `subject`.
    public static func recorderFailed(operation: String, subject: String, error: any Error) -> FleetError {
        .recorderFailed(operation: operation, subject: subject, cause: cause(error))
    }

    /// A number without a needless fraction: `25`, `12.5`.
    static func number(_ value: Double) -> String { NumberText.plain(value) }
}
