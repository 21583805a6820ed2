import GrokProtocol

/// Whether an update may go onto a device, with the vendor's values
/// (`UgiFirmwareCompatibility`).
public enum FirmwareCompatibility: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The update or the device's report cannot be judged (unknown hardware, no revisions
    /// or no applies-to ranges listed).
    case invalid = 0
    /// Other hardware, another revision, a version the update may not be applied on, a
    /// reader protocol this host cannot speak, or a device the update does not target.
    case incompatible = 1
    /// Fits, but is older than what the device runs.
    case downgrade = 2
    /// Fits, and is the version the device runs.
    case sameVersion = 3
    /// Fits, and is newer than what the device runs.
    case upgrade = 4

    /// Whether a flash may proceed: always for ``upgrade``; for ``downgrade`` and
    /// ``sameVersion`` only when allowed; never for ``invalid`` and ``incompatible``.
    public func mayApply(allowDowngrade: Bool, allowSameVersion: Bool) -> Bool {
        switch self {
        case .upgrade: true
        case .downgrade: allowDowngrade
        case .sameVersion: allowSameVersion
        case .invalid, .incompatible: false
        }
    }

    /// The vendor's constant name: `INVALID`, `INCOMPATIBLE`, `DOWNGRADE`, `SAME_VERSION`, `UPGRADE`.
    public var vendorName: String {
        switch self {
        case .invalid: "INVALID"
        case .incompatible: "INCOMPATIBLE"
        case .downgrade: "DOWNGRADE"
        case .sameVersion: "SAME_VERSION"
        case .upgrade: "UPGRADE"
        }
    }

    public var description: String { vendorName }
}

/// What a device reports about itself that decides which firmware fits it.
public struct DeviceIdentity: Sendable, Hashable {
    /// The hardware kind.
    public var hardwareType: HardwareType
    /// The board revision.
    public var hardwareRevision: UInt8
    /// The application firmware it runs.
    public var firmwareVersion: FirmwareVersion
    /// The reader protocol its firmware implements.
    public var readerProtocolVersion: UInt16
    /// Its serial number.
    public var serialNumber: UInt32

    /// Creates an identity.
    public init(hardwareType: HardwareType, hardwareRevision: UInt8, firmwareVersion: FirmwareVersion,
                readerProtocolVersion: UInt16, serialNumber: UInt32) {
        self.hardwareType = hardwareType
        self.hardwareRevision = hardwareRevision
        self.firmwareVersion = firmwareVersion
        self.readerProtocolVersion = readerProtocolVersion
        self.serialNumber = serialNumber
    }

    /// The identity in a device's answer to identify.
    public init(_ info: ReaderInfo) {
        self.init(hardwareType: info.hardwareType, hardwareRevision: info.hardwareRevision,
                  firmwareVersion: info.firmwareVersion, readerProtocolVersion: info.readerProtocolVersion,
                  serialNumber: info.serialNumber)
    }
}

/// The compatibility check.
public enum Compatibility {
    /// The reader protocol versions this host speaks (the vendor's 20).
    public static let hostReaderProtocols: ClosedRange<UInt16> =
        ReaderInfo.vendorReaderProtocolVersion...ReaderInfo.vendorReaderProtocolVersion

    /// How `firmware` relates to `device`:
    /// ``FirmwareCompatibility/invalid`` when either side cannot be judged;
    /// ``FirmwareCompatibility/incompatible`` for other hardware, an unlisted revision, a
    /// running version outside every applies-to range, or a reader protocol outside
    /// `hostProtocols` (the host could not talk to the device afterwards); otherwise
    /// downgrade, same version or upgrade by comparing versions.
    public static func check(
        _ firmware: FirmwareDescriptor, against device: DeviceIdentity,
        hostProtocols: ClosedRange<UInt16> = hostReaderProtocols
    ) -> FirmwareCompatibility {
        guard firmware.hardwareType != .unknown, device.hardwareType != .unknown,
              !firmware.hardwareRevisions.isEmpty, !firmware.appliesTo.isEmpty
        else { return .invalid }
        guard firmware.hardwareType == device.hardwareType,
              firmware.hardwareRevisions.contains(device.hardwareRevision),
              firmware.appliesTo.contains(where: { $0.contains(device.firmwareVersion) }),
              hostProtocols.contains(firmware.readerProtocolVersion)
        else { return .incompatible }
        if firmware.version < device.firmwareVersion { return .downgrade }
        if firmware.version == device.firmwareVersion { return .sameVersion }
        return .upgrade
    }
}
