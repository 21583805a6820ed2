import GrokBasics
import GrokProtocol

/// The vendor's firmware image, a `.ugif` text file (U Grok It image format), restated from
/// what the vendor host library accepts (docs/vendor-protocol.md):
///
/// ```
/// # comment
/// READER_HARDWARE_TYPE = GR-1
/// SOFTWARE_VERSION_MAJOR = 1
/// SOFTWARE_VERSION_MINOR = 9
/// SOFTWARE_VERSION_BUILD = 0
/// SOFTWARE_VERSION_DATE = 2026-12-01
/// LOADER
/// 0000 200
/// 0123ABCD...            (hex data lines)
/// READER
/// 1000 600
/// ...
/// ```
///
/// The file is named `<HWTYPE>_<maj>-<min>-<build>_<name>.ugif`; the name's version must
/// equal the header's. Lines are at most 99 characters and end in LF (the vendor host
/// refuses CR LF and blank lines). Each section is a line
/// `AAAA <decimal length>` (hex start address) and then exactly that many bytes of hex. No
/// checksum is in the file: the host computes CRC-16/MCRF4XX and CRC-32/MPEG-2 of each
/// image for ChangeSoftwareType.
public struct UgifImage: Sendable, Hashable {
    /// The longest line the vendor host accepts, in characters without the LF: 99 (a
    /// 99-character line passes, a 100-character one is BAD_FILE, seen in the harness).
    public static let maxLineLength = 99
    /// The largest file this parser reads, bytes (a full 64 KiB address space in hex is
    /// about 135 KB).
    public static let maxFileBytes = 512 * 1024
    /// The most bytes one image may hold: ChangeSoftwareType carries the length as LE16.
    public static let maxImageBytes = Int(UInt16.max)
    /// Hex data per line in files we write (the vendor harness's files use 64).
    public static let hexCharactersPerLine = 64

    /// `READER_HARDWARE_TYPE`, the library's name of the hardware type ("GR-1", "ProtoMicro").
    public var hardwareTypeName: String
    public var version: UgifVersion
    /// `SOFTWARE_VERSION_DATE`, free text.
    public var date: String
    /// The loader image (sent first when the unit runs its application).
    public var loader: UgifSection?
    /// The reader (application) image.
    public var reader: UgifSection

    public init(hardwareTypeName: String, version: UgifVersion, date: String, loader: UgifSection?,
                reader: UgifSection) throws(UgifError) {
        try Self.checkName(hardwareTypeName)
        guard !date.contains(where: \.isNewline), date.count <= Self.maxLineLength - 24 else {
            throw .invalidHeader(line: 0, key: "SOFTWARE_VERSION_DATE", detail: ErrorDetail("date_too_long", [String(Self.maxLineLength - 24)]))
        }
        self.hardwareTypeName = hardwareTypeName
        self.version = version
        self.date = date
        self.loader = loader
        self.reader = reader
    }

    /// The vendor's file name for this image: `<HWTYPE>_<maj>-<min>-<build>_<name>.ugif`.
    public func fileName(name: String) -> String {
        "\(hardwareTypeName)_\(version.major)-\(version.minor)-\(version.build)_\(name).ugif"
    }

    // MARK: Compatibility

    /// The vendor's compatibility value against a unit that reports `hardwareTypeName` and
    /// runs `running`: 1 for other hardware, else 2 older, 3 same, 4 newer than it.
    public func compatibility(hardwareTypeName unit: String, running: UgifVersion) -> UgifCompatibility {
        guard unit == hardwareTypeName else { return .incompatible }
        if version < running { return .older }
        if version == running { return .same }
        return .newer
    }

    /// The compatibility of a file named `fileName` with content `text`: 0 when either cannot
    /// be parsed (or they disagree), otherwise as ``compatibility(hardwareTypeName:running:)``.
    public static func compatibility(fileName: String, text: String, hardwareTypeName unit: String,
                                     running: UgifVersion) -> UgifCompatibility {
        guard let image = try? parse(text, fileName: fileName) else { return .unparsable }
        return image.compatibility(hardwareTypeName: unit, running: running)
    }

    // MARK: Contents

    /// The checks the format allows beyond its syntax, for an image nobody vouches for (no
    /// trusted channel lists it). Parsing already checked each section's declared length
    /// against its data, its address range, and that LOADER and READER do not overlap; this
    /// checks the version inside: a READER image that carries a version (``ImageVersionMarker``)
    /// must carry the header's, or the unit would come back on another version than the file
    /// says. A `.ugif` has no checksum: a changed data digit outside the marker cannot be
    /// found, which is why only a channel's signed SHA-256 makes an image intact.
    public func checkContents() throws(UgifError) {
        if let inside = ImageVersionMarker.find(in: reader.bytes) {
            let found = UgifVersion(major: inside.major, minor: inside.minor, build: inside.build)
            guard found == version else {
                throw .innerVersionMismatch(section: "READER", inImage: found.description, inHeader: version.description)
            }
        }
    }

    // MARK: Writing

    /// The file's text: header, LOADER (when present), READER; hex upper case, 64 hex
    /// characters a line, LF line ends.
    public func encoded(comments: [String] = []) -> String {
        var lines = comments.map { "# " + $0 }
        lines += [
            "READER_HARDWARE_TYPE = \(hardwareTypeName)",
            "SOFTWARE_VERSION_MAJOR = \(version.major)",
            "SOFTWARE_VERSION_MINOR = \(version.minor)",
            "SOFTWARE_VERSION_BUILD = \(version.build)",
            "SOFTWARE_VERSION_DATE = \(date)",
        ]
        func section(_ title: String, _ s: UgifSection) {
            lines.append(title)
            lines.append("\(UgifImage.hex4(s.address)) \(s.bytes.count)")
            var hex = ""
            hex.reserveCapacity(Self.hexCharactersPerLine)
            for (i, byte) in s.bytes.enumerated() {
                hex += Self.hex2(byte)
                if (i + 1) % (Self.hexCharactersPerLine / 2) == 0 {
                    lines.append(hex)
                    hex = ""
                }
            }
            if !hex.isEmpty { lines.append(hex) }
        }
        if let loader { section("LOADER", loader) }
        section("READER", reader)
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: From Intel HEX

    /// Makes an image from Intel HEX: the application (and, optionally, the loader). Each
    /// file's bytes from its lowest to its highest address (gaps filled with FF) become one
    /// section at address `hexAddress - base`, which must fit the vendor's 16-bit address
    /// space; an image may hold at most 65535 bytes (ChangeSoftwareType's LE16 length).
    public static func make(application: IntelHex, loader: IntelHex?, base: UInt32 = 0, hardwareTypeName: String,
                            version: UgifVersion, date: String) throws(UgifError) -> UgifImage {
        func section(_ hex: IntelHex, _ which: String) throws(UgifError) -> UgifSection {
            guard let flat = hex.flattened(limit: 1 << 20) else { throw .emptyImage(section: which) }
            guard flat.address >= base, UInt64(flat.address - base) + UInt64(flat.bytes.count) <= 0x1_0000 else {
                throw .addressOutOfRange(section: which, address: UInt64(flat.address), base: UInt64(base))
            }
            return try UgifSection(address: UInt16(flat.address - base), bytes: flat.bytes, section: which)
        }
        let reader = try section(application, "READER")
        let loaderSection = try loader.map { (hex: IntelHex) throws(UgifError) -> UgifSection in try section(hex, "LOADER") }
        if let l = loaderSection, l.range.overlaps(reader.range) {
            throw .sectionsOverlap(loader: l.address, reader: reader.address)
        }
        return try UgifImage(hardwareTypeName: hardwareTypeName, version: version, date: date, loader: loaderSection, reader: reader)
    }

    // MARK: Parsing

    /// Parses the file `fileName` (its last path component is checked against the header)
    /// with the text `text`. Bounded: at most ``maxFileBytes``; every error names its line.
    public static func parse(_ text: String, fileName: String) throws(UgifError) -> UgifImage {
        try parse(text, checkingName: fileName)
    }

    /// Parses an image that came without a file name (`grokctl firmware verify -` reads it
    /// from standard input): everything but the name is checked, the header as it stands.
    public static func parseUnnamed(_ text: String) throws(UgifError) -> UgifImage {
        try parse(text, checkingName: nil)
    }

    private static func parse(_ text: String, checkingName fileName: String?) throws(UgifError) -> UgifImage {
        guard text.utf8.count <= maxFileBytes else { throw .fileTooLarge(bytes: text.utf8.count, limit: maxFileBytes) }
        let base = fileName.map { name in name.split(separator: "/").last.map(String.init) ?? name }
        let named = try base.map(parseFileName)

        var header: [String: (String, Int)] = [:]
        enum Where { case header, loaderStart, loaderData, readerStart, readerData }
        var state = Where.header
        var sections: [String: UgifSection] = [:]
        var current: (title: String, address: UInt16, length: Int, line: Int, bytes: [UInt8])?

        func finish(at line: Int) throws(UgifError) {
            guard let c = current else { return }
            guard c.bytes.count == c.length else {
                throw .sectionLength(section: c.title, line: c.line, declared: c.length, found: c.bytes.count)
            }
            sections[c.title] = try UgifSection(address: c.address, bytes: c.bytes, section: c.title)
            current = nil
        }

        // A CR anywhere is refused (as the vendor host does); checked on the bytes, because
        // String joins CR LF into one Character and would hide it from a split on LF.
        if let cr = text.utf8.firstIndex(of: 13) {
            let line = text.utf8[..<cr].reduce(1) { $1 == 10 ? $0 + 1 : $0 }
            throw .unexpectedLine(line: line, detail: ErrorDetail("carriage_return"))
        }
        var number = 0
        var rawLines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if rawLines.last?.isEmpty == true { rawLines.removeLast() }
        for raw in rawLines {
            number += 1
            let line = Substring(raw)
            guard line.count <= maxLineLength else { throw .lineTooLong(line: number, length: line.count, limit: maxLineLength) }
            let trimmed = line.trimmingSpaces
            guard !trimmed.isEmpty else { throw .unexpectedLine(line: number, detail: ErrorDetail("blank_line")) }
            if trimmed.hasPrefix("#") { continue }
            switch trimmed {
            case "LOADER", "READER":
                try finish(at: number)
                guard sections[String(trimmed)] == nil, current?.title != String(trimmed) else {
                    throw .duplicateSection(section: String(trimmed), line: number)
                }
                if trimmed == "LOADER", sections["READER"] != nil { throw .unexpectedLine(line: number, detail: ErrorDetail("loader_after_reader")) }
                state = trimmed == "LOADER" ? .loaderStart : .readerStart
                continue
            default: break
            }
            switch state {
            case .header:
                guard let eq = trimmed.firstIndex(of: "=") else {
                    throw .unexpectedLine(line: number, detail: ErrorDetail("not_header_or_section"))
                }
                let key = String(trimmed[..<eq].trimmingSpaces)
                let value = String(trimmed[trimmed.index(after: eq)...].trimmingSpaces)
                guard ["READER_HARDWARE_TYPE", "SOFTWARE_VERSION_MAJOR", "SOFTWARE_VERSION_MINOR", "SOFTWARE_VERSION_BUILD",
                       "SOFTWARE_VERSION_DATE"].contains(key) else {
                    throw .invalidHeader(line: number, key: key, detail: ErrorDetail("unknown_key"))
                }
                guard header[key] == nil else { throw .invalidHeader(line: number, key: key, detail: ErrorDetail("given_twice")) }
                header[key] = (value, number)
            case .loaderStart, .readerStart:
                let parts = trimmed.split(separator: " ", omittingEmptySubsequences: true)
                guard parts.count == 2, parts[0].count == 4, let address = UInt16(parts[0], radix: 16),
                      parts[1].allSatisfy(\.isASCIIDigitValue), let length = Int(parts[1]) else {
                    throw .unexpectedLine(line: number, detail: ErrorDetail("bad_section_start"))
                }
                guard (1...maxImageBytes).contains(length) else {
                    throw .sectionTooLarge(section: state == .loaderStart ? "LOADER" : "READER", line: number, length: length,
                                           limit: maxImageBytes)
                }
                guard Int(address) + length <= 0x1_0000 else {
                    throw .addressOutOfRange(section: state == .loaderStart ? "LOADER" : "READER", address: UInt64(address), base: 0)
                }
                let title = state == .loaderStart ? "LOADER" : "READER"
                current = (title, address, length, number, [])
                current!.bytes.reserveCapacity(length)
                state = state == .loaderStart ? .loaderData : .readerData
            case .loaderData, .readerData:
                guard trimmed.count % 2 == 0 else { throw .badHex(line: number, detail: ErrorDetail("odd_hex_digits")) }
                var high: UInt8?
                for ch in trimmed.utf8 {
                    guard let nibble = Self.nibble(ch) else { throw .badHex(line: number, detail: ErrorDetail("not_hex_digit")) }
                    if let h = high {
                        current!.bytes.append(h << 4 | nibble)
                        high = nil
                    } else {
                        high = nibble
                    }
                }
                guard current!.bytes.count <= current!.length else {
                    throw .sectionLength(section: current!.title, line: number, declared: current!.length, found: current!.bytes.count)
                }
            }
        }
        try finish(at: number)

        func value(_ key: String) throws(UgifError) -> (String, Int) {
            guard let v = header[key] else { throw .missingHeader(key: key) }
            return v
        }
        func number16(_ key: String) throws(UgifError) -> UInt8 {
            let (text, line) = try value(key)
            guard !text.isEmpty, text.allSatisfy(\.isASCIIDigitValue), let n = UInt8(text) else {
                throw .invalidHeader(line: line, key: key, detail: ErrorDetail("not_a_byte"))
            }
            return n
        }
        let hardware = try value("READER_HARDWARE_TYPE")
        let version = UgifVersion(major: try number16("SOFTWARE_VERSION_MAJOR"), minor: try number16("SOFTWARE_VERSION_MINOR"),
                                  build: try number16("SOFTWARE_VERSION_BUILD"))
        let date = try value("SOFTWARE_VERSION_DATE").0
        if let named, let base {
            guard hardware.0 == named.hardwareTypeName else {
                throw .nameMismatch(fileName: base, field: "hardware_type", inName: named.hardwareTypeName, inFile: hardware.0)
            }
            guard version == named.version else {
                throw .nameMismatch(fileName: base, field: "version", inName: named.version.description, inFile: version.description)
            }
        }
        guard let reader = sections["READER"] else { throw .missingSection(section: "READER") }
        let loader = sections["LOADER"]
        if let loader, loader.range.overlaps(reader.range) {
            throw .sectionsOverlap(loader: loader.address, reader: reader.address)
        }
        do throws(UgifError) {
            return try UgifImage(hardwareTypeName: hardware.0, version: version, date: date, loader: loader, reader: reader)
        } catch {
            throw error.withLine(hardware.1)
        }
    }

    /// The hardware type and version a file name carries: `<HWTYPE>_<maj>-<min>-<build>_<name>.ugif`.
    public static func parseFileName(_ name: String) throws(UgifError) -> (hardwareTypeName: String, version: UgifVersion) {
        guard name.hasSuffix(".ugif") else { throw .badFileName(name: name, detail: ErrorDetail("no_ugif_suffix")) }
        let stem = name.dropLast(5)
        let parts = stem.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty else {
            throw .badFileName(name: name, detail: ErrorDetail("bad_name_shape"))
        }
        let numbers = parts[1].split(separator: "-", omittingEmptySubsequences: false)
        guard numbers.count == 3, numbers.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigitValue) }),
              let major = UInt8(numbers[0]), let minor = UInt8(numbers[1]), let build = UInt8(numbers[2]) else {
            throw .badFileName(name: name, detail: ErrorDetail("bad_name_version"))
        }
        return (String(parts[0]), UgifVersion(major: major, minor: minor, build: build))
    }

    static func checkName(_ name: String) throws(UgifError) {
        guard !name.isEmpty, !name.contains("_"), !name.contains("/"), name.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw .invalidHeader(line: 0, key: "READER_HARDWARE_TYPE", detail: ErrorDetail("bad_hardware_name"))
        }
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    static let digits = Array("0123456789ABCDEF")
    static func hex2(_ b: UInt8) -> String { String([digits[Int(b >> 4)], digits[Int(b & 15)]]) }
    static func hex4(_ v: UInt16) -> String { hex2(UInt8(v >> 8)) + hex2(UInt8(v & 0xFF)) }
}

/// One image of a `.ugif`: where it goes and its bytes, with the two checksums the host sends.
public struct UgifSection: Sendable, Hashable {
    public var address: UInt16
    public var bytes: [UInt8]

    public init(address: UInt16, bytes: [UInt8]) throws(UgifError) {
        try self.init(address: address, bytes: bytes, section: "image")
    }

    init(address: UInt16, bytes: [UInt8], section: String) throws(UgifError) {
        guard !bytes.isEmpty else { throw .emptyImage(section: section) }
        guard bytes.count <= UgifImage.maxImageBytes else {
            throw .sectionTooLarge(section: section, line: 0, length: bytes.count, limit: UgifImage.maxImageBytes)
        }
        guard Int(address) + bytes.count <= 0x1_0000 else {
            throw .addressOutOfRange(section: section, address: UInt64(address), base: 0)
        }
        self.address = address
        self.bytes = bytes
    }

    /// The addresses the image covers.
    public var range: Range<Int> { Int(address)..<(Int(address) + bytes.count) }
    /// CRC-16/MCRF4XX of the image, as ChangeSoftwareType carries it.
    public var crc16: UInt16 { VendorChecksums.crc16MCRF4XX(bytes) }
    /// CRC-32/MPEG-2 of the image.
    public var crc32: UInt32 { VendorChecksums.crc32MPEG2(bytes) }

    /// The ChangeSoftwareType request that ends this image's upload, switching to `target`.
    public func changeSoftwareType(to target: VendorSoftwareType) -> VendorChangeSoftwareType {
        VendorChangeSoftwareType(length: UInt16(bytes.count), crc16: crc16, targetType: target.rawValue, crc32: crc32)
    }
}

/// `SOFTWARE_VERSION_MAJOR.MINOR.BUILD`, as GetVersion bytes 5-7 report it.
public struct UgifVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: UInt8
    public var minor: UInt8
    public var build: UInt8

    public init(major: UInt8, minor: UInt8, build: UInt8) {
        self.major = major
        self.minor = minor
        self.build = build
    }

    public static func < (a: UgifVersion, b: UgifVersion) -> Bool {
        (a.major, a.minor, a.build) < (b.major, b.minor, b.build)
    }

    public var description: String { "\(major).\(minor).\(build)" }

    /// The version a unit's GetVersion answer says it runs, in an image's terms.
    public init(running version: VendorReaderVersion) {
        self.init(major: version.firmwareMajor, minor: version.firmwareMinor, build: version.firmwareBuild)
    }
}

/// The vendor's compatibility values (`FirmwareCheckCompatibility`).
public enum UgifCompatibility: Int, Sendable, Hashable, CaseIterable {
    /// The file (or its name) cannot be parsed.
    case unparsable = 0
    /// Another hardware type.
    case incompatible = 1
    /// Older than what the unit runs.
    case older = 2
    /// The version the unit runs.
    case same = 3
    /// Newer than what the unit runs.
    case newer = 4
}

/// Everything wrong with a `.ugif` file; every error inside the file names its line.
/// `code` is stable; `arguments` fill the localized message in order.
/// A `detail` is a code under `firmware.detail` in the catalog, never an English sentence.
public enum UgifError: Error, Sendable, Equatable, CodedError {
    case fileTooLarge(bytes: Int, limit: Int)
    case badFileName(name: String, detail: ErrorDetail)
    case lineTooLong(line: Int, length: Int, limit: Int)
    case unexpectedLine(line: Int, detail: ErrorDetail)
    case invalidHeader(line: Int, key: String, detail: ErrorDetail)
    case missingHeader(key: String)
    case nameMismatch(fileName: String, field: String, inName: String, inFile: String)
    case badHex(line: Int, detail: ErrorDetail)
    case sectionLength(section: String, line: Int, declared: Int, found: Int)
    case sectionTooLarge(section: String, line: Int, length: Int, limit: Int)
    case duplicateSection(section: String, line: Int)
    case missingSection(section: String)
    case emptyImage(section: String)
    case addressOutOfRange(section: String, address: UInt64, base: UInt64)
    case sectionsOverlap(loader: UInt16, reader: UInt16)
    /// The version inside a section (``ImageVersionMarker``) is not the header's.
    case innerVersionMismatch(section: String, inImage: String, inHeader: String)

    public var code: String {
        switch self {
        case .fileTooLarge: "ugif_file_too_large"
        case .badFileName: "ugif_bad_file_name"
        case .lineTooLong: "ugif_line_too_long"
        case .unexpectedLine: "ugif_unexpected_line"
        case .invalidHeader: "ugif_invalid_header"
        case .missingHeader: "ugif_missing_header"
        case .nameMismatch: "ugif_name_mismatch"
        case .badHex: "ugif_bad_hex"
        case .sectionLength: "ugif_section_length"
        case .sectionTooLarge: "ugif_section_too_large"
        case .duplicateSection: "ugif_duplicate_section"
        case .missingSection: "ugif_missing_section"
        case .emptyImage: "ugif_empty_image"
        case .addressOutOfRange: "ugif_address_out_of_range"
        case .sectionsOverlap: "ugif_sections_overlap"
        case .innerVersionMismatch: "ugif_inner_version_mismatch"
        }
    }

    public var arguments: [String] {
        switch self {
        case .fileTooLarge(let b, let l): ["\(b)", "\(l)"]
        case .badFileName(let n, let d): [n] + d.flattened
        case .lineTooLong(let line, let length, let limit): ["\(line)", "\(length)", "\(limit)"]
        case .unexpectedLine(let line, let d): ["\(line)"] + d.flattened
        case .invalidHeader(let line, let k, let d): ["\(line)", k] + d.flattened
        case .missingHeader(let k): [k]
        case .nameMismatch(let f, let field, let a, let b): [f, field, a, b]
        case .badHex(let line, let d): ["\(line)"] + d.flattened
        case .sectionLength(let s, let line, let d, let f): [s, "\(line)", "\(d)", "\(f)"]
        case .sectionTooLarge(let s, let line, let length, let limit): [s, "\(line)", "\(length)", "\(limit)"]
        case .duplicateSection(let s, let line): [s, "\(line)"]
        case .missingSection(let s): [s]
        case .emptyImage(let s): [s]
        case .addressOutOfRange(let s, let a, let b): [s, String(a, radix: 16), String(b, radix: 16)]
        case .sectionsOverlap(let l, let r): [String(l, radix: 16), String(r, radix: 16)]
        case .innerVersionMismatch(let s, let found, let header): [s, found, header]
        }
    }

    /// The line the error names, 0 when it is about the whole file.
    public var line: Int {
        switch self {
        case .lineTooLong(let line, _, _), .unexpectedLine(let line, _), .invalidHeader(let line, _, _), .badHex(let line, _),
             .sectionLength(_, let line, _, _), .sectionTooLarge(_, let line, _, _), .duplicateSection(_, let line):
            line
        default: 0
        }
    }

    func withLine(_ line: Int) -> UgifError {
        if case .invalidHeader(0, let key, let detail) = self { return .invalidHeader(line: line, key: key, detail: detail) }
        return self
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}

extension Character {
    var isASCIIDigitValue: Bool { isASCII && isNumber }
}
