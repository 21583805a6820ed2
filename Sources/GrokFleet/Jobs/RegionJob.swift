import GrokFirmware
import UGrokIt

/// `grokctl region set`: sets one region on each Grokker at once, by the vendor's rules: its
/// built-in region entry is sent, unless the channel's signed region catalogue has other
/// values for the region (then the catalogue's).
public struct RegionJob: Sendable {
    public var access: DeviceAccess
    public var region: VendorRegion
    /// The channel's verified catalogue, when a channel was given.
    public var catalogue: RegionCatalogue?

    public init(access: DeviceAccess, region: VendorRegion, catalogue: RegionCatalogue? = nil) {
        self.access = access
        self.region = region
        self.catalogue = catalogue
    }

    /// Sets the region on every device; each result holds the unit's serial number.
    public func run(_ devices: [DeviceSpec]) -> [DeviceResult<String>] {
        FleetRunner.each(devices) { spec in
            DeviceResult(device: spec, outcome: Result {
                try access.connected(spec) { session, _ in
                    try session.setRegion(region.code, catalogue: catalogue).serialNumberText
                }
            })
        }
    }
}
