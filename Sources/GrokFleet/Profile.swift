import Foundation
import GrokProtocol
import GrokTUF
import UGrokIt

/// A fleet profile (`profiles/*.json`): what a run does to every Grokker and the policy
/// that decides when. The schema is in docs/profiles.md; ``Profile/load(path:)`` refuses a
/// bad file with the file, the key path, what was expected and what was found.
public struct Profile: Sendable, Equatable {
    /// The format this build reads.
    public static let currentFormat = 1
    /// Profiles larger than this are refused (bounded input).
    public static let maxFileBytes = 1 << 20
    /// The languages a profile may name.
    public static let locales = ["en", "es", "fr", "de"]

    /// The file it was read from (for errors and the ledger).
    public var file: String
    /// A short name (recorded with each run).
    public var name: String
    /// Free text for people.
    public var description: String?
    /// The language for what people read (`en`, `es`, `fr`, `de`); `nil`: not set, the
    /// environment's. grokctl ranks it between `--lang` (above) and the environment.
    public var locale: String?
    /// The region to set and the regions allowed; `nil`: regions are left alone.
    public var region: RegionPolicy?
    /// The firmware to run; `nil`: firmware is left alone.
    public var firmware: FirmwarePolicy?
    /// No firmware update starts below this battery charge (unless on external power).
    public var minimumBatteryPercent: Int
    /// When firmware may be flashed; `nil`: at any time.
    public var maintenanceWindows: MaintenanceWindows?
    /// The staged rollout and its halt rule (rollout mode only); `nil`: every device.
    public var rollout: RolloutPolicy?
    /// Factory provisioning to write; `nil`: nothing is written.
    public var provisioning: ProvisioningPolicy?
    /// How many times each step is retried after a failure.
    public var retries: Retries
    /// Link timeouts, seconds of audio.
    public var timeouts: Timeouts
    /// The inventory that proves a Grokker reads tags; `nil`: no smoke test.
    public var smokeTest: SmokeTestPolicy?
    /// The station this profile runs on: its name, its ledger, what to do when the shared
    /// ledger cannot be reached; `nil`: the defaults (docs/profiles.md, `station`).
    public var station: StationConfig? = nil
    /// What each unit's speaker plays to tell the technician where it stands (`cues`);
    /// ``ReaderCues/standard`` when the profile does not say.
    public var cues: ReaderCues = .standard

    /// Creates a profile (tests and tools; files go through ``load(path:)``).
    public init(file: String = "<memory>", name: String, description: String? = nil, locale: String? = nil,
                region: RegionPolicy? = nil, firmware: FirmwarePolicy? = nil, minimumBatteryPercent: Int = 20,
                maintenanceWindows: MaintenanceWindows? = nil, rollout: RolloutPolicy? = nil,
                provisioning: ProvisioningPolicy? = nil, retries: Retries = Retries(), timeouts: Timeouts = Timeouts(),
                smokeTest: SmokeTestPolicy? = nil) {
        self.file = file
        self.name = name
        self.description = description
        self.locale = locale
        self.region = region
        self.firmware = firmware
        self.minimumBatteryPercent = minimumBatteryPercent
        self.maintenanceWindows = maintenanceWindows
        self.rollout = rollout
        self.provisioning = provisioning
        self.retries = retries
        self.timeouts = timeouts
        self.smokeTest = smokeTest
    }

    // MARK: Sections

    /// Regions: the one to set, and those allowed (a device already on an allowed region
    /// is left on it when no region is to be set).
    public struct RegionPolicy: Sendable, Equatable {
        /// The region to set, if any.
        public var set: VendorRegion?
        /// The regions allowed (all 22 when the profile lists none).
        public var allowed: [VendorRegion]
        /// Which values SetRegion carries (`catalogue`: `ours`, the default, or `vendor`).
        public var table: RegionTableChoice

        public init(set: VendorRegion?, allowed: [VendorRegion] = RegionCatalog.all, table: RegionTableChoice = .ours) {
            self.set = set
            self.allowed = allowed
            self.table = table
        }

        /// Whether `region` is allowed.
        public func allows(_ region: RegionSetting) -> Bool { allowed.contains { $0.number == region.number } }
    }

    /// The firmware target.
    public enum FirmwareTarget: Sendable, Equatable, CustomStringConvertible {
        /// The newest update the channel offers this reader.
        case latest
        /// Exactly this version.
        case version(FirmwareVersion)

        public var description: String {
            switch self {
            case .latest: "latest"
            case .version(let version): "\(version)"
            }
        }
    }

    /// Firmware: channel, target, and what may be installed.
    public struct FirmwarePolicy: Sendable, Equatable {
        public var channel: String
        public var target: FirmwareTarget
        public var allowDowngrade: Bool
        public var allowSameVersion: Bool

        public init(channel: String, target: FirmwareTarget = .latest, allowDowngrade: Bool = false, allowSameVersion: Bool = false) {
            self.channel = channel
            self.target = target
            self.allowDowngrade = allowDowngrade
            self.allowSameVersion = allowSameVersion
        }
    }

    /// Factory provisioning: what to write when it differs.
    public struct ProvisioningPolicy: Sendable, Equatable {
        /// Register the serial number the unit reports (it then counts as provisioned).
        public var registerSerial: Bool
        public var antennaType: UInt8?
        public var hardwareRevision: UInt8?
        public var status: ProvisioningStatus?

        public init(registerSerial: Bool = false, antennaType: UInt8? = nil, hardwareRevision: UInt8? = nil,
                    status: ProvisioningStatus? = nil) {
            self.registerSerial = registerSerial
            self.antennaType = antennaType
            self.hardwareRevision = hardwareRevision
            self.status = status
        }
    }

    /// Retries per step (0 = one attempt).
    public struct Retries: Sendable, Equatable {
        public var connect = 2
        public var region = 1
        public var firmware = 1
        public var smokeTest = 1

        public init(connect: Int = 2, region: Int = 1, firmware: Int = 1, smokeTest: Int = 1) {
            self.connect = connect
            self.region = region
            self.firmware = firmware
            self.smokeTest = smokeTest
        }
    }

    /// Timeouts: the link's, in seconds of audio, and the wall-clock bounds on the I/O
    /// around it (docs/profiles.md, "Wall-clock bounds").
    public struct Timeouts: Sendable, Equatable {
        public var handshake = 3.0
        public var command = 5.0
        public var reconnect = 20.0
        /// `stall_s`: the longest one audio transfer may block on the wall clock (`nil`: derived).
        public var stall: Double?
        /// `step_s`: each step's wall-clock limit (`nil`: derived; the firmware step gets four times it).
        public var step: Double?
        /// `device_run_s`: the wall-clock limit of one Grokker's whole run (`nil`: derived).
        public var deviceRun: Double?

        public init(handshake: Double = 3, command: Double = 5, reconnect: Double = 20,
                    stall: Double? = nil, step: Double? = nil, deviceRun: Double? = nil) {
            self.handshake = handshake
            self.command = command
            self.reconnect = reconnect
            self.stall = stall
            self.step = step
            self.deviceRun = deviceRun
        }

        /// How many times its step's limit the firmware step may take (an update at the
        /// slowest modem setting is minutes of real-time audio: docs/benchmarks.md).
        public static let firmwareStepFactor = 4.0

        /// Seconds one blocking audio call may take on the wall clock: `stall_s`, else the
        /// handshake and command timeouts together (a transfer carries milliseconds of audio;
        /// nothing moving for as long as a handshake and a command may take means a frozen
        /// reader).
        public var stallBound: Double { stall ?? handshake + command }

        /// Seconds a step other than firmware may take on the wall clock: `step_s`, else 60
        /// command timeouts (a step is a few dozen commands and handshakes; 300 s by default).
        public var stepBound: Double { step ?? 60 * command }

        /// The wall-clock limit of `step`: ``stepBound``, four times it for the firmware step.
        public func bound(of step: FleetStep) -> Double {
            step == .firmware ? Self.firmwareStepFactor * stepBound : stepBound
        }

        /// Seconds one Grokker's whole run may take on the wall clock: `device_run_s`, else
        /// the sum of its steps' limits (the eight steps and the record).
        public var deviceRunBound: Double {
            deviceRun ?? FleetStep.allCases.reduce(0) { $0 + bound(of: $1) }
        }
    }

    /// The smoke test: an inventory of a few seconds that must find the reference tags
    /// fast and strong enough.
    public struct SmokeTestPolicy: Sendable, Equatable {
        /// EPCs that must be found (empty: any tags).
        public var referenceTags: [UgiEpc]
        public var inventoryType: UgiInventoryType
        /// Seconds of audio the inventory runs.
        public var duration: Double
        public var minReadsPerSecond: Double
        /// Each reference tag's strongest read (or, with none listed, the strongest read)
        /// must reach this, dBm.
        public var minRSSI: Double?

        public init(referenceTags: [UgiEpc] = [], inventoryType: UgiInventoryType = .inventoryShortRange, duration: Double = 2,
                    minReadsPerSecond: Double = 1, minRSSI: Double? = nil) {
            self.referenceTags = referenceTags
            self.inventoryType = inventoryType
            self.duration = duration
            self.minReadsPerSecond = minReadsPerSecond
            self.minRSSI = minRSSI
        }
    }

    /// The station's configuration (the profile's `station` section): what `--station` and
    /// `--ledger` (or `GROKCTL_LEDGER`) give when they are not given.
    public struct StationConfig: Sendable, Equatable {
        /// What a run does when the shared ledger cannot be reached (docs/ledger.md, "Offline
        /// stations and the spool").
        public enum Offline: String, Sendable, CaseIterable {
            /// Stop before any Grokker is touched (the default).
            case refuse
            /// Record into the station's spool and send it when the database is back (not a rollout).
            case spool
        }

        /// What a watching station does with a Grokker already as the profile wants
        /// (`already_done`; docs/fleet.md, "Watching the bench").
        public enum AlreadyDone: String, Sendable, CaseIterable {
            /// Greet it and change nothing (the default).
            case leave
            /// Run `verify`'s checks on it: identify, provisioning, region, firmware, smoke test.
            case verify
        }

        /// The station's name (recorded with each run); `nil`: the host name.
        public var name: String?
        /// The ledger: a `postgresql://` database shared by the stations, or an absolute SQLite
        /// file path; `nil`: the station's default file.
        public var ledger: String?
        public var offline: Offline
        /// How long a run waits for a shared ledger that stopped answering (a restart, a
        /// network cut) before it counts as lost: the run then fails, or spools with
        /// `offline: spool`. At opening, a server still starting is waited for up to 5 s of it.
        public var ledgerReconnectSeconds: Double
        public var alreadyDone: AlreadyDone

        /// The wait when the profile does not say: 30 s.
        public static let defaultLedgerReconnectSeconds = 30.0
        /// The waits accepted: 1 s to 10 min.
        public static let ledgerReconnectRange = 1.0...600.0

        public init(name: String? = nil, ledger: String? = nil, offline: Offline = .refuse,
                    ledgerReconnectSeconds: Double = defaultLedgerReconnectSeconds, alreadyDone: AlreadyDone = .leave) {
            self.name = name
            self.ledger = ledger
            self.offline = offline
            self.ledgerReconnectSeconds = ledgerReconnectSeconds
            self.alreadyDone = alreadyDone
        }

        /// The longest station name accepted.
        public static let maxNameLength = 64
    }

    // MARK: Reading

    static let topKeys = ["format", "name", "description", "locale", "region", "firmware", "minimum_battery_percent",
                          "maintenance_windows", "rollout", "provisioning", "retries", "timeouts", "smoke_test", "station", "cues"]

    /// Reads and checks the profile at `path`.
    public static func load(path: String) throws(FleetError) -> Profile {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw .profileUnreadable(file: path, detail: exists ? "permission_denied" : "no_such_file")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileBytes + 1) ?? Data()
        } catch {
            throw .profileUnreadable(file: path, detail: "read_error")
        }
        guard data.count <= maxFileBytes else {
            throw .profileUnreadable(file: path, detail: "too_large")
        }
        return try parse(Array(data), file: path)
    }

    /// Checks a profile's bytes; `file` names it in errors. The JSON is read strictly (the
    /// parser TUF metadata is read with): a syntax error, a key given twice in one object or
    /// a trailing comma is refused with its line and column.
    public static func parse(_ bytes: [UInt8], file: String) throws(FleetError) -> Profile {
        let root: JSONValue
        do {
            root = JSONValue(try JSONParser.parse(bytes, limits: JSONLimits(maxBytes: maxFileBytes)))
        } catch {
            guard case .json(let detail, let offset) = error else { preconditionFailure("the JSON parser throws only .json: \(error)") }
            let (line, column) = JSONParser.lineAndColumn(of: offset, in: bytes)
            throw .profileNotJSON(file: file, line: line, column: column, detail: detail)
        }
        let top = try ProfileObject(root, file: file, path: "", allowed: topKeys)
        let format = try top.required("format", ProfileRule.format(currentFormat)) { k throws(FleetError) in try top.integer(k, in: 1...Int.max >> 11) }
        guard format == currentFormat else {
            throw .profileInvalid(file: file, keyPath: "format", expected: ProfileRule.format(currentFormat), found: String(format))
        }
        var profile = Profile(file: file, name: try top.required("name", ProfileRule.profileName) { k throws(FleetError) in try top.string(k, expected: ProfileRule.nonEmptyString) })
        profile.description = try top.string("description", check: { _ in true })
        profile.locale = try top.string("locale", expected: ProfileRule.oneOf(locales), check: { locales.contains($0) })
        profile.minimumBatteryPercent = try top.integer("minimum_battery_percent", in: 0...100) ?? 20
        profile.region = try readRegion(top)
        profile.firmware = try readFirmware(top)
        profile.maintenanceWindows = try readWindows(top)
        profile.rollout = try readRollout(top)
        profile.provisioning = try readProvisioning(top)
        if let o = try top.object("retries", allowed: ["connect", "region", "firmware", "smoke_test"]) {
            profile.retries.connect = try o.integer("connect", in: 0...10) ?? profile.retries.connect
            profile.retries.region = try o.integer("region", in: 0...10) ?? profile.retries.region
            profile.retries.firmware = try o.integer("firmware", in: 0...10) ?? profile.retries.firmware
            profile.retries.smokeTest = try o.integer("smoke_test", in: 0...10) ?? profile.retries.smokeTest
        }
        if let o = try top.object("timeouts", allowed: ["handshake_s", "command_s", "reconnect_s", "stall_s", "step_s",
                                                        "device_run_s"]) {
            profile.timeouts.handshake = try o.number("handshake_s", in: 0.1...600, unit: .seconds) ?? profile.timeouts.handshake
            profile.timeouts.command = try o.number("command_s", in: 0.1...600, unit: .seconds) ?? profile.timeouts.command
            profile.timeouts.reconnect = try o.number("reconnect_s", in: 0.1...600, unit: .seconds) ?? profile.timeouts.reconnect
            // The wall-clock bounds (seconds on the wall clock, not of audio): each must leave
            // room for the one it is part of.
            profile.timeouts.stall = try o.number("stall_s", in: 0.1...600, unit: .seconds)
            profile.timeouts.step = try o.number("step_s", in: 1...86_400, unit: .seconds)
            profile.timeouts.deviceRun = try o.number("device_run_s", in: 1...604_800, unit: .seconds)
            let bounds = profile.timeouts
            if let step = bounds.step, bounds.stallBound >= step {
                throw o.invalid("step_s", ProfileRule.moreThanStall(bounds.stallBound),
                                .number(step))
            }
            if let run = bounds.deviceRun, bounds.stepBound > run {
                throw o.invalid("device_run_s", ProfileRule.atLeastStep(bounds.stepBound),
                                .number(run))
            }
        }
        profile.smokeTest = try readSmokeTest(top)
        profile.station = try readStation(top)
        profile.cues = try readCues(top)
        return profile
    }

    /// `cues`: per cue a list of tones (`frequency_hz` 0 for a rest or one the piezo
    /// sounds, `duration_ms`) or `false` to silence it; a cue not named keeps its standard melody.
    private static func readCues(_ top: ProfileObject) throws(FleetError) -> ReaderCues {
        var cues = ReaderCues.standard
        guard let o = try top.object("cues", allowed: ReaderCue.allCases.map(\.rawValue)) else { return cues }
        let expected = ProfileRule.cue(maxTones: ReaderCues.maxTones)
        for cue in ReaderCue.allCases {
            guard let value = o.members[cue.rawValue] else { continue }
            if value == .bool(false) {
                cues.melodies[cue] = nil
                continue
            }
            guard case .array(let items) = value, (1...ReaderCues.maxTones).contains(items.count) else {
                throw o.invalid(cue.rawValue, expected, value)
            }
            let tones = try o.objects(cue.rawValue, allowed: ["frequency_hz", "duration_ms"]) { t throws(FleetError) -> SoundTone in
                let rule = ProfileRule.toneFrequency(ReaderCues.frequencyHz)
                let audible = Double(ReaderCues.frequencyHz.lowerBound)...Double(ReaderCues.frequencyHz.upperBound)
                let frequency = try t.required("frequency_hz", rule) { k throws(FleetError) -> Int? in
                    guard let value = t.members[k] else { return nil }
                    guard case .number(let hz) = value, hz == 0 || (audible.contains(hz) && hz == hz.rounded()) else {
                        throw t.invalid(k, rule, value)
                    }
                    return Int(hz)
                }
                let range = ReaderCues.toneMilliseconds
                let duration = try t.required("duration_ms", ProfileRule.wholeNumberRange(range)) { k throws(FleetError) in
                    try t.integer(k, in: range)
                }
                return SoundTone(frequencyHz: UInt16(frequency), durationMs: UInt16(duration))
            } ?? []
            let total = tones.reduce(0) { $0 + Int($1.durationMs) }
            guard total <= ReaderCues.maxMilliseconds else {
                throw .profileInvalid(file: o.file, keyPath: o.keyPath(cue.rawValue), expected: ProfileRule.cueLength(ReaderCues.maxMilliseconds),
                                      found: "\(total) ms")
            }
            cues.melodies[cue] = tones
        }
        return cues
    }

    private static func readStation(_ top: ProfileObject) throws(FleetError) -> StationConfig? {
        guard let o = try top.object("station", allowed: ["name", "ledger", "offline", "ledger_reconnect_s", "already_done"]) else { return nil }
        let nameExpected = ProfileRule.stationName(maxLength: StationConfig.maxNameLength)
        let name = try o.string("name", expected: nameExpected, check: { name in
            !name.isEmpty && name.count <= StationConfig.maxNameLength && name == name.trimmingCharacters(in: .whitespaces)
                && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
        })
        let ledger = try o.string("ledger", expected: ProfileRule.ledgerAddress,
                                  check: { text in
            (text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") || (text.hasPrefix("/") && !text.hasSuffix("/")))
                && !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
        })
        let modes = StationConfig.Offline.allCases.map(\.rawValue)
        let offline = try o.string("offline", expected: ProfileRule.oneOf(modes), check: { modes.contains($0) })
            .flatMap(StationConfig.Offline.init(rawValue:)) ?? .refuse
        let reconnect = try o.number("ledger_reconnect_s", in: StationConfig.ledgerReconnectRange, unit: .seconds)
            ?? StationConfig.defaultLedgerReconnectSeconds
        let choices = StationConfig.AlreadyDone.allCases.map(\.rawValue)
        let alreadyDone = try o.string("already_done", expected: ProfileRule.oneOf(choices), check: { choices.contains($0) })
            .flatMap(StationConfig.AlreadyDone.init(rawValue:)) ?? .leave
        return StationConfig(name: name, ledger: ledger, offline: offline, ledgerReconnectSeconds: reconnect, alreadyDone: alreadyDone)
    }

    private static func readRegion(_ top: ProfileObject) throws(FleetError) -> RegionPolicy? {
        guard let o = try top.object("region", allowed: ["set", "allowed", "catalogue"]) else { return nil }
        let tables = RegionTableChoice.allCases.map(\.rawValue)
        let table = try o.string("catalogue", expected: ProfileRule.oneOf(tables), check: { tables.contains($0) })
            .flatMap(RegionTableChoice.init(rawValue:)) ?? .ours
        let expected = ProfileRule.region
        let set = try o.string("set", expected: expected, check: { RegionCatalog.find($0) != nil }).flatMap(RegionCatalog.find)
        let allowed = try o.strings("allowed", expected: expected, element: RegionCatalog.find) ?? RegionCatalog.all
        guard set != nil || o.has("allowed") else {
            throw .profileMissingKey(file: top.file, keyPath: o.keyPath("set"), expected: ProfileRule.regionSetOrAllowed)
        }
        if let set, !allowed.contains(set) {
            throw .profileInvalid(file: top.file, keyPath: o.keyPath("set"), expected: ProfileRule.oneOfAllowed(allowed.map(\.code)), found: "\"\(set.code)\"")
        }
        return RegionPolicy(set: set, allowed: allowed, table: table)
    }

    private static func readFirmware(_ top: ProfileObject) throws(FleetError) -> FirmwarePolicy? {
        guard let o = try top.object("firmware", allowed: ["channel", "target", "allow_downgrade", "allow_same_version"]) else { return nil }
        let channel = try o.required("channel", ProfileRule.channelName) { k throws(FleetError) in
            try o.string(k, expected: ProfileRule.channelName, check: Self.isChannelName)
        }
        var target = FirmwareTarget.latest
        if let text = try o.string("target", expected: ProfileRule.firmwareTarget, check: { $0 == "latest" || FirmwareVersion($0) != nil }),
           let version = FirmwareVersion(text) {
            target = .version(version)
        }
        return FirmwarePolicy(channel: channel, target: target, allowDowngrade: try o.bool("allow_downgrade") ?? false,
                              allowSameVersion: try o.bool("allow_same_version") ?? false)
    }

    static func isChannelName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name != "." && name != ".."
            && name.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "._-".unicodeScalars.contains($0) }
    }

    private static func readWindows(_ top: ProfileObject) throws(FleetError) -> MaintenanceWindows? {
        guard let o = try top.object("maintenance_windows", allowed: ["time_zone", "windows"]) else { return nil }
        let zoneName = try o.required("time_zone", ProfileRule.timeZone) { k throws(FleetError) in
            try o.string(k, expected: ProfileRule.timeZone, check: { TimeZone(identifier: $0) != nil })
        }
        let windows = try o.objects("windows", allowed: ["days", "start", "end"]) { w throws(FleetError) -> MaintenanceWindows.Window in
            let days = try w.strings("days", expected: ProfileRule.day, element: MaintenanceWindows.Day.init(rawValue:))
            let clock = ProfileRule.clock
            let start = try w.required("start", clock) { k throws(FleetError) in try w.string(k, expected: clock, check: { MaintenanceWindows.minutes($0) != nil }) }
            let end = try w.required("end", clock) { k throws(FleetError) in try w.string(k, expected: clock, check: { MaintenanceWindows.minutes($0) != nil }) }
            let startMinutes = MaintenanceWindows.minutes(start)!
            let endMinutes = MaintenanceWindows.minutes(end)!
            guard startMinutes != endMinutes else {
                throw .profileInvalid(file: w.file, keyPath: w.keyPath("end"), expected: ProfileRule.otherThanStart(start), found: "\"\(end)\"")
            }
            return MaintenanceWindows.Window(days: Set(days ?? MaintenanceWindows.Day.allCases), startMinute: startMinutes, endMinute: endMinutes)
        }
        guard let windows, !windows.isEmpty else {
            throw .profileMissingKey(file: o.file, keyPath: o.keyPath("windows"), expected: ProfileRule.windows)
        }
        return MaintenanceWindows(timeZone: TimeZone(identifier: zoneName)!, windows: windows)
    }

    private static func readRollout(_ top: ProfileObject) throws(FleetError) -> RolloutPolicy? {
        guard let o = try top.object("rollout", allowed: ["id", "percentage", "halt"]) else { return nil }
        let id = try o.required("id", ProfileRule.rolloutID) { k throws(FleetError) in try o.string(k, expected: ProfileRule.nonEmptyString) }
        let percentage = try o.required("percentage", ProfileRule.numberRange(0...100)) { k throws(FleetError) in try o.number(k, in: 0...100) }
        var halt: RolloutPolicy.HaltRule?
        if let h = try o.object("halt", allowed: ["after_devices", "max_failure_rate", "window_devices", "window_minutes"]) {
            let after = try h.required("after_devices", ProfileRule.wholeNumberFrom(1)) { k throws(FleetError) in try h.integer(k, in: 1...1_000_000) }
            let rate = try h.required("max_failure_rate", ProfileRule.numberRange(0...1)) { k throws(FleetError) in try h.number(k, in: 0...1) }
            let window = try h.integer("window_devices", in: 1...1_000_000)
            if let window, window < after {
                // A window smaller than the count the rule waits for could never trip it.
                throw .profileInvalid(file: h.file, keyPath: h.keyPath("window_devices"),
                                      expected: ProfileRule.windowDevices(after: after, upTo: 1_000_000), found: String(window))
            }
            let minutes = try h.number("window_minutes", in: 1...525_600)
            halt = RolloutPolicy.HaltRule(afterDevices: after, maxFailureRate: rate, windowDevices: window, windowMinutes: minutes)
        }
        return RolloutPolicy(id: id, percentage: percentage, halt: halt)
    }

    private static func readProvisioning(_ top: ProfileObject) throws(FleetError) -> ProvisioningPolicy? {
        guard let o = try top.object("provisioning", allowed: ["register_serial", "antenna_type", "hardware_revision", "status"]) else { return nil }
        return ProvisioningPolicy(
            registerSerial: try o.bool("register_serial") ?? false,
            antennaType: try o.integer("antenna_type", in: 1...255).map(UInt8.init),
            hardwareRevision: try o.integer("hardware_revision", in: 0...255).map(UInt8.init),
            status: try o.string("status", expected: ProfileRule.oneOf(ProvisioningStatus.named.map(\.name)), check: { text in ProvisioningStatus.named.contains { $0.name == text } })
                .flatMap(ProvisioningStatus.init(name:)))
    }

    private static func readSmokeTest(_ top: ProfileObject) throws(FleetError) -> SmokeTestPolicy? {
        guard let o = try top.object("smoke_test", allowed: ["reference_tags", "inventory_type", "duration_s", "min_reads_per_second", "min_rssi_dbm"]) else { return nil }
        var test = SmokeTestPolicy()
        test.referenceTags = try o.strings("reference_tags", expected: ProfileRule.epc, allowEmpty: true) { text in
            guard text.count % 4 == 0, let epc = try? UgiEpc(hex: text) else { return nil }
            return epc
        } ?? []
        if let type = try o.string("inventory_type", expected: ProfileRule.oneOf(UgiInventoryType.allCases.map(\.code)), check: { UgiInventoryType(code: $0) != nil }) {
            test.inventoryType = UgiInventoryType(code: type)!
        }
        test.duration = try o.number("duration_s", in: 0.1...60, unit: .seconds) ?? test.duration
        test.minReadsPerSecond = try o.number("min_reads_per_second", in: 0...100_000) ?? test.minReadsPerSecond
        test.minRSSI = try o.number("min_rssi_dbm", in: -120...0, unit: .dBm)
        return test
    }
}

/// When firmware may be flashed: windows on days of the week, in one time zone.
public struct MaintenanceWindows: Sendable, Equatable {
    /// A day of the week.
    public enum Day: String, Sendable, CaseIterable {
        case sun, mon, tue, wed, thu, fri, sat

        /// Foundation's weekday number (1 = Sunday).
        var weekday: Int { Self.allCases.firstIndex(of: self)! + 1 }
    }

    /// One window: from `startMinute` to `endMinute` (minutes after midnight) on each of
    /// `days`; an end before the start runs past midnight into the next day.
    public struct Window: Sendable, Equatable {
        public var days: Set<Day>
        public var startMinute: Int
        public var endMinute: Int

        public init(days: Set<Day>, startMinute: Int, endMinute: Int) {
            self.days = days
            self.startMinute = startMinute
            self.endMinute = endMinute
        }
    }

    public var timeZone: TimeZone
    public var windows: [Window]

    public init(timeZone: TimeZone, windows: [Window]) {
        self.timeZone = timeZone
        self.windows = windows
    }

    /// `HH:MM` as minutes after midnight (00:00 ... 24:00).
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
              (0...24).contains(h), (0...59).contains(m), h < 24 || m == 0
        else { return nil }
        return h * 60 + m
    }

    /// Whether `date` falls in a window (in the profile's time zone).
    public func contains(_ date: Date) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        guard let weekday = parts.weekday, let hour = parts.hour, let minute = parts.minute else { return false }
        let now = hour * 60 + minute
        let yesterday = weekday == 1 ? 7 : weekday - 1
        for window in windows {
            let days = Set(window.days.map(\.weekday))
            if window.startMinute < window.endMinute {
                if days.contains(weekday), now >= window.startMinute, now < window.endMinute { return true }
            } else {
                // Past midnight: the evening part belongs to the day, the morning to the day before.
                if days.contains(weekday), now >= window.startMinute { return true }
                if days.contains(yesterday), now < window.endMinute { return true }
            }
        }
        return false
    }
}

/// A staged rollout: which share of the fleet takes the firmware in this stage, chosen
/// deterministically from each serial number, and when to stop starting devices.
public struct RolloutPolicy: Sendable, Equatable {
    /// Halt the rollout's stage, fleet-wide, once more than `maxFailureRate` of the units in
    /// the window failed, counted from `afterDevices` finished units on. The window is the
    /// last `windowDevices` finished units of this rollout on every station that shares the
    /// ledger (`nil`: every unit since the stage was made or last resumed), of the last
    /// `windowMinutes` only when set (docs/profiles.md, `rollout.halt`).
    public struct HaltRule: Sendable, Equatable {
        public var afterDevices: Int
        public var maxFailureRate: Double
        public var windowDevices: Int?
        public var windowMinutes: Double?

        public init(afterDevices: Int, maxFailureRate: Double, windowDevices: Int? = nil, windowMinutes: Double? = nil) {
            self.afterDevices = afterDevices
            self.maxFailureRate = maxFailureRate
            self.windowDevices = windowDevices
            self.windowMinutes = windowMinutes
        }
    }

    /// Names the rollout: a new id draws a different sample of the fleet.
    public var id: String
    /// 0...100.
    public var percentage: Double
    public var halt: HaltRule?

    public init(id: String, percentage: Double, halt: HaltRule? = nil) {
        self.id = id
        self.percentage = percentage
        self.halt = halt
    }
}
