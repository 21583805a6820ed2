/// The factory provisioning commands (opcodes 0x05xx, vendor "provisioning mode", "register",
/// "set antenna type", "set hardware revision", "set provisioning status", "set
/// user-has-set-region"). A station reads the record at any time; it writes only after
/// entering provisioning mode, which lasts until it is left or the unit restarts. The bytes
/// are in docs/protocol.md ("Factory provisioning").

extension Opcode {
    /// ``ProvisioningRequest/status``.
    public static let provisioningStatus = Opcode(rawValue: 0x0501)
    /// ``ProvisioningRequest/setMode(_:)``.
    public static let provisioningMode = Opcode(rawValue: 0x0502)
    /// ``ProvisioningRequest/registerSerialNumber(_:)``.
    public static let registerSerialNumber = Opcode(rawValue: 0x0503)
    /// ``ProvisioningRequest/setAntennaType(_:)``.
    public static let setAntennaType = Opcode(rawValue: 0x0504)
    /// ``ProvisioningRequest/setHardwareRevision(_:)``.
    public static let setHardwareRevision = Opcode(rawValue: 0x0505)
    /// ``ProvisioningRequest/setStatus(_:)``.
    public static let setProvisioningStatus = Opcode(rawValue: 0x0506)
    /// ``ProvisioningRequest/setUserHasSetRegion(_:)``.
    public static let setUserHasSetRegion = Opcode(rawValue: 0x0507)
}

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

/// A request of the factory-provisioning family, answered by the unit's
/// ``ProvisioningRecord`` as it stands afterwards.
public enum ProvisioningRequest: Sendable, Hashable {
    /// Reads the record; allowed at any time.
    case status
    /// Enters (`true`) or leaves (`false`) provisioning mode. Writes are refused with
    /// ``StatusCode/notAllowed`` outside it. The mode is not saved: a restart leaves it.
    case setMode(Bool)
    /// Registers the unit's serial number (it then reports it, and counts as provisioned).
    case registerSerialNumber(UInt32)
    /// Stores the antenna fitted (0 = not set; the numbers are the manufacturer's).
    case setAntennaType(UInt8)
    /// Stores the board revision the unit reports.
    case setHardwareRevision(UInt8)
    /// Stores the provisioning status.
    case setStatus(ProvisioningStatus)
    /// Sets or clears the "user has set region" flag. Clearing it also forgets the region
    /// (back to out of the box: the unit refuses inventory until a region is set); setting
    /// it needs a region set (``StatusCode/invalidArgument`` otherwise).
    case setUserHasSetRegion(Bool)

    /// The request's number.
    public var opcode: Opcode {
        switch self {
        case .status: .provisioningStatus
        case .setMode: .provisioningMode
        case .registerSerialNumber: .registerSerialNumber
        case .setAntennaType: .setAntennaType
        case .setHardwareRevision: .setHardwareRevision
        case .setStatus: .setProvisioningStatus
        case .setUserHasSetRegion: .setUserHasSetRegion
        }
    }

    /// Whether `opcode` is one of this family's.
    static func handles(_ opcode: Opcode) -> Bool {
        (Opcode.provisioningStatus.rawValue...Opcode.setUserHasSetRegion.rawValue).contains(opcode.rawValue)
    }

    func write(to writer: inout ByteWriter) {
        switch self {
        case .status: break
        case .setMode(let on): writer.u8(on ? 1 : 0)
        case .registerSerialNumber(let serial): writer.u32(serial)
        case .setAntennaType(let type): writer.u8(type)
        case .setHardwareRevision(let revision): writer.u8(revision)
        case .setStatus(let status): writer.u8(status.rawValue)
        case .setUserHasSetRegion(let on): writer.u8(on ? 1 : 0)
        }
    }

    static func read(opcode: Opcode, from reader: inout ByteReader) throws(ProtocolError) -> ProvisioningRequest {
        func flag(_ field: String) throws(ProtocolError) -> Bool {
            let value = try reader.u8(field)
            guard value <= 1 else { throw .invalidValue(field: field, value: Int(value)) }
            return value == 1
        }
        switch opcode {
        case .provisioningStatus: return .status
        case .provisioningMode: return .setMode(try flag("provisioningMode.on"))
        case .registerSerialNumber: return .registerSerialNumber(try reader.u32("registerSerialNumber.serial"))
        case .setAntennaType: return .setAntennaType(try reader.u8("setAntennaType.type"))
        case .setHardwareRevision: return .setHardwareRevision(try reader.u8("setHardwareRevision.revision"))
        case .setProvisioningStatus: return .setStatus(ProvisioningStatus(rawValue: try reader.u8("setProvisioningStatus.status")))
        case .setUserHasSetRegion: return .setUserHasSetRegion(try flag("setUserHasSetRegion.on"))
        default: throw .unknownOpcode(opcode.rawValue)
        }
    }
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

    func write(to writer: inout ByteWriter) {
        writer.u32(serialNumber)
        writer.u8(hardwareRevision)
        writer.u8(antennaType)
        writer.u8(status.rawValue)
        var flags: UInt8 = 0
        if provisioned { flags |= 0x01 }
        if userHasSetRegion { flags |= 0x02 }
        if userCanSetRegion { flags |= 0x04 }
        if enforceRegion { flags |= 0x08 }
        if provisioningMode { flags |= 0x10 }
        writer.u8(flags)
    }

    static func read(from reader: inout ByteReader) throws(ProtocolError) -> ProvisioningRecord {
        let serial = try reader.u32("provisioning.serialNumber")
        let revision = try reader.u8("provisioning.hardwareRevision")
        let antenna = try reader.u8("provisioning.antennaType")
        let status = ProvisioningStatus(rawValue: try reader.u8("provisioning.status"))
        let flags = try reader.u8("provisioning.flags")
        return ProvisioningRecord(
            serialNumber: serial, hardwareRevision: revision, antennaType: antenna, status: status,
            provisioned: flags & 0x01 != 0, userHasSetRegion: flags & 0x02 != 0, userCanSetRegion: flags & 0x04 != 0,
            enforceRegion: flags & 0x08 != 0, provisioningMode: flags & 0x10 != 0)
    }
}
