import GrokFirmware
import GrokProtocol

// The vendor's names for what UGrokIt has as Swift types, so that code ported from the iOS
// SDK compiles: its enum and class names as aliases of the Swift types, its C constants as
// constants of the Swift enums (each is the enum's case,
// `UGI_INVENTORY_TYPE_LOCATE_DISTANCE == UgiInventoryType.locateDistance`), and the reader
// facts `Ugi` exposed one by one, from `readerInfo`. The vendor answers 0, NO or nil before
// a reader has connected; these are `nil` then (docs/vendor-api.md).

public typealias UgiConnectionStates = ConnectionState
public typealias UgiReaderHardwareTypes = HardwareType
public typealias UgiSpeakerTone = UgiTone
public typealias UgiDiagnosticData = UgiDiagnostics
public typealias UgiBatteryInfo = BatteryInfo
public typealias UgiPlaySoundSoundTypes = UgiSound
public typealias UgiLoggingTypes = UgiLoggingCategory
public typealias UgiTagAccessReturnValues = TagAccessStatus
public typealias UgiInventoryCompletedReturnValues = InventoryStopReason
public typealias UgiSoundTypes = UgiSoundType
public typealias UgiInventoryTypes = UgiInventoryType
public typealias UgiFirmwareUpdateCompatibilityValues = FirmwareCompatibility
public typealias UgiFirmwareUpdateReturnValues = FirmwareUpdateResult

public let UGI_CONNECTION_STATE_NOT_CONNECTED = ConnectionState.notConnected
public let UGI_CONNECTION_STATE_CONNECTING = ConnectionState.connecting
public let UGI_CONNECTION_STATE_INCOMPATIBLE_READER = ConnectionState.incompatible
public let UGI_CONNECTION_STATE_CONNECTED = ConnectionState.connected
public let UGI_READER_HARDWARE_UNKNOWN = HardwareType.unknown
public let UGI_READER_HARDWARE_GROKKER_1 = HardwareType.grokker1
public let UGI_PLAY_SOUND_FOUND_LAST = UgiSound.foundLast
public let UGI_LOGGING_INTERNAL_BYTE_PROTOCOL = UgiLoggingCategory.byteProtocol
public let UGI_LOGGING_INTERNAL_CONNECTION_ERRORS = UgiLoggingCategory.connectionErrors
public let UGI_LOGGING_INTERNAL_CONNECTION_STATE = UgiLoggingCategory.connectionState
public let UGI_LOGGING_INTERNAL_PACKET_PROTOCOL = UgiLoggingCategory.packetProtocol
public let UGI_LOGGING_INTERNAL_COMMAND = UgiLoggingCategory.command
public let UGI_LOGGING_INTERNAL_INVENTORY = UgiLoggingCategory.inventory
public let UGI_LOGGING_INTERNAL_FIRMWARE_UPDATE = UgiLoggingCategory.firmwareUpdate
public let UGI_LOGGING_STATE = UgiLoggingCategory.state
public let UGI_LOGGING_INVENTORY = UgiLoggingCategory.inventoryEvents
public let UGI_LOGGING_INVENTORY_DETAIL = UgiLoggingCategory.inventoryDetail
public let UGI_MIN_EPC_LENGTH = UgiEpc.minByteCount
public let UGI_MAX_EPC_LENGTH = UgiEpc.maxByteCount
public let UGI_STANDARD_EPC_LENGTH = UgiEpc.standardByteCount
public let UGI_TAG_ACCESS_OK = TagAccessStatus.ok
public let UGI_TAG_ACCESS_WRONG_PASSWORD = TagAccessStatus.wrongPassword
public let UGI_TAG_ACCESS_PASSWORD_REQUIRED = TagAccessStatus.passwordRequired
public let UGI_TAG_ACCESS_MEMORY_OVERRUN = TagAccessStatus.memoryOverrun
public let UGI_TAG_ACCESS_TAG_NOT_FOUND = TagAccessStatus.tagNotFound
public let UGI_TAG_ACCESS_GENERAL_ERROR = TagAccessStatus.generalError
public let UGI_INVENTORY_COMPLETED_OK = InventoryStopReason.ok
public let UGI_INVENTORY_COMPLETED_ERROR_SENDING = InventoryStopReason.errorSending
public let UGI_INVENTORY_COMPLETED_LOST_CONNECTION = InventoryStopReason.lostConnection
public let UGI_INVENTORY_COMPLETED_SPI_NOT_WORKING = InventoryStopReason.spiNotWorking
public let UGI_INVENTORY_COMPLETED_ENABLE_PIN_NOT_WORKING = InventoryStopReason.enablePinNotWorking
public let UGI_INVENTORY_COMPLETED_INTERRUPT_PIN_NOT_WORKING = InventoryStopReason.interruptPinNotWorking
public let UGI_INVENTORY_COMPLETED_WRONG_CHIP_VERSION = InventoryStopReason.wrongChipVersion
public let UGI_INVENTORY_COMPLETED_CRYSTAL_NOT_STABLE = InventoryStopReason.crystalNotStable
public let UGI_INVENTORY_COMPLETED_PLL_NOT_LOCKED = InventoryStopReason.pllNotLocked
public let UGI_INVENTORY_COMPLETED_BATTERY_TOO_LOW = InventoryStopReason.batteryTooLow
public let UGI_INVENTORY_COMPLETED_TEMPERATURE_TOO_HIGH = InventoryStopReason.temperatureTooHigh
public let UGI_INVENTORY_COMPLETED_NOT_PROVISIONED = InventoryStopReason.notProvisioned
public let UGI_INVENTORY_COMPLETED_REGION_NOT_SET = InventoryStopReason.regionNotSet
public let MAX_RFID_CONFIGURATION_MASK_LENGTH_BYTES = UgiRfidConfiguration.maxSelectMaskBytes
public let UGI_MEMORY_BANK_RESERVED = UgiMemoryBank.reserved
public let UGI_MEMORY_BANK_EPC = UgiMemoryBank.epc
public let UGI_MEMORY_BANK_TID = UgiMemoryBank.tid
public let UGI_MEMORY_BANK_USER = UgiMemoryBank.user
public let UGI_INVENTORY_SOUNDS_NONE = UgiSoundType.none
public let UGI_INVENTORY_SOUNDS_GEIGER_COUNTER = UgiSoundType.geigerCounter
public let UGI_INVENTORY_SOUNDS_FIRST_FIND = UgiSoundType.firstFind
public let UGI_INVENTORY_SOUNDS_FIRST_FIND_AND_LAST = UgiSoundType.firstFindAndLast
public let UGI_INVENTORY_TYPE_LOCATE_DISTANCE = UgiInventoryType.locateDistance
public let UGI_INVENTORY_TYPE_INVENTORY_SHORT_RANGE = UgiInventoryType.inventoryShortRange
public let UGI_INVENTORY_TYPE_INVENTORY_DISTANCE = UgiInventoryType.inventoryDistance
public let UGI_INVENTORY_TYPE_LOCATE_SHORT_RANGE = UgiInventoryType.locateShortRange
public let UGI_INVENTORY_TYPE_LOCATE_VERY_SHORT_RANGE = UgiInventoryType.locateVeryShortRange
public let FIRMWARE_COMPATIBILITY_INVALID = FirmwareCompatibility.invalid
public let FIRMWARE_COMPATIBILITY_INCOMPATIBLE = FirmwareCompatibility.incompatible
public let FIRMWARE_COMPATIBILITY_DOWNGRADE = FirmwareCompatibility.downgrade
public let FIRMWARE_COMPATIBILITY_SAME_VERSION = FirmwareCompatibility.sameVersion
public let FIRMWARE_COMPATIBILITY_UPGRADE = FirmwareCompatibility.upgrade
public let UGI_FIRMWARE_UPDATE_SUCCESS = FirmwareUpdateResult.success
public let UGI_FIRMWARE_UPDATE_NO_FILE = FirmwareUpdateResult.noFile
public let UGI_FIRMWARE_UPDATE_BAD_FILE = FirmwareUpdateResult.badFile
public let UGI_FIRMWARE_UPDATE_INCOMPATIBLE_HARDWARE = FirmwareUpdateResult.incompatibleHardware
public let UGI_FIRMWARE_UPDATE_INCOMPATIBLE_VERSION = FirmwareUpdateResult.incompatibleVersion
public let UGI_FIRMWARE_UPDATE_CRC_MISMATCH = FirmwareUpdateResult.crcMismatch
public let UGI_FIRMWARE_UPDATE_PROTOCOL_FAILURE = FirmwareUpdateResult.protocolFailure
public let UGI_FIRMWARE_UPDATE_CANT_RECONNECT = FirmwareUpdateResult.cantReconnect
public let UGI_FIRMWARE_UPDATE_CANCELLED = FirmwareUpdateResult.cancelled

extension Ugi {
    /// Vendor `readerProtocolVersion` (`nil` until a reader has connected).
    public var readerProtocolVersion: UInt16? { readerInfo?.readerProtocolVersion }
    /// Vendor `readerHardwareModel` (`nil` until a reader has connected).
    public var readerHardwareModel: String? { readerInfo?.hardwareModel }
    /// Vendor `readerHardwareType` (`nil` until a reader has connected).
    public var readerHardwareType: HardwareType? { readerInfo?.hardwareType }
    /// Vendor `readerHardwareTypeName` (`nil` until a reader has connected).
    public var readerHardwareTypeName: String? { readerInfo?.hardwareType.vendorName }
    /// Vendor `readerHardwareRevision` (`nil` until a reader has connected).
    public var readerHardwareRevision: UInt8? { readerInfo?.hardwareRevision }
    /// Vendor `firmwareVersionMajor` (`nil` until a reader has connected).
    public var firmwareVersionMajor: Int? { (readerInfo?.firmwareVersion.major).map { Int($0) } }
    /// Vendor `firmwareVersionMinor` (`nil` until a reader has connected).
    public var firmwareVersionMinor: Int? { (readerInfo?.firmwareVersion.minor).map { Int($0) } }
    /// Vendor `firmwareVersionBuild` (`nil` until a reader has connected).
    public var firmwareVersionBuild: Int? { (readerInfo?.firmwareVersion.build).map { Int($0) } }
    /// Vendor `readerSerialNumber` (`nil` until a reader has connected).
    public var readerSerialNumber: UInt32? { readerInfo?.serialNumber }
    /// Vendor `regionName` (`nil` until a reader has connected).
    public var regionName: String? { readerInfo?.regionName }
    /// Vendor `maxTonesInSound` (`nil` until a reader has connected).
    public var maxTonesInSound: UInt8? { readerInfo?.maxTonesInSound }
    /// Vendor `maxPower` (`nil` until a reader has connected, dBm).
    public var maxPower: Double? { readerInfo?.maxPowerDBm }
    /// Vendor `maxSensitivity` (`nil` until a reader has connected, dBm).
    public var maxSensitivity: Double? { readerInfo?.maxSensitivityDBm }
    /// Vendor `numVolumeLevels` (`nil` until a reader has connected).
    public var numVolumeLevels: UInt8? { readerInfo?.numVolumeLevels }
    /// Vendor `hasBattery` (`nil` until a reader has connected).
    public var hasBattery: Bool? { readerInfo?.hasBattery }
    /// Vendor `hasExternalPower` (`nil` until a reader has connected).
    public var hasExternalPower: Bool? { readerInfo?.hasExternalPower }
    /// Vendor `userMustSetRegion` (`nil` until a reader has connected).
    public var userMustSetRegion: Bool? { readerInfo?.userMustSetRegion }
    /// Vendor `userCanSetRegion` (`nil` until a reader has connected).
    public var userCanSetRegion: Bool? { readerInfo?.userCanSetRegion }
    /// Vendor `batteryCapacity` (`nil` until a reader has connected, minutes).
    public var batteryCapacity: UInt16? { readerInfo?.batteryCapacityMinutes }
    /// Vendor `batteryCapacity_mAh` (`nil` until a reader has connected).
    public var batteryCapacity_mAh: UInt16? { readerInfo?.batteryCapacityMAh }
    /// Vendor `deviceInitializedSuccessfully` (`nil` until a reader has connected).
    public var deviceInitializedSuccessfully: Bool? { readerInfo?.deviceInitializedSuccessfully }
    /// Vendor `readerDescription` (`nil` until a reader has connected).
    public var readerDescription: String? { readerInfo?.description }
}
