import Foundation
import GrokBasics
import GrokFirmware
import GrokProtocol
import GrokTUF

/// `firmware pack`: Intel HEX (the application, and optionally the loader) and a release
/// description become the vendor's `.ugif` image, checked as a station will check it before
/// anything is written, and the description as the TUF target's custom object that
/// `repo add --custom` lists beside it.
public struct FirmwarePack: Sendable {
    /// One input: its bytes and its name as errors give it.
    public struct Input: Sendable {
        public var bytes: [UInt8]
        public var name: String

        public init(bytes: [UInt8], name: String) {
            self.bytes = bytes
            self.name = name
        }
    }

    /// The application's Intel HEX.
    public var application: Input
    /// The loader's Intel HEX, when the image carries one.
    public var loader: Input?
    /// The release description (JSON, docs/firmware-format.md).
    public var description: Input
    /// Where the image goes; its file name must say the description's hardware and version.
    public var output: String
    /// Where the custom object goes (`nil`: only in the result).
    public var customOutput: String?
    /// The address the application's image starts at.
    public var base: UInt32 = 0
    /// The most bytes of the application the reader image takes (`nil`: all).
    public var readerBytes: Int?
    /// Comment lines at the head of the image.
    public var comments: [String] = []

    public init(application: Input, loader: Input? = nil, description: Input, output: String, customOutput: String? = nil) {
        self.application = application
        self.loader = loader
        self.description = description
        self.output = output
        self.customOutput = customOutput
    }

    /// Makes and writes the image (and the custom object when `customOutput` is set).
    /// - Throws: ``FirmwareError`` naming the input at fault (nothing is written then).
    public func make() throws -> PackedImage {
        let metadata = try FirmwareReleaseMetadata.decode(description.bytes, file: description.name)
        var reader = try IntelHex.parse(application.bytes, file: application.name)
        if let readerBytes, let flat = reader.flattened(), flat.bytes.count > readerBytes {
            reader = try IntelHex(segments: [MemorySegment(address: flat.address, bytes: Array(flat.bytes.prefix(readerBytes)))])
        }
        let loaderHex = try loader.map { input throws -> IntelHex in try IntelHex.parse(input.bytes, file: input.name) }
        guard metadata.version.build <= UInt16(UInt8.max) else {
            throw FirmwareError.invalidInput(file: description.name, detail: ErrorDetail("build_too_large", ["\(metadata.version)"]))
        }
        let name = URL(fileURLWithPath: output).lastPathComponent
        let image: UgifImage
        do {
            image = try UgifImage.make(application: reader, loader: loaderHex, base: base,
                                       hardwareTypeName: FirmwareRelease.hardwareTypeName(metadata.hardwareType),
                                       version: UgifVersion(major: metadata.version.major, minor: metadata.version.minor,
                                                            build: UInt8(metadata.version.build)),
                                       date: Self.day(metadata.buildDate))
            let named = try UgifImage.parseFileName(name)
            guard named.hardwareTypeName == image.hardwareTypeName, named.version == image.version else {
                throw FirmwareError.invalidInput(file: output, detail: ErrorDetail("name_disagrees", [image.fileName(name: "NAME")]))
            }
        } catch let error as UgifError {
            // A reader image too long for the format beside the loader: say how many of its
            // bytes fit, and the option that takes only those (the demo channel's 64 KiB hex).
            if readerBytes == nil, let fits = Self.readerBytesThatFit(reader, loader: loaderHex, base: base) {
                switch error {
                case .addressOutOfRange(section: "READER", _, _), .sectionsOverlap:
                    throw FirmwareError.invalidInput(file: application.name, detail: ErrorDetail("reader_too_long", [String(fits)]))
                default: break
                }
            }
            throw FirmwareError.invalidInput(file: output, detail: .ugif(error))
        }
        let bytes = Array(image.encoded(comments: comments).utf8)
        _ = try FirmwareRelease.check(bytes, path: name, metadata: metadata)
        try FirmwareFiles.write(bytes, to: output)
        let custom = JSONWriter.encode(metadata.custom(), indent: 2)
        if let customOutput { try FirmwareFiles.write(custom + [0x0A], to: customOutput) }
        return PackedImage(image: UgifFileFacts(file: output, bytes: bytes, image: image), metadata: metadata,
                           customJSON: String(decoding: custom, as: UTF8.self))
    }

    /// How many of the reader image's first bytes fit the vendor format's 16-bit address space
    /// from `base` and end before the loader (when the loader follows it); `nil` when the
    /// image starts outside that space (no `--reader-bytes` helps then).
    static func readerBytesThatFit(_ reader: IntelHex, loader: IntelHex?, base: UInt32) -> Int? {
        guard let flat = reader.flattened(limit: 1 << 20), flat.address >= base, flat.address - base < 0x1_0000 else { return nil }
        let start = Int(flat.address - base)
        var end = 0x1_0000
        if let loader = loader?.flattened(limit: 1 << 20), loader.address >= base {
            let loaderStart = Int(loader.address - base)
            if loaderStart > start { end = min(end, loaderStart) }
        }
        let fits = min(end - start, Int(UInt16.max))
        return fits > 0 && fits < flat.bytes.count ? fits : nil
    }

    /// `2025-01-31`: the build date as the image's header gives it (UTC).
    static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// What `firmware pack` made; its `--json` form is the image's facts (as `firmware verify`
/// reports them) and `custom`, what `repo add --custom` takes.
public struct PackedImage: Encodable, Sendable {
    public let image: UgifFileFacts
    /// The description the image was made from.
    public let metadata: FirmwareReleaseMetadata
    /// The custom object as written (indented JSON).
    public let customJSON: String

    enum Key: String, CodingKey { case custom, kind }

    public func encode(to encoder: any Encoder) throws {
        try image.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(Custom(metadata: metadata), forKey: .custom)
    }

    /// The description with `"kind": "firmware"`.
    struct Custom: Encodable {
        let metadata: FirmwareReleaseMetadata
        func encode(to encoder: any Encoder) throws {
            try metadata.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(FirmwareReleaseMetadata.kind, forKey: .kind)
        }
    }
}
