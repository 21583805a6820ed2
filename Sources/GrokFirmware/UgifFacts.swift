import GrokBasics
import GrokCrypto

/// A `.ugif` image's facts as a person checks them (`firmware verify`, `firmware pack`), and
/// their `--json` form: the file's size and SHA-256, the header, and each section's place,
/// length and CRC-32.
public struct UgifFileFacts: Encodable, Sendable, Hashable {
    public struct Section: Encodable, Sendable, Hashable {
        /// `loader` or `reader`.
        public let kind: String
        /// `0x00001000`.
        public let address: String
        public let length: Int
        /// `0x1A2B3C4D`.
        public let crc32: String
    }

    /// The file as given (`-`: standard input), as `--json` reports it.
    public let file: String
    /// The file as a person reads it (standard input by its name in the reader's language).
    public let shownAs: String
    public let size: Int
    public let sha256: String
    public let version: String
    public let hardwareName: String
    public let date: String
    public let sections: [Section]

    enum CodingKeys: String, CodingKey {
        case file, size, sha256, version, date, sections
        case hardwareName = "hardware_name"
    }

    /// The facts of `image`, whose encoded form is `bytes`, read from `file`.
    public init(file: String, shownAs: String? = nil, bytes: [UInt8], image: UgifImage) {
        self.file = file
        self.shownAs = shownAs ?? file
        size = bytes.count
        sha256 = SHA256.hash(bytes).hex
        version = image.version.description
        hardwareName = image.hardwareTypeName
        date = image.date
        var sections: [Section] = []
        for (kind, section) in [("loader", image.loader), ("reader", Optional(image.reader))] {
            guard let section else { continue }
            sections.append(Section(kind: kind, address: Self.hex32(UInt32(section.address)), length: section.bytes.count,
                                    crc32: Self.hex32(section.crc32)))
        }
        self.sections = sections
    }

    /// `0x08008000`: eight upper-case hex digits.
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

extension UgifImage {
    /// The image's own name in a file name: the last path component, without the
    /// `<sha256>.` a TUF repository with consistent snapshots puts before a target's name
    /// (`targets/release/ba51…c9a6.GR-1_1-8-0_demo.ugif` is `GR-1_1-8-0_demo.ugif`).
    public static func imageName(ofFile fileName: String) -> String {
        let base = fileName.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? fileName
        let bytes = Array(base.utf8)
        let isHex: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        guard bytes.count > 65, bytes[64] == 0x2E, bytes[..<64].allSatisfy(isHex) else { return base }
        return String(decoding: bytes[65...], as: UTF8.self)
    }

    /// The `.ugif` image in `bytes`, parsed as the vendor's host parses it. A file's name
    /// (`fileName`, its image name: ``imageName(ofFile:)``) must agree with its header; an
    /// image without a name (standard input) has none to check. Bytes that are not UTF-8 fail
    /// the parse.
    ///
    /// - Parameter shownAs: The input as errors name it.
    /// - Throws: ``FirmwareError/invalidInput(file:detail:)`` with the parser's detail.
    public static func read(_ bytes: [UInt8], fileName: String?, shownAs: String) throws(FirmwareError) -> UgifImage {
        let text = String(decoding: bytes, as: UTF8.self)
        do throws(UgifError) {
            if let fileName { return try parse(text, fileName: imageName(ofFile: fileName)) }
            return try parseUnnamed(text)
        } catch {
            throw FirmwareError.invalidInput(file: shownAs, detail: .ugif(error))
        }
    }
}
