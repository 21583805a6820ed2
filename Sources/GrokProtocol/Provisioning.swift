/// Factory provisioning, as the SDK and the emulated unit model it. On the wire it is the
/// vendor's Provision* family (``VendorProvisioning``, docs/vendor-protocol.md section 8);
/// the record is what GetVersion reports.

/// Where a unit stands in its factory life (vendor provisioning status). A number on the
/// wire; values this build does not name are kept as they are.
public struct ProvisioningStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Nothing written yet (0): a unit as it leaves the assembly line.
    public static let none = ProvisioningStatus(rawValue: 0)
    /// The board passed its factory test (1).
    public static let tested = ProvisioningStatus(rawValue: 1)
    /// Fully provisioned and ready to ship (2).
    public static let complete = ProvisioningStatus(rawValue: 2)
    /// Came back from the field for service (3).
    public static let returned = ProvisioningStatus(rawValue: 3)

    /// The named statuses, in order.
    public static let named: [ProvisioningStatus] = [.none, .tested, .complete, .returned]

    /// A stable lower-case name (`none`, `tested`, `complete`, `returned`, or `status_N`).
    public var name: String {
        switch rawValue {
        case 0: "none"
        case 1: "tested"
        case 2: "complete"
        case 3: "returned"
        default: "status_\(rawValue)"
        }
    }

    /// The status with this name (or number, as text).
    public init?(name: String) {
        guard let match = Self.named.first(where: { $0.name == name }) ?? UInt8(name).map(ProvisioningStatus.init(rawValue:))
        else { return nil }
        self = match
    }

    public var description: String { name }
}

/// What a unit's factory provisioning holds (the answer to every ``ProvisioningRequest``).
///
/// Wire layout: `u32` serial number, `u8` hardware revision, `u8` antenna type, `u8`
/// provisioning status, `u8` flags (bit 0 provisioned, bit 1 user has set region, bit 2
/// user can set region, bit 3 region enforced, bit 4 in provisioning mode).
public struct ProvisioningRecord: Sendable, Hashable {
    /// The registered serial number.
    public var serialNumber: UInt32
    /// The board revision the unit reports.
    public var hardwareRevision: UInt8
    /// The antenna fitted (0 = not set).
    public var antennaType: UInt8
    /// The provisioning status.
    public var status: ProvisioningStatus
    /// A serial number is registered (vendor provisioned).
    public var provisioned: Bool
    /// The user has set the region (vendor "user has set region").
    public var userHasSetRegion: Bool
    /// The user may choose the region.
    public var userCanSetRegion: Bool
    /// The hardware requires a region before it scans.
    public var enforceRegion: Bool
    /// The unit is in provisioning mode (writes allowed).
    public var provisioningMode: Bool

    /// Creates a record.
    public init(serialNumber: UInt32, hardwareRevision: UInt8, antennaType: UInt8, status: ProvisioningStatus,
                provisioned: Bool, userHasSetRegion: Bool, userCanSetRegion: Bool, enforceRegion: Bool,
                provisioningMode: Bool) {
        self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision
        self.antennaType = antennaType
        self.status = status
        self.provisioned = provisioned
        self.userHasSetRegion = userHasSetRegion
        self.userCanSetRegion = userCanSetRegion
        self.enforceRegion = enforceRegion
        self.provisioningMode = provisioningMode
    }

    /// Bytes on the wire.
    public static let wireSize = 8

}
