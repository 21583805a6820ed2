import GrokCrypto
import GrokProtocol

extension VerifiedChannel {
    /// The entry named `name`.
    /// - Throws: ``FirmwareError/updateNotListed(channel:name:)``.
    public func entry(named name: String) throws(FirmwareError) -> UpdateEntry {
        guard let entry = metadata.entry(named: name) else { throw .updateNotListed(channel: channel, name: name) }
        return entry
    }

    /// Binds an image to the entry named `name` in this verified metadata: the bytes must be
    /// exactly the entry's size and SHA-256 (stops a tampered image, and an image listed by
    /// another metadata version: mix-and-match), must parse as a package, and the package's
    /// header must say what the entry says (version, build date, hardware type and revisions,
    /// reader protocol, applies-to: stops wrong software under a right name).
    /// - Parameters:
    ///   - image: the image file's bytes.
    ///   - name: the update's name in the metadata.
    ///   - file: the name used in errors.
    /// - Returns: the parsed package.
    public func bind(image: [UInt8], to name: String, file: String) throws(FirmwareError) -> FirmwarePackage {
        let entry = try entry(named: name)
        guard image.count == entry.size else {
            throw .imageSizeMismatch(file: file, expected: entry.size, found: image.count)
        }
        let digest = SHA256.hash(image)
        guard digest == entry.sha256 else {
            throw .imageHashMismatch(file: file, expected: entry.sha256.hex, found: digest.hex)
        }
        let package = try FirmwarePackage.parse(image, file: file)
        try Self.agree(package.descriptor, entry.descriptor, file: file)
        return package
    }

    /// Throws ``FirmwareError/imageHeaderMismatch(file:field:expected:found:)`` for the
    /// first field where the package header and the entry differ.
    static func agree(_ package: FirmwareDescriptor, _ entry: FirmwareDescriptor, file: String) throws(FirmwareError) {
        func differ(_ field: String, _ expected: String, _ found: String) -> FirmwareError {
            .imageHeaderMismatch(file: file, field: field, expected: expected, found: found)
        }
        if package.hardwareType != entry.hardwareType {
            throw differ("hardware type", entry.hardwareType.vendorName, package.hardwareType.vendorName)
        }
        if package.hardwareRevisions != entry.hardwareRevisions {
            throw differ("hardware revisions", list(entry.hardwareRevisions), list(package.hardwareRevisions))
        }
        if package.version != entry.version { throw differ("version", "\(entry.version)", "\(package.version)") }
        if package.buildDate != entry.buildDate {
            throw differ("build date", UTCTime.format(entry.buildDate), UTCTime.format(package.buildDate))
        }
        if package.readerProtocolVersion != entry.readerProtocolVersion {
            throw differ("reader protocol", "\(entry.readerProtocolVersion)", "\(package.readerProtocolVersion)")
        }
        if Set(package.appliesTo) != Set(entry.appliesTo) {
            throw differ("applies-to", list(entry.appliesTo), list(package.appliesTo))
        }
    }

    private static func list(_ items: [some CustomStringConvertible]) -> String {
        items.map(\.description).joined(separator: ",")
    }
}
