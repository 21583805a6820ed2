import GrokCrypto
import GrokFirmware

/// `firmware verify` (and `firmware flash --package` before any device): a `.ugif` image's
/// facts, and where the channel lists it. A local image is parsed as the vendor's host parses
/// it and checked as far as the format allows (``UgifImage/checkContents()``); with a
/// channel, it is looked up by its SHA-256 (or by the name given, or else by its file name)
/// and checked against that target's signed length, hash and description, as a station
/// checks a download. A channel's target alone is verified through TUF (downloaded into the
/// state directory when needed). A `.ugif` carries no checksum: only a listing makes an
/// image intact (``integrity``).
public struct FirmwareVerification: Sendable {
    /// What is known of an image's integrity.
    public enum Integrity: String, Sendable {
        /// A trusted channel lists its SHA-256 and length: it is intact.
        case listed
        /// The channel asked does not list it: it is well-formed, nothing says it is intact.
        case unlisted
        /// No channel was asked: it is well-formed, nothing says it is intact.
        case notChecked = "not_checked"
    }

    /// The image's facts.
    public let facts: UgifFileFacts
    /// The channel asked, when one was.
    public let channel: String?
    /// The name the channel lists the image under (`nil`: not listed, or no channel).
    public let listedAs: String?
    /// The version of the channel's metadata the image was found in (the channel's
    /// delegation, else targets).
    public let targetsVersion: UInt64?
    /// The hardware revisions its description names, when the channel describes it.
    public let revisions: [UInt8]?
    /// The image parsed.
    public let image: UgifImage

    /// What is known of its integrity.
    public var integrity: Integrity {
        if listedAs != nil { return .listed }
        return channel == nil ? .notChecked : .unlisted
    }

    /// Verifies a local image: `bytes` (as read from `file`, shown as `shownAs`; `fileName`,
    /// the name its header must agree with, `nil` for standard input), and with `channel`,
    /// where it lists it; `name` binds it to that target.
    /// - Throws: ``FirmwareError/invalidInput(file:detail:)`` for an image that does not
    ///   parse or fails the format's checks; ``FirmwareError/updateNotListed(channel:name:)``
    ///   for `name` not listed; the check's ``FirmwareError`` when the bytes are not what the
    ///   target says (the one named, or the one of the file's name: a damaged copy); the
    ///   channel's errors.
    public static func verify(_ bytes: [UInt8], file: String, shownAs: String, fileName: String?,
                              channel: FirmwareChannel? = nil, name: String? = nil) async throws -> FirmwareVerification {
        let image = try UgifImage.read(bytes, fileName: fileName, shownAs: shownAs)
        do throws(UgifError) {
            try image.checkContents()
        } catch {
            throw FirmwareError.invalidInput(file: shownAs, detail: .ugif(error))
        }
        let facts = UgifFileFacts(file: file, shownAs: shownAs, bytes: bytes, image: image)
        guard let channel else {
            return FirmwareVerification(facts: facts, channel: nil, listedAs: nil, targetsVersion: nil, revisions: nil, image: image)
        }
        let update = try await channel.repository.update(channels: [channel.name])
        let listings = update.updates[channel.name] ?? []
        let listing: FirmwareListing?
        if let name {
            guard let found = listings.first(where: { $0.name == name || $0.path == name }) else {
                throw FirmwareError.updateNotListed(channel: channel.name, name: name)
            }
            listing = found
        } else {
            let sha256 = SHA256.hash(bytes)
            let base = fileName.map(UgifImage.imageName(ofFile:))
            // Its own listing by hash; else the listing of its file name, which it must then
            // match (a copy of a listed image with a changed digit is damaged, not "unlisted").
            listing = listings.first { $0.sha256 == sha256 && $0.length == bytes.count }
            if listing == nil, let named = listings.first(where: { base != nil && $0.name == base }) {
                throw FirmwareError.imageHashMismatch(file: shownAs, expected: named.sha256.hex, found: sha256.hex)
            }
        }
        // Length, hash and the description's hardware and version, as a station checks a download.
        let release = try listing.map { try FirmwareRelease(listing: $0, bytes: bytes) }
        return FirmwareVerification(facts: facts, channel: channel.name, listedAs: listing?.name,
                                    targetsVersion: update.versions[channel.name] ?? update.versions["targets"],
                                    revisions: release?.hardwareRevisions, image: image)
    }

    /// Verifies `channel`'s target `name` through TUF, downloading it into the state
    /// directory when needed.
    public static func verify(named name: String, in channel: FirmwareChannel) async throws -> FirmwareVerification {
        let release = try await channel.target(named: name)
        return FirmwareVerification(facts: UgifFileFacts(file: FirmwareQuery.imagePath(release.sha256, in: channel), bytes: release.bytes, image: release.ugif), channel: channel.name,
                                    listedAs: release.path.split(separator: "/").last.map(String.init) ?? release.path,
                                    targetsVersion: nil, revisions: release.hardwareRevisions, image: release.ugif)
    }
}
