import GrokProtocol
import Synchronization

/// The fixed capabilities of an emulated hardware model: what ``Command/identify`` reports
/// besides the per-unit ``DeviceState``.
public struct EmulatedHardware: Sendable, Equatable {
    /// The hardware kind.
    public var hardwareType: HardwareType
    /// The model name.
    public var hardwareModel: String
    /// The reader protocol the emulated firmware implements.
    public var readerProtocolVersion: UInt16
    /// Maximum RF power, tenths of a dBm.
    public var maxPowerTenthsDBm: Int16
    /// Best receive sensitivity, tenths of a dBm.
    public var maxSensitivityTenthsDBm: Int16
    /// Speaker volume steps.
    public var numVolumeLevels: UInt8
    /// Most tones in one sound.
    public var maxTonesInSound: UInt8
    /// Has a battery.
    public var hasBattery: Bool
    /// Can run on external power.
    public var hasExternalPower: Bool
    /// Battery capacity, minutes of scanning.
    public var batteryCapacityMinutes: UInt16
    /// Battery capacity, mAh.
    public var batteryCapacityMAh: UInt16

    /// Creates a hardware description.
    public init(
        hardwareType: HardwareType, hardwareModel: String, readerProtocolVersion: UInt16,
        maxPowerTenthsDBm: Int16, maxSensitivityTenthsDBm: Int16, numVolumeLevels: UInt8,
        maxTonesInSound: UInt8, hasBattery: Bool, hasExternalPower: Bool,
        batteryCapacityMinutes: UInt16, batteryCapacityMAh: UInt16
    ) {
        self.hardwareType = hardwareType
        self.hardwareModel = hardwareModel
        self.readerProtocolVersion = readerProtocolVersion
        self.maxPowerTenthsDBm = maxPowerTenthsDBm
        self.maxSensitivityTenthsDBm = maxSensitivityTenthsDBm
        self.numVolumeLevels = numVolumeLevels
        self.maxTonesInSound = maxTonesInSound
        self.hasBattery = hasBattery
        self.hasExternalPower = hasExternalPower
        self.batteryCapacityMinutes = batteryCapacityMinutes
        self.batteryCapacityMAh = batteryCapacityMAh
    }

    /// The emulated Grokker 1: 30.0 dBm, -80.0 dBm sensitivity, 8 volume levels, 16 tones per
    /// sound, battery of 1000 mAh lasting 240 minutes of scanning, USB power, reader protocol 20.
    public static let grokker1 = EmulatedHardware(
        hardwareType: .grokker1, hardwareModel: "Grokker", readerProtocolVersion: ReaderInfo.vendorReaderProtocolVersion,
        maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800, numVolumeLevels: 8, maxTonesInSound: 16,
        hasBattery: true, hasExternalPower: true, batteryCapacityMinutes: 240, batteryCapacityMAh: 1000)

    /// What a unit of this hardware in `state` answers to ``Command/identify``.
    public func readerInfo(for state: DeviceState) -> ReaderInfo {
        ReaderInfo(
            hardwareType: hardwareType, hardwareModel: hardwareModel, hardwareRevision: state.hardwareRevision,
            firmwareVersion: state.firmwareVersion, loaderVersion: state.loaderVersion,
            serialNumber: state.serialNumber, readerProtocolVersion: readerProtocolVersion,
            region: state.region, userMustSetRegion: state.userMustSetRegion,
            userCanSetRegion: state.provisioning.userCanSetRegion, provisioned: state.provisioning.provisioned,
            enforceRegion: state.provisioning.enforceRegion, maxPowerTenthsDBm: maxPowerTenthsDBm,
            maxSensitivityTenthsDBm: maxSensitivityTenthsDBm, numVolumeLevels: numVolumeLevels,
            maxTonesInSound: maxTonesInSound, hasBattery: hasBattery, hasExternalPower: hasExternalPower,
            batteryCapacityMinutes: batteryCapacityMinutes, batteryCapacityMAh: batteryCapacityMAh,
            deviceInitializedSuccessfully: true)
    }
}

/// The emulated Grokker's command layer (device side): turns each request message the link
/// delivers into exactly one response message, using and persisting the ``DeviceState``.
///
/// Never traps on input: a request that does not decode is answered with
/// ``Response/failure(opcode:status:message:)`` carrying the request's id and opcode when
/// its header is readable (id 0 and ``Opcode/unspecified`` otherwise). Thread-safe.
public final class GrokkerCommandHandler: Sendable {
    /// The unit's persistent state.
    public let store: DeviceStateStore
    /// The unit's fixed capabilities.
    public let hardware: EmulatedHardware

    /// Creates a handler for the unit whose state `store` keeps.
    public init(store: DeviceStateStore, hardware: EmulatedHardware = .grokker1) {
        self.store = store
        self.hardware = hardware
    }

    /// Provisioning mode (``ProvisioningRequest/setMode(_:)``): held in RAM, not saved.
    private let provisioningMode = Mutex(false)

    /// Whether the unit is in provisioning mode.
    public var inProvisioningMode: Bool { provisioningMode.withLock { $0 } }

    /// What a restart does to the handler: RAM is lost, so provisioning mode ends.
    public func restarted() {
        provisioningMode.withLock { $0 = false }
    }

    /// Answers one request message with one response message.
    public func handle(request: [UInt8]) -> [UInt8] {
        let message: RequestMessage
        do {
            message = try RequestMessage.decode(request)
        } catch {
            let header = try? MessageHeader.decode(request)
            let response = Response.failure(
                opcode: header?.opcode ?? .unspecified, status: StatusCode(for: error), message: error.description)
            return ResponseMessage(id: header?.requestID ?? 0, response: response).encode()
        }
        return ResponseMessage(id: message.id, response: execute(message.command)).encode()
    }

    /// Carries out one decoded command. Changes to the state are saved before the
    /// response is returned; a failed save answers ``StatusCode/storageFailure``.
    public func execute(_ command: Command) -> Response {
        switch command {
        case .identify:
            return .identify(hardware.readerInfo(for: store.state))
        case .echo(let payload):
            return .echo(payload)
        case .setRegion(let region):
            return setRegion(region)
        case .startInventory:
            // The policy is here; the RF loop that then runs the rounds is the device's
            // (EmulatedGrokker starts it when this answers `done`).
            if store.state.userMustSetRegion {
                return .failure(opcode: .startInventory, status: .regionNotSet,
                                message: "set the region before running inventory")
            }
            return .done(.startInventory)
        case .stopInventory:
            return .done(.stopInventory)
        case .getBattery:
            let state = store.state
            let percent = state.batteryPercent
            return .battery(BatteryInfo(
                canScan: percent >= 5, externalPowerIsConnected: false, isCharging: false,
                minutesRemaining: UInt16(Int(hardware.batteryCapacityMinutes) * Int(percent) / 100),
                percentRemaining: percent,
                // A Li-ion cell from 3.30 V empty to 4.20 V full.
                millivolts: UInt16(3300 + 9 * Int(percent))))
        case .getDiagnostics:
            // The counters live in the device's link and RF loop (EmulatedGrokker answers).
            return .diagnostics(ReaderCounters())
        case .tagAccess:
            // Tags are reached through the RF field, which the device's inventory loop owns
            // (EmulatedGrokker answers these while an inventory runs).
            return .tagAccess(.inventoryStopped, words: [])
        case .provisioning(let request):
            return provision(request)
        case .firmware(let request):
            // The loader owns the flash (EmulatedGrokker answers these).
            return .failure(opcode: request.opcode, status: .unsupportedOpcode, message: "this unit has no loader attached")
        case .setGeigerSound, .setFoundSounds, .playSound, .setVolume:
            // The speaker belongs to the device (EmulatedGrokker answers these).
            return .failure(opcode: command.opcode, status: .internalError, message: "no speaker outside a device")
        case .changePower, .setGrokkerPassword, .authenticateGrokker, .grokkerAuthenticationStatus, .startAntennaTuning,
             .stopAntennaTuning, .getAntennaTuning:
            // The radio, the antenna and the link session are the device's (EmulatedGrokker answers these).
            return .failure(opcode: command.opcode, status: .internalError, message: "answered by the device, not the handler")
        }
    }

    /// Stores a region from the catalogue and marks it as chosen by the user. Firmware older
    /// than ``RegionCatalog/minimumFirmwareForSetRegion`` cannot (vendor "firmware does not
    /// support set region").
    private func setRegion(_ region: RegionSetting) -> Response {
        let firmware = store.state.firmwareVersion
        guard firmware >= RegionCatalog.minimumFirmwareForSetRegion else {
            return .failure(opcode: .setRegion, status: .setRegionNotSupported,
                            message: "firmware \(firmware) does not support set region; update to \(RegionCatalog.minimumFirmwareForSetRegion) or later")
        }
        guard let known = RegionCatalog.find(region) else {
            return .failure(opcode: .setRegion, status: .invalidArgument,
                            message: "region \(region.number) '\(region.name)' is not in the region catalogue")
        }
        guard store.state.provisioning.userCanSetRegion else {
            return .failure(opcode: .setRegion, status: .notAllowed, message: "this unit's region is set at the factory")
        }
        let answer = persisting(.setRegion, .identify(hardware.readerInfo(for: store.state))) { state in
            state.region = known.setting
            state.provisioning.userHasSetRegion = true
        }
        if case .failure = answer { return answer }
        return .setRegion(hardware.readerInfo(for: store.state))
    }

    /// The unit's provisioning record as it stands.
    public func provisioningRecord() -> ProvisioningRecord {
        let state = store.state
        return ProvisioningRecord(
            serialNumber: state.serialNumber, hardwareRevision: state.hardwareRevision, antennaType: state.antennaType,
            status: state.provisioningStatus, provisioned: state.provisioning.provisioned,
            userHasSetRegion: state.provisioning.userHasSetRegion, userCanSetRegion: state.provisioning.userCanSetRegion,
            enforceRegion: state.provisioning.enforceRegion, provisioningMode: inProvisioningMode)
    }

    /// Factory provisioning: reads at any time, writes only in provisioning mode, each saved
    /// before the answer.
    private func provision(_ request: ProvisioningRequest) -> Response {
        let opcode = request.opcode
        switch request {
        case .status:
            return .provisioning(provisioningRecord(), for: opcode)
        case .setMode(let on):
            provisioningMode.withLock { $0 = on }
            return .provisioning(provisioningRecord(), for: opcode)
        default:
            break
        }
        guard inProvisioningMode else {
            return .failure(opcode: opcode, status: .notAllowed, message: "enter provisioning mode first")
        }
        if case .setUserHasSetRegion(true) = request, store.state.region == nil {
            return .failure(opcode: opcode, status: .invalidArgument, message: "no region is set")
        }
        let answer = persisting(opcode, .done(opcode)) { state in
            switch request {
            case .registerSerialNumber(let serial):
                state.serialNumber = serial
                state.provisioning.provisioned = true
            case .setAntennaType(let type):
                state.antennaType = type
            case .setHardwareRevision(let revision):
                state.hardwareRevision = revision
            case .setStatus(let status):
                state.provisioningStatus = status
            case .setUserHasSetRegion(let on):
                state.provisioning.userHasSetRegion = on
                if !on { state.region = nil }
            case .status, .setMode:
                break
            }
        }
        if case .failure = answer { return answer }
        return .provisioning(provisioningRecord(), for: opcode)
    }

    /// Applies a state change for `opcode`, answering `success` once it is saved.
    func persisting(_ opcode: Opcode, _ success: Response, change: (inout DeviceState) -> Void) -> Response {
        do {
            try store.update(change)
            return success
        } catch {
            return .failure(opcode: opcode, status: .storageFailure, message: error.description)
        }
    }
}
