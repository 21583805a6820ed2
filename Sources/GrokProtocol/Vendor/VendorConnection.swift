/// Flags of the GetVersion request's last byte.
public struct VendorVersionRequestFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The host runs in provisioning mode (the byte is `01`; region enforcement is then not sent).
    public static let provisioningMode = VendorVersionRequestFlags(rawValue: 0x01)
    /// The host enforces that a region is set (the default: the byte is `02`).
    public static let enforceRegion = VendorVersionRequestFlags(rawValue: 0x02)
}

/// GetVersion (0x00) request: `[host protocol, 2 bytes][latency ms LE16][flags]`, seen on the
/// wire as `06 14 e8 03 02` (protocol 20, 500 + 500 ms, region enforced).
public struct VendorVersionRequest: Sendable, Hashable {
    /// The protocol version the host speaks (20 for SDK 1.7.16).
    public var hostProtocol: Int
    /// The platform's input plus output audio latency in ms.
    public var latencyMs: UInt16
    public var flags: VendorVersionRequestFlags

    public init(hostProtocol: Int = 20, latencyMs: UInt16 = 1000, flags: VendorVersionRequestFlags = .enforceRegion) {
        self.hostProtocol = hostProtocol
        self.latencyMs = latencyMs
        self.flags = flags
    }

    public func encode() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter()
        w.raw(try VendorUnits.versionBytes(hostProtocol, field: "getVersion.hostProtocol"))
        w.u16(latencyMs)
        w.u8(flags.rawValue)
        return w.bytes
    }

    public init(decoding payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        let b0 = try r.u8("getVersion.hostProtocol")
        let b1 = try r.u8("getVersion.hostProtocol")
        hostProtocol = try VendorUnits.version(b0, b1, field: "getVersion.hostProtocol")
        latencyMs = try r.u16("getVersion.latencyMs")
        flags = VendorVersionRequestFlags(rawValue: try r.u8("getVersion.flags"))
        try r.finish("GetVersion request")
    }
}

/// What kind of software a reader runs (GetVersion byte 13; ChangeSoftwareType's target).
public enum VendorSoftwareType: UInt8, Sendable, Hashable, CaseIterable {
    /// The reader application.
    case application = 0
    /// The loader (the firmware updater).
    case loader = 1
}

/// GetVersion (0x00) response, 31 bytes. Field offsets from the reference (seen on the wire);
/// the host asks for up to 32 bytes and requires reader protocol > 10.
public struct VendorReaderVersion: Sendable, Hashable {
    /// The number of bytes of this response.
    public static let byteCount = 31

    /// [0..1] the reader's protocol version (two-byte version form).
    public var protocolVersion: Int
    /// [2..3] hardware type, LE16.
    public var hardwareType: UInt16
    /// [4] hardware revision.
    public var hardwareRevision: UInt8
    /// [5..7] firmware major, minor, build.
    public var firmwareMajor: UInt8
    public var firmwareMinor: UInt8
    public var firmwareBuild: UInt8
    /// [8] antenna type.
    public var antennaType: UInt8
    /// [9] maximum power, power byte `(dBm - 5) * 10`.
    public var maxPowerByte: UInt8
    /// [10] maximum sensitivity, negated (byte 85 is -85 dB).
    public var minusMaxSensitivity: UInt8
    /// [11] number of volume levels.
    public var volumeLevels: UInt8
    /// [12] device flags; bit 7: the user has set the region.
    public var deviceFlags: UInt8
    /// [13] software type: 0 application, 1 loader; other values are kept as read.
    public var softwareType: UInt8
    /// [14] largest ProgramReader chunk, bytes.
    public var maxProgramBytes: UInt8
    /// [15] provisioning status.
    public var provisioningStatus: UInt8
    /// [16..23] internal id, LE64.
    public var internalId: UInt64
    /// [24..27] serial number, LE32.
    public var serialNumber: UInt32
    /// [28] initialization status.
    public var initStatus: UInt8
    /// [29] the most tones a sound may have.
    public var maxTones: UInt8
    /// [30] index of the region the reader is set to.
    public var regionIndex: UInt8

    public init(protocolVersion: Int, hardwareType: UInt16, hardwareRevision: UInt8, firmwareMajor: UInt8,
                firmwareMinor: UInt8, firmwareBuild: UInt8, antennaType: UInt8, maxPowerByte: UInt8,
                minusMaxSensitivity: UInt8, volumeLevels: UInt8, deviceFlags: UInt8, softwareType: UInt8,
                maxProgramBytes: UInt8, provisioningStatus: UInt8, internalId: UInt64, serialNumber: UInt32,
                initStatus: UInt8, maxTones: UInt8, regionIndex: UInt8) {
        self.protocolVersion = protocolVersion
        self.hardwareType = hardwareType
        self.hardwareRevision = hardwareRevision
        self.firmwareMajor = firmwareMajor
        self.firmwareMinor = firmwareMinor
        self.firmwareBuild = firmwareBuild
        self.antennaType = antennaType
        self.maxPowerByte = maxPowerByte
        self.minusMaxSensitivity = minusMaxSensitivity
        self.volumeLevels = volumeLevels
        self.deviceFlags = deviceFlags
        self.softwareType = softwareType
        self.maxProgramBytes = maxProgramBytes
        self.provisioningStatus = provisioningStatus
        self.internalId = internalId
        self.serialNumber = serialNumber
        self.initStatus = initStatus
        self.maxTones = maxTones
        self.regionIndex = regionIndex
    }

    /// Device flags bit 7.
    public var userHasSetRegion: Bool { deviceFlags & 0x80 != 0 }
    /// The maximum power in dBm.
    public var maxPowerDBm: Double { VendorUnits.dBm(powerByte: maxPowerByte) }
    /// The maximum sensitivity in dB (negative).
    public var maxSensitivityDB: Int { -Int(minusMaxSensitivity) }
    /// The library's name for the hardware type (`DeviceGetHardwareTypeName` 0x1bcf0, pointer
    /// table at 0x29be0): 1 ProtoSilabs, 2 ProtoRoger, 3 ProtoMicro, 4 ProtoArnie, 5 GR-1;
    /// anything else "Illegal Device #".
    public var hardwareTypeName: String {
        switch hardwareType {
        case 1: "ProtoSilabs"
        case 2: "ProtoRoger"
        case 3: "ProtoMicro"
        case 4: "ProtoArnie"
        case 5: "GR-1"
        default: "Illegal Device #"
        }
    }

    /// The software type, if it is one the library names.
    public var software: VendorSoftwareType? { VendorSoftwareType(rawValue: softwareType) }

    /// The lowest reader protocol the vendor host accepts (it requires more than 10).
    public static let minimumAcceptedProtocol = 11

    /// Library rule (reference section 6): the firmware allows SetRegion from reader protocol 19.
    public var firmwareAllowsSetRegion: Bool { protocolVersion >= 19 }
    /// Library rule: hardware revisions above 5 require a region to be set.
    public var hardwareRequiresSetRegion: Bool { hardwareRevision > 5 }
    /// Library rule: the user can set the region on the application when the firmware allows it.
    public var userCanSetRegion: Bool { softwareType == 0 && firmwareAllowsSetRegion }
    /// Library rule: the user must set it when they can, the hardware requires it, it is not set
    /// yet, and the host enforces regions.
    public func userMustSetRegion(enforceRegion: Bool) -> Bool {
        userCanSetRegion && hardwareRequiresSetRegion && !userHasSetRegion && enforceRegion
    }

    public func encode() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter(capacity: Self.byteCount)
        w.raw(try VendorUnits.versionBytes(protocolVersion, field: "version.protocolVersion"))
        w.u16(hardwareType)
        w.u8(hardwareRevision)
        w.u8(firmwareMajor)
        w.u8(firmwareMinor)
        w.u8(firmwareBuild)
        w.u8(antennaType)
        w.u8(maxPowerByte)
        w.u8(minusMaxSensitivity)
        w.u8(volumeLevels)
        w.u8(deviceFlags)
        w.u8(softwareType)
        w.u8(maxProgramBytes)
        w.u8(provisioningStatus)
        w.u64(internalId)
        w.u32(serialNumber)
        w.u8(initStatus)
        w.u8(maxTones)
        w.u8(regionIndex)
        return w.bytes
    }

    public init(decoding data: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(data)
        let b0 = try r.u8("version.protocolVersion")
        let b1 = try r.u8("version.protocolVersion")
        protocolVersion = try VendorUnits.version(b0, b1, field: "version.protocolVersion")
        hardwareType = try r.u16("version.hardwareType")
        hardwareRevision = try r.u8("version.hardwareRevision")
        firmwareMajor = try r.u8("version.firmwareMajor")
        firmwareMinor = try r.u8("version.firmwareMinor")
        firmwareBuild = try r.u8("version.firmwareBuild")
        antennaType = try r.u8("version.antennaType")
        maxPowerByte = try r.u8("version.maxPower")
        minusMaxSensitivity = try r.u8("version.maxSensitivity")
        volumeLevels = try r.u8("version.volumeLevels")
        deviceFlags = try r.u8("version.deviceFlags")
        softwareType = try r.u8("version.softwareType")
        maxProgramBytes = try r.u8("version.maxProgramBytes")
        provisioningStatus = try r.u8("version.provisioningStatus")
        internalId = try r.u64("version.internalId")
        serialNumber = try r.u32("version.serialNumber")
        initStatus = try r.u8("version.initStatus")
        maxTones = try r.u8("version.maxTones")
        regionIndex = try r.u8("version.regionIndex")
        try r.finish("GetVersion response")
    }
}

/// Echo (0x0c): AutoConfig's link test. The host sends random bytes (100 in AutoConfig) and
/// the reader answers with the same bytes.
public struct VendorEcho: Sendable, Hashable {
    public var data: [UInt8]

    public init(_ data: [UInt8]) throws(VendorCommandError) {
        guard data.count <= VendorWireLimits.maxPayloadBytes else {
            throw .tooLong(field: "echo.data", length: data.count, limit: VendorWireLimits.maxPayloadBytes)
        }
        self.data = data
    }

    /// The number of bytes AutoConfig echoes per round.
    public static let autoConfigBytes = 100
}
