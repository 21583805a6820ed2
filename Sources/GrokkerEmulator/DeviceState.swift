import Foundation
import GrokBasics
import GrokProtocol
import Synchronization

/// Factory provisioning of an emulated Grokker (vendor provisioning status flags).
public struct ProvisioningFlags: Codable, Sendable, Equatable {
    /// Provisioned at the factory (serial number registered). Unprovisioned readers refuse
    /// inventory (vendor NOT_PROVISIONED).
    public var provisioned: Bool
    /// The hardware requires a region before it scans (vendor enforce-region-setting).
    public var enforceRegion: Bool
    /// The user may choose the region (vendor `userCanSetRegion`).
    public var userCanSetRegion: Bool
    /// The user has set the region (vendor "user has set region" provisioning flag).
    public var userHasSetRegion: Bool

    /// Creates provisioning flags.
    public init(provisioned: Bool, enforceRegion: Bool, userCanSetRegion: Bool, userHasSetRegion: Bool) {
        self.provisioned = provisioned
        self.enforceRegion = enforceRegion
        self.userCanSetRegion = userCanSetRegion
        self.userHasSetRegion = userHasSetRegion
    }

    /// A new unit: provisioned, region enforced, user may set it, has not yet.
    public static let outOfBox = ProvisioningFlags(
        provisioned: true, enforceRegion: true, userCanSetRegion: true, userHasSetRegion: false)
}

/// The Grokker's password as the unit keeps it: never the password itself, a SHA-256 of a
/// random salt followed by the password's UTF-8 bytes (both in hex).
public struct PasswordHash: Codable, Sendable, Equatable {
    /// 16 random bytes, hex.
    public var salt: String
    /// SHA-256(salt bytes + password UTF-8), hex.
    public var sha256: String

    public init(salt: String, sha256: String) {
        self.salt = salt
        self.sha256 = sha256
    }
}

/// What an emulated Grokker remembers across power cycles, persisted as `state.json` in
/// its own directory by ``DeviceStateStore``.
public struct DeviceState: Codable, Sendable, Equatable {
    /// The newest `format` of `state.json` this build reads and the one it writes.
    public static let currentFormat = 2
    /// The format written when the state has no password: 1, so a build that knows nothing
    /// of passwords still reads it. A state with a password is written as format 2, which
    /// such a build refuses as too new rather than dropping the password.
    public static let formatWithoutPassword = 1
    /// The application firmware a new unit ships with: 1.7.3 (the demo channel ships 1.8.0).
    /// The factory makes the unit's flash with an application of this version.
    public static let outOfBoxFirmware = FirmwareVersion(major: 1, minor: 7, build: 3)
    /// The loader a new unit ships with: 1.0.0, the demo loader (`FactoryFirmware.loader`).
    public static let outOfBoxLoader = FirmwareVersion(major: 1, minor: 0, build: 0)
    /// The board revision of a new unit.
    public static let outOfBoxHardwareRevision: UInt8 = 3
    /// Serial numbers are 8 decimal digits; new ones are drawn from this range.
    public static let serialNumberRange: ClosedRange<UInt32> = 10_000_000...99_999_999

    /// The unit's serial number (printed as 8 decimal digits).
    public var serialNumber: UInt32
    /// The board revision.
    public var hardwareRevision: UInt8
    /// The loader's version: the flash's loader record's, written at every power-on.
    public var loaderVersion: FirmwareVersion
    /// The application firmware's version: the flash's application record's, written at
    /// every power-on (the flash wins); before the unit's flash exists, the version its
    /// factory application is made with.
    public var firmwareVersion: FirmwareVersion
    /// The region set; `nil` when not set (out of the box).
    public var region: RegionSetting?
    /// The region entry the last SetRegion carried (channels in hop order, dwell, round,
    /// listening, power), which the unit's inventories obey; `nil` when the region was set
    /// otherwise (a state file written by hand, the factory) or before this was kept: then
    /// the built-in entry of ``region`` applies. Kept in `state.json` as `regionTable`, the
    /// entry's 120 bytes in hex.
    public var regionTable: VendorRegionEntry?
    /// Factory provisioning flags.
    public var provisioning: ProvisioningFlags
    /// Battery charge, 0...100 percent.
    public var batteryPercent: UInt8
    /// The Grokker password, `nil` when none is set (out of the box).
    public var password: PasswordHash?
    /// The antenna tuner's setting per channel (key: the channel in kHz, as text; value: the
    /// capacitor code 0...``AntennaModel/codes``−1). Channels not listed are at the factory
    /// setting ``AntennaModel/factoryCode``.
    public var antennaTuning: [String: Int]
    /// The antenna fitted, as the factory wrote it (0 = not set). Absent from state files
    /// written before factory provisioning existed: read as 0.
    public var antennaType: UInt8
    /// The factory provisioning status (absent from older state files: ``ProvisioningStatus/none``).
    public var provisioningStatus: ProvisioningStatus
    /// The hardware band the unit's radio and antenna tune (``VendorFrequencyBand``): it
    /// refuses (NACK) a SetRegion entry of the other band. `nil` (the default, and state files
    /// without `hardwareBand`): an emulated unit that tunes both, as every emulated unit did
    /// before the band was kept; a real Grokker has one. Kept in `state.json` as
    /// `hardwareBand`, the entry's band code (0 the 900 MHz hardware, 1 the 860 MHz).
    public var hardwareBand: VendorFrequencyBand?

    /// Creates a state.
    public init(
        serialNumber: UInt32, hardwareRevision: UInt8, loaderVersion: FirmwareVersion,
        firmwareVersion: FirmwareVersion, region: RegionSetting?, provisioning: ProvisioningFlags,
        batteryPercent: UInt8, password: PasswordHash? = nil, antennaTuning: [String: Int] = [:],
        antennaType: UInt8 = 0, provisioningStatus: ProvisioningStatus = .none
    ) {
        self.antennaType = antennaType
        self.provisioningStatus = provisioningStatus
        self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision
        self.loaderVersion = loaderVersion
        self.firmwareVersion = firmwareVersion
        self.region = region
        self.provisioning = provisioning
        self.batteryPercent = batteryPercent
        self.password = password
        self.antennaTuning = antennaTuning
    }

    /// A unit fresh out of the box: the given serial number, firmware
    /// ``outOfBoxFirmware``, region not set, full battery.
    public static func outOfBox(serialNumber: UInt32) -> DeviceState {
        DeviceState(
            serialNumber: serialNumber, hardwareRevision: outOfBoxHardwareRevision,
            loaderVersion: outOfBoxLoader, firmwareVersion: outOfBoxFirmware, region: nil,
            provisioning: .outOfBox, batteryPercent: 100)
    }

    /// The reader refuses to scan until a region is set.
    public var userMustSetRegion: Bool { provisioning.enforceRegion && region == nil }

    private enum CodingKeys: String, CodingKey {
        case format, serialNumber, hardwareRevision, loaderVersion, firmwareVersion, region, regionTable,
            provisioning, batteryPercent, password, antennaTuning, antennaType, provisioningStatus, hardwareBand
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.decode(Int.self, forKey: .format)
        guard format <= Self.currentFormat else { throw FormatTooNew(format: format) }
        serialNumber = try c.decode(UInt32.self, forKey: .serialNumber)
        hardwareRevision = try c.decode(UInt8.self, forKey: .hardwareRevision)
        loaderVersion = try c.decode(FirmwareVersion.self, forKey: .loaderVersion)
        firmwareVersion = try c.decode(FirmwareVersion.self, forKey: .firmwareVersion)
        region = try c.decodeIfPresent(RegionSetting.self, forKey: .region)
        if let hex = try c.decodeIfPresent(String.self, forKey: .regionTable) {
            guard let bytes = try? SceneDecoding.bytes(fromHex: hex).get(), bytes.count == VendorRegionEntry.byteCount,
                  let table = try? VendorRegionEntry(bytes: bytes) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .regionTable, in: c,
                    debugDescription: "regionTable must be a region entry's \(VendorRegionEntry.byteCount) bytes in hex")
            }
            regionTable = table
        } else {
            regionTable = nil
        }
        provisioning = try c.decode(ProvisioningFlags.self, forKey: .provisioning)
        batteryPercent = try c.decode(UInt8.self, forKey: .batteryPercent)
        password = try c.decodeIfPresent(PasswordHash.self, forKey: .password)
        antennaTuning = try c.decodeIfPresent([String: Int].self, forKey: .antennaTuning) ?? [:]
        antennaType = try c.decodeIfPresent(UInt8.self, forKey: .antennaType) ?? 0
        provisioningStatus = ProvisioningStatus(rawValue: try c.decodeIfPresent(UInt8.self, forKey: .provisioningStatus) ?? 0)
        if let code = try c.decodeIfPresent(UInt8.self, forKey: .hardwareBand) {
            guard let band = VendorFrequencyBand(rawValue: code) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .hardwareBand, in: c, debugDescription: "hardwareBand must be 0 (900 MHz hardware) or 1 (860 MHz hardware)")
            }
            hardwareBand = band
        }
        guard batteryPercent <= 100 else {
            throw DecodingError.dataCorruptedError(
                forKey: .batteryPercent, in: c, debugDescription: "batteryPercent \(batteryPercent) is above 100")
        }
        if let region, region.name.isEmpty || region.name.utf8.count > Self.maxRegionNameBytes {
            throw DecodingError.dataCorruptedError(
                forKey: .region, in: c, debugDescription: "region name must have 1...\(Self.maxRegionNameBytes) UTF-8 bytes")
        }
    }

    /// The longest region name a state file may hold (a sanity bound: the catalogue's longest is 22 bytes).
    static let maxRegionNameBytes = 255

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(password == nil ? Self.formatWithoutPassword : Self.currentFormat, forKey: .format)
        try c.encode(serialNumber, forKey: .serialNumber)
        try c.encode(hardwareRevision, forKey: .hardwareRevision)
        try c.encode(loaderVersion, forKey: .loaderVersion)
        try c.encode(firmwareVersion, forKey: .firmwareVersion)
        try c.encodeIfPresent(region, forKey: .region)
        if let regionTable {
            try c.encode(SceneDecoding.hex(regionTable.encode()), forKey: .regionTable)
        }
        try c.encode(provisioning, forKey: .provisioning)
        try c.encode(batteryPercent, forKey: .batteryPercent)
        try c.encodeIfPresent(password, forKey: .password)
        if !antennaTuning.isEmpty { try c.encode(antennaTuning, forKey: .antennaTuning) }
        try c.encode(antennaType, forKey: .antennaType)
        try c.encode(provisioningStatus.rawValue, forKey: .provisioningStatus)
        try c.encodeIfPresent(hardwareBand?.rawValue, forKey: .hardwareBand)
    }

    /// Thrown while decoding a state file of a newer format.
    struct FormatTooNew: Error {
        var format: Int
    }
}

/// Keeps one emulated Grokker's ``DeviceState`` and persists every change to
/// `state.json` in the device's own directory (temp file, fsync, rename, fsync directory),
/// so a power cut at any instant leaves either the old or the new state.
///
/// Thread-safe: the state is guarded by a mutex and updates are serialized.
public final class DeviceStateStore: Sendable {
    /// The state file's name inside the device directory.
    public static let fileName = "state.json"
    /// State files larger than this are refused as corrupt (bounded input).
    static let maxFileBytes = 1 << 20

    /// The device's own directory.
    public let deviceDirectory: String
    /// The path of `state.json`.
    public let stateFile: String
    private let current: Mutex<DeviceState>

    private init(deviceDirectory: String, state: DeviceState) {
        self.deviceDirectory = deviceDirectory
        self.stateFile = Self.stateFile(in: deviceDirectory)
        self.current = Mutex(state)
    }

    /// The directory of device number `index` under a bench directory: `<directory>/sim-<index>` (the `sim:N` of `grokctl --device`).
    public static func deviceDirectory(in directory: String, index: Int) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + "sim-\(index)"
    }

    static func stateFile(in deviceDirectory: String) -> String {
        (deviceDirectory.hasSuffix("/") ? deviceDirectory : deviceDirectory + "/") + fileName
    }

    /// Opens emulated Grokker number `index` of the bench kept in `directory`
    /// (its own directory is ``deviceDirectory(in:index:)``), creating it out of the box
    /// when used for the first time.
    public static func openOrCreate(directory: String, index: Int) throws(EmulatorError) -> DeviceStateStore {
        var generator = SystemRandomNumberGenerator()
        return try openOrCreate(deviceDirectory: deviceDirectory(in: directory, index: index), using: &generator)
    }

    /// Opens the emulated Grokker whose own directory is `deviceDirectory`. The first time,
    /// creates the directory and a state out of the box (``DeviceState/outOfBox(serialNumber:)``)
    /// with a random serial number from `generator`, and saves it before returning.
    ///
    /// A state file that exists but cannot be read or decoded is an error naming the file;
    /// it is never replaced silently.
    public static func openOrCreate(
        deviceDirectory: String, using generator: inout some RandomNumberGenerator
    ) throws(EmulatorError) -> DeviceStateStore {
        do {
            try FileManager.default.createDirectory(atPath: deviceDirectory, withIntermediateDirectories: true)
        } catch {
            throw .directory(path: deviceDirectory, detail: EmulatorError.systemDetail("mkdir", error))
        }
        let path = stateFile(in: deviceDirectory)
        if let data = try readStateFile(path) {
            return DeviceStateStore(deviceDirectory: deviceDirectory, state: try decodeState(data, path: path))
        }
        // Created atomically across processes: of two openers racing on a new unit, one
        // writes its identity and the other reads that one (one identity, ever).
        let serial = UInt32.random(in: DeviceState.serialNumberRange, using: &generator)
        let state = DeviceState.outOfBox(serialNumber: serial)
        let created: Bool
        do {
            created = try UnitFile.createExclusively(path, with: Array(encodeState(state)))
        } catch {
            throw .stateWriteFailed(path: path, detail: error.errorDetail)
        }
        if created { return DeviceStateStore(deviceDirectory: deviceDirectory, state: state) }
        guard let data = try readStateFile(path) else {
            throw .stateUnreadable(path: path, detail: ErrorDetail("vanished"))
        }
        return DeviceStateStore(deviceDirectory: deviceDirectory, state: try decodeState(data, path: path))
    }

    /// The state of the emulated Grokker whose own directory is `deviceDirectory`, read
    /// without creating anything; `nil` when it has no state yet (never used).
    /// - Throws: the errors of ``openOrCreate(deviceDirectory:using:)`` for a state file
    ///   that cannot be read or decoded.
    public static func read(deviceDirectory: String) throws(EmulatorError) -> DeviceState? {
        let path = stateFile(in: deviceDirectory)
        guard let data = try readStateFile(path) else { return nil }
        return try decodeState(data, path: path)
    }

    /// The current state.
    public var state: DeviceState {
        current.withLock { $0 }
    }

    /// Changes the state and saves it before returning. If saving fails, the state is left
    /// as it was and the error is thrown. Nothing is written when `body` changes nothing.
    public func update(_ body: (inout DeviceState) -> Void) throws(EmulatorError) {
        try current.withLock { (value: inout DeviceState) throws(EmulatorError) -> Void in
            var changed = value
            body(&changed)
            guard changed != value else { return }
            try Self.save(changed, to: stateFile)
            value = changed
        }
    }

    // MARK: Files

    static func encodeState(_ state: DeviceState) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // DeviceState's encoding cannot fail: it holds only numbers, strings and booleans.
        return ((try? encoder.encode(state)) ?? Data()) + Data("\n".utf8)
    }

    static func decodeState(_ data: Data, path: String) throws(EmulatorError) -> DeviceState {
        do {
            return try JSONDecoder().decode(DeviceState.self, from: data)
        } catch let error as DeviceState.FormatTooNew {
            throw .stateTooNew(path: path, format: error.format, supported: DeviceState.currentFormat)
        } catch {
            throw .stateCorrupt(path: path, detail: decodingFailure(error))
        }
    }

    private static func save(_ state: DeviceState, to path: String) throws(EmulatorError) {
        do {
            try UnitFile.replace(path, with: Array(encodeState(state)))
        } catch {
            throw .stateWriteFailed(path: path, detail: error.errorDetail)
        }
    }

    /// The file's bytes, or `nil` when it does not exist.
    private static func readStateFile(_ path: String) throws(EmulatorError) -> Data? {
        do {
            guard let bytes = try UnitFile.readAll(path, limit: maxFileBytes) else { return nil }
            return Data(bytes)
        } catch UnitFile.Failure.tooLarge(let size) {
            throw .stateCorrupt(path: path, detail: ErrorDetail("state_too_large", [String(size), String(maxFileBytes)]))
        } catch {
            throw .stateUnreadable(path: path, detail: error.errorDetail)
        }
    }

    /// What is wrong with a state file `JSONDecoder` refused, as a code under
    /// `emulator.detail`: the key path and the kind of fault, not Foundation's English.
    static func decodingFailure(_ error: any Error) -> ErrorDetail {
        switch error {
        case DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty:
            return ErrorDetail("not_json")
        case DecodingError.dataCorrupted(let context):
            switch context.codingPath.last?.stringValue {
            // DeviceState's own checks (init(from:)).
            case "batteryPercent": return ErrorDetail("battery_above_100")
            case "region": return ErrorDetail("region_name_length", [String(DeviceState.maxRegionNameBytes)])
            default: return ErrorDetail("invalid_value", [codingPath(context.codingPath)])
            }
        case DecodingError.keyNotFound(let key, let context):
            return ErrorDetail("missing_field", [codingPath(context.codingPath + [key])])
        case DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty:
            return ErrorDetail("not_an_object")
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return ErrorDetail("wrong_type", [codingPath(context.codingPath)])
        default:
            return ErrorDetail("undecodable")
        }
    }

    private static func codingPath(_ path: [any CodingKey]) -> String {
        path.map(\.stringValue).joined(separator: ".")
    }
}
