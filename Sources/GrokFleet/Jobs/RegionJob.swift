import GrokFirmware
import UGrokIt

/// `grokctl region set`: sets one region on each Grokker at once, by the vendor's rules: our
/// entry for the region is sent (in the allocation the unit's band tunes), unless the
/// channel's signed region catalogue has other values for the region (then the
/// catalogue's), or the vendor's own entry with ``RegionTableChoice/vendor``.
public struct RegionJob: Sendable {
    public var access: DeviceAccess
    public var region: VendorRegion
    /// The channel's verified catalogue, when a channel was given.
    public var catalogue: RegionCatalogue?
    /// Which values SetRegion carries: ours (default) or the vendor's table.
    public var table: RegionTableChoice

    public init(access: DeviceAccess, region: VendorRegion, catalogue: RegionCatalogue? = nil, table: RegionTableChoice = .ours) {
        self.access = access
        self.region = region
        self.catalogue = catalogue
        self.table = table
    }

    /// Sets the region on every device; each result holds the unit's serial number.
    public func run(_ devices: [DeviceSpec]) -> [DeviceResult<String>] {
        FleetRunner.each(devices) { spec in
            DeviceResult(device: spec, outcome: Result {
                try access.connected(spec) { session, _ in
                    try session.setRegion(region.code, catalogue: catalogue, table: table).serialNumberText
                }
            })
        }
    }

    /// The entries SetRegion can carry with `table`, as sent: the vendor's 22, or every
    /// allocation of ours (Russia twice, one per hardware band), in the vendor's order.
    public static func entries(_ table: RegionTableChoice) throws(RegionEntryError) -> [VendorRegionEntry] {
        switch table {
        case .vendor:
            return VendorRegionTable.entries
        case .ours:
            var out: [VendorRegionEntry] = []
            for region in RegionCatalog.all {
                for allocation in RegionCatalog.allocations(number: region.number) { out.append(try VendorRegionEntry(allocation)) }
            }
            return out
        }
    }
}
