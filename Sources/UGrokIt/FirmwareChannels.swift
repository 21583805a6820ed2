import GrokFirmware
import GrokProtocol

// The vendor's calls on the one firmware channel, the TUF channel.

/// One firmware listing of a channel and how it relates to a reader, when one was given.
public struct ChannelUpdate: Sendable, Hashable {
    public let listing: FirmwareListing
    /// `nil` when no reader was given.
    public let compatibility: FirmwareCompatibility?
}

/// The vendor SDK's firmware-channel calls on the TUF channel (``FirmwareChannel``, a
/// repository made with `grokctl repo`): everything is refreshed and verified by TUF, and an
/// image is a `.ugif` checked against its signed description before it is returned.
extension FirmwareChannel {
    /// Vendor `forceFirmwareChannelReload`: refreshes the trusted metadata; the trusted
    /// timestamp version.
    @discardableResult
    public func reload() async throws -> UInt64 {
        try await repository.update(channels: [name]).versions["timestamp"] ?? 0
    }

    /// Vendor `loadUpdatesFromChannel`: the channel's firmware, newest first, each judged
    /// against `reader` (its GetVersion answer) when given, as ``FirmwareChoice`` judges it
    /// (a reader in its loader: whatever fits its hardware is an upgrade).
    public func loadUpdates(for reader: VendorReaderVersion? = nil) async throws -> [ChannelUpdate] {
        let unit = reader.map(FirmwareUnit.init)
        return try await listings().map { listing in
            ChannelUpdate(listing: listing, compatibility: unit.map { FirmwareChoice.judge(.listing(listing), for: $0) })
        }
    }

    /// Vendor `loadUpdate`: the verified release `name` (downloaded unless already held).
    public func loadUpdate(_ name: String) async throws -> FirmwareRelease {
        try await target(named: name)
    }

    /// Vendor `firmwareCheckCompatibility`: how release `name` relates to `reader` (``FirmwareChoice/judge(_:for:)``).
    public func checkCompatibility(_ name: String, reader: VendorReaderVersion) async throws -> FirmwareCompatibility {
        let path = name.hasPrefix(self.name + "/") ? name : self.name + "/" + name
        guard let listing = try await listings().first(where: { $0.path == path }) else {
            throw FirmwareError.updateNotListed(channel: self.name, name: name)
        }
        return FirmwareChoice.judge(.listing(listing), for: FirmwareUnit(reader))
    }
}
