/// The firmware-update commands (opcodes 0x04xx): how a host moves a Grokker to its loader,
/// streams a new application image into its spare slot, has it verified, boots it and
/// confirms it. The procedure, the flash model and the byte layouts are in
/// docs/protocol.md ("Firmware update") and docs/flashing.md.

extension Opcode {
    /// ``FirmwareRequest/status``.
    public static let firmwareStatus = Opcode(rawValue: 0x0401)
    /// ``FirmwareRequest/enterLoader``.
    public static let enterLoader = Opcode(rawValue: 0x0402)
    /// ``FirmwareRequest/beginUpload(_:)``.
    public static let beginUpload = Opcode(rawValue: 0x0403)
    /// ``FirmwareRequest/uploadBlock(_:)``.
    public static let uploadBlock = Opcode(rawValue: 0x0404)
    /// ``FirmwareRequest/verifyUpload``.
    public static let verifyUpload = Opcode(rawValue: 0x0405)
    /// ``FirmwareRequest/activate``.
    public static let activateImage = Opcode(rawValue: 0x0406)
    /// ``FirmwareRequest/confirm``.
    public static let confirmImage = Opcode(rawValue: 0x0407)
    /// ``FirmwareRequest/leaveLoader``.
    public static let leaveLoader = Opcode(rawValue: 0x0408)
}

/// What identifies an application image: the version it reports, where it loads, and
/// its length, CRC-32 and SHA-256. The device keeps it with the image it holds.
public struct ImageDescriptor: Sendable, Hashable {
    /// The firmware version the image reports once it runs.
    public var version: FirmwareVersion
    /// The hardware the image is built for.
    public var hardwareType: HardwareType
    /// The image's load address in the device's memory map.
    public var loadAddress: UInt32
    /// The image's length in bytes.
    public var length: UInt32
    /// CRC-32 (IEEE) of the image.
    public var crc32: UInt32
    /// SHA-256 of the image (32 bytes).
    public var sha256: [UInt8]

    /// Creates a descriptor.
    public init(version: FirmwareVersion, hardwareType: HardwareType, loadAddress: UInt32, length: UInt32,
                crc32: UInt32, sha256: [UInt8]) {
        precondition(sha256.count == 32, "an image's SHA-256 is 32 bytes")
        self.version = version
        self.hardwareType = hardwareType
        self.loadAddress = loadAddress
        self.length = length
        self.crc32 = crc32
        self.sha256 = sha256
    }

    /// Bytes on the wire (and in a slot's trailer).
    public static let wireSize = 4 + 1 + 4 + 4 + 4 + 32

    /// The descriptor's bytes (docs/protocol.md).
    public var bytes: [UInt8] {
        var writer = ByteWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// A descriptor from its bytes; `nil` when they are not one.
    public init?(bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        guard let descriptor = try? ImageDescriptor.read(from: &reader) else { return nil }
        self = descriptor
    }

    func write(to writer: inout ByteWriter) {
        version.write(to: &writer)
        writer.u8(hardwareType.rawValue)
        writer.u32(loadAddress)
        writer.u32(length)
        writer.u32(crc32)
        writer.raw(sha256)
    }

    static func read(from reader: inout ByteReader) throws(ProtocolError) -> ImageDescriptor {
        let version = try FirmwareVersion.read(from: &reader, "image.version")
        let typeCode = try reader.u8("image.hardwareType")
        guard let type = HardwareType(rawValue: typeCode) else {
            throw .invalidValue(field: "image.hardwareType", value: Int(typeCode))
        }
        let address = try reader.u32("image.loadAddress")
        let length = try reader.u32("image.length")
        let crc = try reader.u32("image.crc32")
        let sha = try reader.raw(count: 32, "image.sha256")
        return ImageDescriptor(version: version, hardwareType: type, loadAddress: address, length: length, crc32: crc, sha256: sha)
    }
}

/// How the bytes of an ``UploadBlock`` are encoded.
public enum BlockEncoding: UInt8, Sendable, Hashable, CaseIterable {
    /// The image bytes as they are.
    case raw = 0
    /// A piece of one raw-deflate stream (RFC 1951), sync-flushed at the end of each block.
    case deflate = 1
    /// As ``deflate``, over image bytes whose x86 near calls and jumps were made absolute
    /// first (``BranchFilter``), which deflate finds more repetitive.
    case deflateX86 = 2
}

/// One piece of the image being uploaded.
public struct UploadBlock: Sendable, Hashable {
    /// Where the decoded bytes go, from the start of the image.
    public var offset: UInt32
    /// How ``data`` is encoded.
    public var encoding: BlockEncoding
    /// The first block of a new compressed stream: the device starts a fresh decoder,
    /// primed with the up to 32 KiB of the image just before ``offset`` (which it holds).
    public var restart: Bool
    /// How many image bytes the block decodes to.
    public var decodedLength: UInt16
    /// CRC-32 (IEEE) of the decoded bytes.
    public var crc32: UInt32
    /// The encoded bytes.
    public var data: [UInt8]

    /// Creates a block.
    public init(offset: UInt32, encoding: BlockEncoding, restart: Bool, decodedLength: UInt16, crc32: UInt32, data: [UInt8]) {
        self.offset = offset
        self.encoding = encoding
        self.restart = restart
        self.decodedLength = decodedLength
        self.crc32 = crc32
        self.data = data
    }

    /// The most encoded bytes one block may carry (what fits in a request message).
    public static let maxDataBytes = WireLimits.maxMessageBytes - MessageHeader.size - 16
}

/// How far an upload has come: the device holds the image's bytes up to ``offset``, all
/// written and checked.
public struct UploadProgress: Sendable, Hashable {
    /// Whether the block just sent was taken; when not, ``offset`` says where to go on from.
    public var accepted: Bool
    /// Image bytes held, from the start.
    public var offset: UInt32
    /// The image's length.
    public var length: UInt32

    /// Creates progress.
    public init(accepted: Bool, offset: UInt32, length: UInt32) {
        self.accepted = accepted
        self.offset = offset
        self.length = length
    }
}

/// What the device computed over the image it holds (``FirmwareRequest/verifyUpload``).
public struct ImageCheck: Sendable, Hashable {
    /// Bytes checked.
    public var length: UInt32
    /// Their CRC-32.
    public var crc32: UInt32
    /// Their SHA-256.
    public var sha256: [UInt8]

    /// Creates a check result.
    public init(length: UInt32, crc32: UInt32, sha256: [UInt8]) {
        self.length = length
        self.crc32 = crc32
        self.sha256 = sha256
    }
}

/// Which program the device runs.
public enum SoftwareMode: UInt8, Sendable, Hashable {
    /// The application (the reader firmware): inventory, tag access, sounds.
    case application = 0
    /// The loader: it only updates the application (vendor "change software type").
    case loader = 1
}

/// One application slot of the device's flash.
public struct SlotStatus: Sendable, Hashable {
    /// The image the slot holds, if it holds a complete, verified one.
    public var image: ImageDescriptor?
    /// The slot runs now.
    public var running: Bool
    /// The slot's image booted on trial and waits for ``FirmwareRequest/confirm``.
    public var pendingConfirm: Bool

    /// Creates a slot status.
    public init(image: ImageDescriptor?, running: Bool, pendingConfirm: Bool) {
        self.image = image
        self.running = running
        self.pendingConfirm = pendingConfirm
    }
}

/// The device's firmware state (``FirmwareRequest/status``).
public struct FirmwareStatus: Sendable, Hashable {
    /// The program that runs.
    public var mode: SoftwareMode
    /// The application slots.
    public var slots: [SlotStatus]
    /// The upload the spare slot holds (complete or not), and how far it has come.
    public var upload: UploadState?
    /// The largest image a slot takes.
    public var slotCapacity: UInt32
    /// The encodings the loader decodes.
    public var encodings: [BlockEncoding]

    /// Creates a status.
    public init(mode: SoftwareMode, slots: [SlotStatus], upload: UploadState?, slotCapacity: UInt32, encodings: [BlockEncoding]) {
        self.mode = mode
        self.slots = slots
        self.upload = upload
        self.slotCapacity = slotCapacity
        self.encodings = encodings
    }

    /// The slot that runs, if the application runs from one.
    public var runningSlot: SlotStatus? { slots.first { $0.running } }

    func write(to writer: inout ByteWriter) {
        writer.u8(mode.rawValue)
        writer.u32(slotCapacity)
        writer.u8(UInt8(encodings.count))
        for encoding in encodings { writer.u8(encoding.rawValue) }
        writer.u8(UInt8(slots.count))
        for slot in slots {
            writer.u8((slot.image != nil ? 1 : 0) | (slot.running ? 2 : 0) | (slot.pendingConfirm ? 4 : 0))
            slot.image?.write(to: &writer)
        }
        if let upload {
            writer.u8(1)
            upload.image.write(to: &writer)
            writer.u32(upload.offset)
        } else {
            writer.u8(0)
        }
    }

    static func read(from reader: inout ByteReader) throws(ProtocolError) -> FirmwareStatus {
        let modeCode = try reader.u8("firmware.mode")
        guard let mode = SoftwareMode(rawValue: modeCode) else { throw .invalidValue(field: "firmware.mode", value: Int(modeCode)) }
        let capacity = try reader.u32("firmware.slotCapacity")
        var encodings: [BlockEncoding] = []
        for _ in 0..<(try reader.u8("firmware.encodings.count")) {
            let code = try reader.u8("firmware.encodings")
            if let encoding = BlockEncoding(rawValue: code) { encodings.append(encoding) }  // newer ones: not for us
        }
        let slotCount = try reader.u8("firmware.slots.count")
        guard slotCount <= 4 else { throw .invalidValue(field: "firmware.slots.count", value: Int(slotCount)) }
        var slots: [SlotStatus] = []
        for _ in 0..<slotCount {
            let flags = try reader.u8("firmware.slot.flags")
            let image = flags & 1 != 0 ? try ImageDescriptor.read(from: &reader) : nil
            slots.append(SlotStatus(image: image, running: flags & 2 != 0, pendingConfirm: flags & 4 != 0))
        }
        var upload: UploadState?
        if try reader.u8("firmware.upload.present") != 0 {
            let image = try ImageDescriptor.read(from: &reader)
            upload = UploadState(image: image, offset: try reader.u32("firmware.upload.offset"))
        }
        return FirmwareStatus(mode: mode, slots: slots, upload: upload, slotCapacity: capacity, encodings: encodings)
    }
}

/// An upload in the spare slot.
public struct UploadState: Sendable, Hashable {
    /// The image being uploaded.
    public var image: ImageDescriptor
    /// Bytes of it held, from the start.
    public var offset: UInt32

    /// Creates an upload state.
    public init(image: ImageDescriptor, offset: UInt32) {
        self.image = image
        self.offset = offset
    }
}

/// A firmware-update request.
public enum FirmwareRequest: Sendable, Hashable {
    /// What the device runs and holds; answered by ``FirmwareReply/status(_:)``.
    case status
    /// Stop the application and run the loader; answered by ``FirmwareReply/status(_:)``.
    /// Inventory, tag access, battery and sounds are refused (`wrongMode`) until the loader is left.
    case enterLoader
    /// Upload this image into the spare slot; answered by ``FirmwareReply/progress(_:)``
    /// with the offset to go on from (0 for a new upload; further when the slot already
    /// holds part of this same image). Loader only.
    case beginUpload(ImageDescriptor)
    /// The next piece of the image; answered by ``FirmwareReply/progress(_:)``. Loader only.
    case uploadBlock(UploadBlock)
    /// Read the uploaded image back and hash it; answered by ``FirmwareReply/check(_:)``.
    /// A match marks the upload verified: only a verified image can be activated.
    case verifyUpload
    /// Boot the verified upload on trial. Answered by ``Response/done(_:)``; the device
    /// then restarts (the link drops) and comes back running the new image, waiting for
    /// ``confirm``. If it does not come back confirmed by the next restart, the loader
    /// returns to the previous image.
    case activate
    /// Keep the image that runs on trial; answered by ``FirmwareReply/status(_:)``.
    case confirm
    /// Leave the loader for the application that was running (cancelling the update;
    /// the uploaded part stays for a later resume); answered by ``FirmwareReply/status(_:)``.
    case leaveLoader

    /// The request's number.
    public var opcode: Opcode {
        switch self {
        case .status: .firmwareStatus
        case .enterLoader: .enterLoader
        case .beginUpload: .beginUpload
        case .uploadBlock: .uploadBlock
        case .verifyUpload: .verifyUpload
        case .activate: .activateImage
        case .confirm: .confirmImage
        case .leaveLoader: .leaveLoader
        }
    }

    /// Whether `opcode` is one of these requests.
    static func handles(_ opcode: Opcode) -> Bool { opcode.rawValue >> 8 == 0x04 }

    func write(to writer: inout ByteWriter) {
        switch self {
        case .status, .enterLoader, .verifyUpload, .activate, .confirm, .leaveLoader:
            break
        case .beginUpload(let image):
            image.write(to: &writer)
        case .uploadBlock(let block):
            precondition(block.data.count <= UploadBlock.maxDataBytes, "upload block over UploadBlock.maxDataBytes")
            writer.u32(block.offset)
            writer.u8(block.encoding.rawValue)
            writer.u8(block.restart ? 1 : 0)
            writer.u16(block.decodedLength)
            writer.u32(block.crc32)
            writer.u16(UInt16(block.data.count))
            writer.raw(block.data)
        }
    }

    static func read(opcode: Opcode, from reader: inout ByteReader) throws(ProtocolError) -> FirmwareRequest {
        switch opcode {
        case .firmwareStatus: return .status
        case .enterLoader: return .enterLoader
        case .verifyUpload: return .verifyUpload
        case .activateImage: return .activate
        case .confirmImage: return .confirm
        case .leaveLoader: return .leaveLoader
        case .beginUpload: return .beginUpload(try ImageDescriptor.read(from: &reader))
        case .uploadBlock:
            let offset = try reader.u32("upload.offset")
            let code = try reader.u8("upload.encoding")
            guard let encoding = BlockEncoding(rawValue: code) else { throw .invalidValue(field: "upload.encoding", value: Int(code)) }
            let restart = try reader.u8("upload.restart") != 0
            let decoded = try reader.u16("upload.decodedLength")
            let crc = try reader.u32("upload.crc32")
            let count = try reader.u16("upload.length")
            guard Int(count) <= UploadBlock.maxDataBytes else { throw .invalidValue(field: "upload.length", value: Int(count)) }
            let data = try reader.raw(count: Int(count), "upload.data")
            return .uploadBlock(UploadBlock(offset: offset, encoding: encoding, restart: restart, decodedLength: decoded, crc32: crc, data: data))
        default:
            throw .unknownOpcode(opcode.rawValue)
        }
    }
}

/// The successful answers to ``FirmwareRequest``s.
public enum FirmwareReply: Sendable, Hashable {
    /// The device's firmware state.
    case status(FirmwareStatus)
    /// How far the upload has come.
    case progress(UploadProgress)
    /// What the device computed over the uploaded image.
    case check(ImageCheck)

    func write(to writer: inout ByteWriter) {
        switch self {
        case .status(let status):
            status.write(to: &writer)
        case .progress(let progress):
            writer.u8(progress.accepted ? 1 : 0)
            writer.u32(progress.offset)
            writer.u32(progress.length)
        case .check(let check):
            writer.u32(check.length)
            writer.u32(check.crc32)
            writer.raw(check.sha256)
        }
    }

    static func read(opcode: Opcode, from reader: inout ByteReader) throws(ProtocolError) -> FirmwareReply {
        switch opcode {
        case .firmwareStatus, .enterLoader, .confirmImage, .leaveLoader:
            return .status(try FirmwareStatus.read(from: &reader))
        case .beginUpload, .uploadBlock:
            let accepted = try reader.u8("progress.accepted") != 0
            return .progress(UploadProgress(accepted: accepted, offset: try reader.u32("progress.offset"),
                                            length: try reader.u32("progress.length")))
        case .verifyUpload:
            return .check(ImageCheck(length: try reader.u32("check.length"), crc32: try reader.u32("check.crc32"),
                                     sha256: try reader.raw(count: 32, "check.sha256")))
        default:
            throw .unknownOpcode(opcode.rawValue)
        }
    }
}
