import GrokBasics
import GrokLink
import GrokProtocol

/// The emulated Grokker's two programs and its flash, on the vendor's update procedure:
/// the application and the loader, each an image in the unit's 16-bit address space, and
/// what ProgramReader (0x01) and ChangeSoftwareType (0x02) do to them.
///
/// The flash file is the only persistent state (a power cut may fall on any sample; see
/// ``FlashMemory``). Layout of the file:
///
/// | offset | what |
/// |---|---|
/// | 0x00000-0x0FFFF | the unit's address space: images at the addresses ProgramReader gives |
/// | 0x10000 | the loader's record (sector) |
/// | 0x11000 | the application's record (sector) |
/// | 0x12000 | the boot request: first byte 0x00 = start the loader |
///
/// A record (``Record``) says where an image is, its length, its two CRCs and its version,
/// with its own CRC-32; an image counts only when its record is whole and the flash holds
/// bytes with that CRC-32. At power-on the unit starts the loader when the boot request is
/// set and the loader is good, else the application when it is good, else the loader.
///
/// Invariants that keep every unit repairable: the program that runs never writes its own
/// sectors (such chunks are refused), the application only erases the loader's record and
/// the loader only the application's; so at every sample at least one good program is in
/// flash. A unit cut off mid-update comes back in whichever is good: in its loader
/// (software type 1, the loader's version) once the application was erased, never
/// reporting a damaged application's version. A flash with neither (erased by hand) starts
/// the boot ROM's loader (software type 1, version 0.0.0), which installs an application.
///
/// The first chunk an upload writes into a sector erases that sector. A chunk whose bytes
/// the flash already holds, in sectors this upload wrote, is acknowledged without writing
/// (a resend after a lost answer). Chunks are accepted only after a start in the same power
/// cycle (the erase state lives in RAM), at or after the start address, at most
/// ``maxProgramBytes`` long.
///
/// Not thread-safe: the device endpoint that owns it drives it.
public final class VendorLoader {
    /// A program's identity as GetVersion bytes 5-7 report it.
    public struct Version: Sendable, Hashable, CustomStringConvertible {
        public var major: UInt8
        public var minor: UInt8
        public var build: UInt8
        public init(_ major: UInt8, _ minor: UInt8, _ build: UInt8) {
            self.major = major
            self.minor = minor
            self.build = build
        }
        public var description: String { "\(major).\(minor).\(build)" }
    }

    /// The emulated unit does not run the code it is sent, so it learns a program's version
    /// from the image: the bytes after ``versionMarker`` (major, minor, build) when the
    /// image holds it (our demo and test images do), else the version `catalogue` lists for
    /// the image's CRC-32 (builds this emulated hardware "knows"), else 0.0.0.
    public struct Configuration: Sendable {
        /// Largest ProgramReader chunk, bytes (GetVersion byte 14); at most 248 (a 250-byte payload).
        public var maxProgramBytes: UInt8
        /// The sample rate of the device clock the flash timings are counted in.
        public var sampleRate: Int
        /// Versions of images without a marker, by CRC-32/MPEG-2 of the image.
        public var catalogue: [UInt32: Version]

        public init(maxProgramBytes: UInt8 = 248, sampleRate: Int = 44_100, catalogue: [UInt32: Version] = [:]) {
            precondition((1...248).contains(maxProgramBytes), "a ProgramReader chunk carries 1 to 248 bytes")
            self.maxProgramBytes = maxProgramBytes
            self.sampleRate = sampleRate
            self.catalogue = catalogue
        }
    }

    /// What a program looks like in a record.
    public struct Record: Sendable, Hashable {
        public var type: VendorSoftwareType
        public var address: UInt16
        public var length: Int
        public var crc16: UInt16
        public var crc32: UInt32
        public var version: Version

        static let magic: [UInt8] = Array("VLDR".utf8)
        static let byteCount = 22

        func encode() -> [UInt8] {
            var b = Self.magic
            b.append(type.rawValue)
            b += [UInt8(address & 0xFF), UInt8(address >> 8), UInt8(length & 0xFF), UInt8(length >> 8)]
            b += [UInt8(crc16 & 0xFF), UInt8(crc16 >> 8)]
            b += (0..<4).map { UInt8(truncatingIfNeeded: crc32 >> (8 * $0)) }
            b += [version.major, version.minor, version.build]
            let check = VendorChecksums.crc32MPEG2(b)
            b += (0..<4).map { UInt8(truncatingIfNeeded: check >> (8 * $0)) }
            return b
        }

        static func decode(_ b: [UInt8]) -> Record? {
            guard b.count >= byteCount, Array(b[0..<4]) == magic else { return nil }
            let check = (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[18 + $1]) << (8 * $1) }
            guard VendorChecksums.crc32MPEG2(b[0..<18]) == check, let type = VendorSoftwareType(rawValue: b[4]) else { return nil }
            let length = Int(b[7]) | Int(b[8]) << 8
            guard length > 0 else { return nil }
            return Record(type: type, address: UInt16(b[5]) | UInt16(b[6]) << 8, length: length,
                          crc16: UInt16(b[9]) | UInt16(b[10]) << 8,
                          crc32: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[11 + $1]) << (8 * $1) },
                          version: Version(b[15], b[16], b[17]))
        }

        var range: Range<Int> { Int(address)..<(Int(address) + length) }
    }

    /// The marker before a version inside an image: `GROKVER:` then major, minor, build
    /// (GrokProtocol's ``ImageVersionMarker``, which a host checks too).
    public static let versionMarker: [UInt8] = ImageVersionMarker.bytes
    /// The unit's address space, bytes.
    public static let addressSpace = 0x1_0000
    static let loaderRecordOffset = 0x10000
    static let applicationRecordOffset = 0x11000
    static let bootRequestOffset = 0x12000
    /// The flash file's size.
    public static let flashBytes = 0x13000

    public let configuration: Configuration
    let flash: FlashMemory

    /// The program the unit runs; `nil` while its power is off.
    public private(set) var softwareType: VendorSoftwareType?
    /// The version of the program the unit runs (GetVersion bytes 5-7).
    public private(set) var runningVersion = Version(0, 0, 0)
    /// The loader's and the application's records as last read or written (nil: not good).
    public private(set) var loaderRecord: Record?
    public private(set) var applicationRecord: Record?
    public var maxProgramBytes: UInt8 { configuration.maxProgramBytes }

    /// The upload under way in this power cycle.
    private var session: (start: UInt16, erased: Set<Int>)?

    /// Opens (or creates, erased) the flash file at `path` and powers the unit on. A new
    /// file holds no program: install them with ``manufacture(loader:application:)``.
    public init(flashPath path: String, configuration: Configuration = .init()) throws(EmulatorError) {
        self.configuration = configuration
        flash = try FlashMemory(path: path, size: Self.flashBytes, sampleRate: configuration.sampleRate)
        powerOn()
    }

    /// The device clock the flash counts in, samples; operations move it forward.
    public var clock: Int64 {
        get { flash.clock }
        set { flash.clock = newValue }
    }

    /// The sample at which the power goes off (any sample, mid-erase or mid-program too).
    public var powerCutAt: Int64? {
        get { flash.powerCutAt }
        set { flash.powerCutAt = newValue }
    }

    /// Whether the unit is off (a power cut fell): it answers nothing until ``powerOn()``.
    public var isPoweredOff: Bool { softwareType == nil }

    // MARK: Factory

    /// Writes a loader and an application straight into flash, as the factory's programmer
    /// does (no power cut), and starts the application.
    public func manufacture(loader: (address: UInt16, bytes: [UInt8]), application: (address: UInt16, bytes: [UInt8]))
        throws(EmulatorError) {
        let saved = powerCutAt
        powerCutAt = nil
        defer { powerCutAt = saved }
        do {
            for offset in stride(from: 0, to: Self.flashBytes, by: FlashMemory.sectorSize) { try flash.eraseSector(at: offset) }
            for (type, image) in [(VendorSoftwareType.loader, loader), (VendorSoftwareType.application, application)] {
                guard !image.bytes.isEmpty, Int(image.address) + image.bytes.count <= Self.addressSpace else {
                    throw EmulatorError.flash(path: flash.path, detail: ErrorDetail("\(type == .loader ? "loader" : "application")_outside_address_space"))
                }
                try flash.program(image.bytes[...], at: Int(image.address))
                try writeRecord(for: type, address: image.address, image: image.bytes)
            }
            try flash.synchronize()
        } catch let error as EmulatorError {
            throw error
        } catch {
            switch error as? FlashMemory.Fault {
            case .storage(let detail): throw .flash(path: flash.path, detail: detail)
            case .powerCut: throw .flash(path: flash.path, detail: ErrorDetail("power_cut"))
            case nil: throw .flash(path: flash.path, detail: ErrorDetail("flash_write_failed"))
            }
        }
        powerOn()
    }

    // MARK: Power

    /// Cuts the power now (the cable pulled from a unit without a battery).
    public func powerOff() {
        softwareType = nil
        session = nil
    }

    /// Powers the unit on (or resets it): forgets the upload, reads both records, checks
    /// both images and starts a program as the type says. A power cut during the checks
    /// leaves the unit off (nothing is written at power-on).
    public func powerOn() {
        session = nil
        softwareType = nil
        do {
            loaderRecord = try checkedRecord(at: Self.loaderRecordOffset, type: .loader)
            applicationRecord = try checkedRecord(at: Self.applicationRecordOffset, type: .application)
        } catch {
            return
        }
        let bootRequested = flash.bytes[Self.bootRequestOffset] != 0xFF
        let choice: Record?
        if bootRequested, let loader = loaderRecord {
            choice = loader
        } else {
            choice = applicationRecord ?? loaderRecord
        }
        // With neither program good (an erased flash: not reachable through the vendor
        // procedure, see the type's invariants) the MCU's boot ROM takes the loader's place,
        // version 0.0.0: it answers as a loader does and installs an application, which is
        // what a loader is for.
        softwareType = choice?.type ?? .loader
        runningVersion = choice?.version ?? Version(0, 0, 0)
    }

    /// Resets the unit (after ChangeSoftwareType): as a power cycle.
    public func reset() { powerOn() }

    // MARK: Requests

    /// ProgramReader: `[addr]` starts an upload (erasing the other program's record), or a
    /// chunk `[addr][data]`. ACK_0 when done, NACK (ACK_7) when refused; `nil` when the power
    /// went off during it (no answer).
    public func programReader(_ request: VendorProgramReader) -> VendorReply? {
        guard let running = softwareType else { return nil }
        let protected = protectedSectors(running: running)
        if request.isStart {
            guard !protected.contains(Int(request.address) / FlashMemory.sectorSize) else { return .nack }
            do {
                try flash.eraseSector(at: recordOffset(of: other(running)))
                try flash.synchronize()
            } catch {
                return fault()
            }
            if running == .application { loaderRecord = nil } else { applicationRecord = nil }
            session = (request.address, [])
            return .ack
        }
        guard var current = session, request.address >= current.start, request.data.count <= Int(maxProgramBytes) else {
            return .nack
        }
        let range = Int(request.address)..<(Int(request.address) + request.data.count)
        guard range.upperBound <= Self.addressSpace else { return .nack }
        let sectors = Set((range.lowerBound / FlashMemory.sectorSize)...((range.upperBound - 1) / FlashMemory.sectorSize))
        guard protected.isDisjoint(with: sectors) else { return .nack }
        // A chunk the flash already holds in sectors this upload has written: a resend
        // after a lost answer; acknowledged, nothing written.
        if sectors.isSubset(of: current.erased), flash.bytes[range].elementsEqual(request.data) { return .ack }
        do {
            // The first chunk into a sector in this upload erases it.
            for sector in sectors.sorted() where !current.erased.contains(sector) {
                try flash.eraseSector(at: sector * FlashMemory.sectorSize)
                current.erased.insert(sector)
                session = current
            }
            session = current
            try flash.program(request.data[...], at: range.lowerBound)
        } catch {
            return fault()
        }
        return flash.bytes[range].elementsEqual(request.data) ? .ack : .nack
    }

    /// ChangeSoftwareType: checks the image just uploaded against both CRCs and the length,
    /// records it, sets (loader) or clears (application) the boot request and asks for a
    /// reset. A mismatch, a type this program cannot install, or no upload: NACK and no
    /// reset. `nil` when the power went off during it.
    public func changeSoftwareType(_ request: VendorChangeSoftwareType) -> (reply: VendorReply, reset: Bool)? {
        guard let running = softwareType else { return nil }
        guard let current = session, let target = VendorSoftwareType(rawValue: request.targetType), target == other(running),
              request.length > 0, Int(current.start) + Int(request.length) <= Self.addressSpace else {
            return (.nack, false)
        }
        let image = Array(flash.bytes[Int(current.start)..<(Int(current.start) + Int(request.length))])
        do {
            try flash.spend(Double(image.count) / FlashMemory.hashBytesPerSecond)
        } catch {
            powerOff()
            return nil
        }
        guard VendorChecksums.crc16MCRF4XX(image) == request.crc16, VendorChecksums.crc32MPEG2(image) == request.crc32 else {
            return (.nack, false)
        }
        do {
            try flash.eraseSector(at: recordOffset(of: target))
            try writeRecord(for: target, address: current.start, image: image)
            if target == .loader {
                try flash.program([UInt8(0)][...], at: Self.bootRequestOffset)
            } else {
                try flash.eraseSector(at: Self.bootRequestOffset)
            }
            try flash.synchronize()
        } catch {
            powerOff()
            return nil
        }
        return (.ack, true)
    }

    /// The version this unit finds in `image` (see ``Configuration``).
    public func version(of image: [UInt8]) -> Version { Self.version(of: image, catalogue: configuration.catalogue) }

    /// The version in `image`: after its ``versionMarker``, else from `catalogue` by CRC-32, else 0.0.0.
    public static func version(of image: [UInt8], catalogue: [UInt32: Version]) -> Version {
        if let found = ImageVersionMarker.find(in: image) { return Version(found.major, found.minor, found.build) }
        return catalogue[VendorChecksums.crc32MPEG2(image)] ?? Version(0, 0, 0)
    }

    /// The whole content of a flash file as the factory's programmer leaves it (what
    /// ``manufacture(loader:application:)`` writes, made in memory so that a new unit's file
    /// can be put in place atomically): both images, their records, no boot request.
    public static func factoryFlash(loader: (address: UInt16, bytes: [UInt8]), application: (address: UInt16, bytes: [UInt8]),
                                    catalogue: [UInt32: Version] = [:]) -> [UInt8] {
        var flash = [UInt8](repeating: 0xFF, count: flashBytes)
        for (type, image) in [(VendorSoftwareType.loader, loader), (VendorSoftwareType.application, application)] {
            precondition(!image.bytes.isEmpty && Int(image.address) + image.bytes.count <= addressSpace,
                         "a factory image fits the 16-bit address space")
            flash.replaceSubrange(Int(image.address)..<(Int(image.address) + image.bytes.count), with: image.bytes)
            let record = Record(type: type, address: image.address, length: image.bytes.count,
                                crc16: VendorChecksums.crc16MCRF4XX(image.bytes), crc32: VendorChecksums.crc32MPEG2(image.bytes),
                                version: version(of: image.bytes, catalogue: catalogue)).encode()
            let offset = type == .loader ? loaderRecordOffset : applicationRecordOffset
            flash.replaceSubrange(offset..<(offset + record.count), with: record)
        }
        return flash
    }

    // MARK: Internals

    private func fault() -> VendorReply? {
        powerOff()
        return nil
    }

    private func other(_ type: VendorSoftwareType) -> VendorSoftwareType { type == .application ? .loader : .application }

    private func recordOffset(of type: VendorSoftwareType) -> Int {
        type == .loader ? Self.loaderRecordOffset : Self.applicationRecordOffset
    }

    /// The sectors of the running program (it never writes them).
    private func protectedSectors(running: VendorSoftwareType) -> Set<Int> {
        guard let record = running == .loader ? loaderRecord : applicationRecord else { return [] }
        return Set((record.range.lowerBound / FlashMemory.sectorSize)...((record.range.upperBound - 1) / FlashMemory.sectorSize))
    }

    private func writeRecord(for type: VendorSoftwareType, address: UInt16, image: [UInt8]) throws(FlashMemory.Fault) {
        let record = Record(type: type, address: address, length: image.count, crc16: VendorChecksums.crc16MCRF4XX(image),
                            crc32: VendorChecksums.crc32MPEG2(image), version: version(of: image))
        try flash.program(record.encode()[...], at: recordOffset(of: type))
        if type == .loader { loaderRecord = record } else { applicationRecord = record }
    }

    /// The record at `offset` when it is whole and the flash holds its image.
    private func checkedRecord(at offset: Int, type: VendorSoftwareType) throws(FlashMemory.Fault) -> Record? {
        guard let record = Record.decode(flash.read(offset..<(offset + Record.byteCount))), record.type == type,
              record.range.upperBound <= Self.addressSpace else { return nil }
        try flash.spend(Double(record.length) / FlashMemory.hashBytesPerSecond)
        return VendorChecksums.crc32MPEG2(flash.bytes[record.range]) == record.crc32 ? record : nil
    }
}
