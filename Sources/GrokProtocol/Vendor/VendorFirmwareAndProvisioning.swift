/// ProgramReader (0x01): `[addr LE16]` starts (erases) an image at an address; `[addr LE16][data]`
/// writes a chunk of at most the reader's max program bytes (GetVersion byte 14). Each is
/// answered ACK_0 (`CommandProgramReader`, 0x13de0).
public struct VendorProgramReader: Sendable, Hashable {
    public var address: UInt16
    /// Empty for the start/erase form.
    public var data: [UInt8]

    public init(address: UInt16, data: [UInt8] = []) throws(VendorCommandError) {
        guard data.count <= VendorWireLimits.maxPayloadBytes - 2 else {
            throw .tooLong(field: "programReader.data", length: data.count, limit: VendorWireLimits.maxPayloadBytes - 2)
        }
        self.address = address
        self.data = data
    }

    public var isStart: Bool { data.isEmpty }

    public func encode() -> [UInt8] {
        var w = VendorWriter(capacity: 2 + data.count)
        w.u16(address)
        w.raw(data)
        return w.bytes
    }

    public init(decoding payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        let address = try r.u16("programReader.address")
        try self.init(address: address, data: r.rest())
    }
}

/// ChangeSoftwareType (0x02): `[len LE16][CRC16 LE][type][CRC32 LE][00]`, 10 bytes, sent with
/// a 500 ms timeout after an image is written (`CommandChangeSoftwareType`, 0x13f10; seen
/// `28 00 62 68 01 f4 8d 1a 02 00` for a loader). The CRC-16 is CRC-16/MCRF4XX (init 0xFFFF)
/// and the CRC-32 CRC-32/MPEG-2, both over the image.
public struct VendorChangeSoftwareType: Sendable, Hashable {
    /// The image length field as sent (the seen vector's 0x0028 for a 40-byte image).
    public var length: UInt16
    public var crc16: UInt16
    /// The software to run next (0 application, 1 loader; kept raw).
    public var targetType: UInt8
    public var crc32: UInt32
    /// The last byte; always 0 from the library (meaning unknown).
    public var reserved: UInt8

    public init(length: UInt16, crc16: UInt16, targetType: UInt8, crc32: UInt32, reserved: UInt8 = 0) {
        self.length = length
        self.crc16 = crc16
        self.targetType = targetType
        self.crc32 = crc32
        self.reserved = reserved
    }

    /// The request for `image`, checksums computed as the library does.
    public init(image: [UInt8], target: VendorSoftwareType) throws(VendorCommandError) {
        guard image.count <= Int(UInt16.max) else {
            throw .tooLong(field: "changeSoftwareType.image", length: image.count, limit: Int(UInt16.max))
        }
        self.init(length: UInt16(image.count), crc16: VendorChecksums.crc16MCRF4XX(image), targetType: target.rawValue,
                  crc32: VendorChecksums.crc32MPEG2(image))
    }

    public func encode() -> [UInt8] {
        var w = VendorWriter(capacity: 10)
        w.u16(length)
        w.u16(crc16)
        w.u8(targetType)
        w.u32(crc32)
        w.u8(reserved)
        return w.bytes
    }

    public init(decoding payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        length = try r.u16("changeSoftwareType.length")
        crc16 = try r.u16("changeSoftwareType.crc16")
        targetType = try r.u8("changeSoftwareType.type")
        crc32 = try r.u32("changeSoftwareType.crc32")
        reserved = try r.u8("changeSoftwareType.reserved")
        try r.finish("ChangeSoftwareType request")
    }
}

/// The vendor's two checksums, restated.
public enum VendorChecksums {
    /// CRC-16/MCRF4XX: reflected polynomial 0x8408, init 0xFFFF, no final xor.
    public static func crc16MCRF4XX(_ bytes: some Sequence<UInt8>, initial: UInt16 = 0xFFFF) -> UInt16 {
        var crc = initial
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x8408 : crc >> 1 }
        }
        return crc
    }

    /// CRC-32/MPEG-2: polynomial 0x04C11DB7, init 0xFFFFFFFF, not reflected, no final xor.
    public static func crc32MPEG2(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

/// The version an image carries inside itself: `GROKVER:` then major, minor and build, one
/// byte each. Our demo and test images hold it (the loader and the factory applications); the
/// emulated unit reports the version it finds there, and a host checks it against the
/// `.ugif` header before it sends an image nobody vouches for (docs/firmware-format.md).
public enum ImageVersionMarker {
    /// `GROKVER:`.
    public static let bytes: [UInt8] = Array("GROKVER:".utf8)

    /// The version after the first marker in `image` (major, minor, build), `nil` when it holds none.
    public static func find(in image: some RandomAccessCollection<UInt8>) -> (major: UInt8, minor: UInt8, build: UInt8)? {
        let bytes = Array(image)
        guard bytes.count >= Self.bytes.count + 3 else { return nil }
        for i in 0...(bytes.count - Self.bytes.count - 3) where bytes[i] == Self.bytes[0] {
            if bytes[i..<(i + Self.bytes.count)].elementsEqual(Self.bytes) {
                let v = i + Self.bytes.count
                return (bytes[v], bytes[v + 1], bytes[v + 2])
            }
        }
        return nil
    }
}

/// Provisioning (0x04) sub-ops, each answered ACK_0 (`CommandProvision*`, 0x14130-0x145f0).
public enum VendorProvisioning: Sendable, Hashable {
    /// 00: `hwRev batteryConstA batteryConstB serialLE32 internalIdLE64 antenna` (17 bytes with
    /// the sub-op); the constants per revision are ``VendorBatteryCurves/provisioningConstants(hardwareRevision:)``.
    case register(hardwareRevision: UInt8, batteryConstantA: UInt8, batteryConstantB: UInt8, serialNumber: UInt32,
                  internalId: UInt64, antennaType: UInt8)
    /// 01: `[status]`.
    case setStatus(UInt8)
    /// 02: `[antenna type]`.
    case setAntennaType(UInt8)
    /// 03: `[0|1]` user has set region (reader protocol >= 18; the library skips it when unchanged).
    case setUserHasSetRegion(Bool)
    /// 04: `[hardware revision]` (reader protocol >= 19).
    case setHardwareRevision(UInt8)

    public var subOp: UInt8 {
        switch self {
        case .register: 0
        case .setStatus: 1
        case .setAntennaType: 2
        case .setUserHasSetRegion: 3
        case .setHardwareRevision: 4
        }
    }

    public func encode() -> [UInt8] {
        var w = VendorWriter(capacity: 17)
        w.u8(subOp)
        switch self {
        case .register(let revision, let a, let b, let serial, let internalId, let antenna):
            w.u8(revision)
            w.u8(a)
            w.u8(b)
            w.u32(serial)
            w.u64(internalId)
            w.u8(antenna)
        case .setStatus(let value), .setAntennaType(let value), .setHardwareRevision(let value):
            w.u8(value)
        case .setUserHasSetRegion(let value):
            w.bool(value)
        }
        return w.bytes
    }

    public init(decoding payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        let subOp = try r.u8("provisioning.subOp")
        switch subOp {
        case 0:
            self = .register(hardwareRevision: try r.u8("register.hardwareRevision"),
                             batteryConstantA: try r.u8("register.batteryConstantA"),
                             batteryConstantB: try r.u8("register.batteryConstantB"),
                             serialNumber: try r.u32("register.serialNumber"), internalId: try r.u64("register.internalId"),
                             antennaType: try r.u8("register.antennaType"))
        case 1: self = .setStatus(try r.u8("provisioning.status"))
        case 2: self = .setAntennaType(try r.u8("provisioning.antennaType"))
        case 3: self = .setUserHasSetRegion(try r.bool("provisioning.userHasSetRegion"))
        case 4: self = .setHardwareRevision(try r.u8("provisioning.hardwareRevision"))
        default: throw .unknownValue(field: "provisioning.subOp", value: Int(subOp))
        }
        try r.finish("provisioning request")
    }
}

/// SetRegion (0x11): 123 bytes, the CRC-32/MPEG-2 (LE) of the next 119 bytes, then the first
/// 119 bytes of the 120-byte region entry (`CommandSetRegion` checksums 0x77 bytes, 0x15fd1).
/// The entry's content belongs to the region layer; here it is bytes.
public struct VendorSetRegion: Sendable, Hashable {
    public static let entryBytes = 120
    public static let sentEntryBytes = 119

    /// The 119 entry bytes sent (an entry's last byte is not sent).
    public var entry: [UInt8]

    /// From a full 120-byte entry (its last byte is dropped) or the 119 bytes that are sent.
    public init(entry: [UInt8]) throws(VendorCommandError) {
        guard entry.count == Self.entryBytes || entry.count == Self.sentEntryBytes else {
            throw .inconsistent(field: "setRegion.entry bytes", declared: Self.entryBytes, actual: entry.count)
        }
        self.entry = Array(entry.prefix(Self.sentEntryBytes))
    }

    public var crc32: UInt32 { VendorChecksums.crc32MPEG2(entry) }

    public func encode() -> [UInt8] {
        var w = VendorWriter(capacity: 123)
        w.u32(crc32)
        w.raw(entry)
        return w.bytes
    }

    /// The device side: checks the CRC and the length.
    public init(decoding payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        let crc = try r.u32("setRegion.crc32")
        let entry = try r.raw(Self.sentEntryBytes, "setRegion.entry")
        try r.finish("SetRegion request")
        let actual = VendorChecksums.crc32MPEG2(entry)
        guard crc == actual else {
            throw .inconsistent(field: "setRegion.crc32", declared: Int(crc), actual: Int(actual))
        }
        self.entry = entry
    }
}
