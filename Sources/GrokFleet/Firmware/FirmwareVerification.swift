import GrokCrypto
import GrokFirmware

/// `firmware verify`: a `.ugif` image's facts, and where the channel lists it. A local image
/// is parsed as the vendor's host parses it; with a channel, it is looked up by its SHA-256
/// (or by the name given) and checked against that target's signed length, hash and
/// description, as a station checks a download. A channel's target alone is verified through
/// TUF (downloaded into the state directory when needed).
public struct FirmwareVerification: Sendable {
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

    /// Verifies a local image: `bytes` (as read from `file`, shown as `shownAs`; `fileName`,
    /// the name its header must agree with, `nil` for standard input), and with `channel`,
    /// where it lists it; `name` binds it to that target.
    /// - Throws: ``FirmwareError/invalidInput(file:detail:)`` for an image that does not
    ///   parse; ``FirmwareError/updateNotListed(channel:name:)`` for `name` not listed;
    ///   the check's ``FirmwareError`` when the bytes are not what the target says; the
    ///   channel's errors.
    public static func verify(_ bytes: [UInt8], file: String, shownAs: String, fileName: String?,
                              channel: FirmwareChannel? = nil, name: String? = nil) async throws -> FirmwareVerification {
        let image = try UgifImage.read(bytes, fileName: fileName, shownAs: shownAs)
        let facts = UgifFileFacts(file: file, shownAs: shownAs, bytes: bytes, image: image)
        guard let channel else { return FirmwareVerification(facts: facts, channel: nil, listedAs: nil, targetsVersion: nil, revisions: nil) }
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
            listing = listings.first { $0.sha256 == sha256 && $0.length == bytes.count }
        }
        // Length, hash and the description's hardware and version, as a station checks a download.
        let release = try listing.map { try FirmwareRelease(listing: $0, bytes: bytes) }
        return FirmwareVerification(facts: facts, channel: channel.name, listedAs: listing?.name,
                                    targetsVersion: update.versions[channel.name] ?? update.versions["targets"],
                                    revisions: release?.hardwareRevisions)
    }

    /// Verifies `channel`'s target `name` through TUF, downloading it into the state
    /// directory when needed.
    public static func verify(named name: String, in channel: FirmwareChannel) async throws -> FirmwareVerification {
        let release = try await channel.target(named: name)
        return FirmwareVerification(facts: UgifFileFacts(file: FirmwareQuery.imagePath(release.sha256, in: channel), bytes: release.bytes, image: release.ugif), channel: channel.name,
                                    listedAs: release.path.split(separator: "/").last.map(String.init) ?? release.path,
                                    targetsVersion: nil, revisions: release.hardwareRevisions)
    }
}
