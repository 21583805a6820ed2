import GrokProtocol
import UGrokIt

/// `grokctl locate`: a proximity reading of one tag per history interval, like the vendor's
/// Geiger counter: stronger and more frequent reads mean closer.
public struct LocateJob: Sendable {
    /// One interval; also a line of `locate --json`.
    public struct Reading: Encodable, Sendable, Hashable {
        /// The end of the interval, in seconds from the start (to a tenth).
        public var timeS: Double
        /// The tag's reads in the interval.
        public var reads: Int
        /// The strongest RSSI of the interval, dBm (`TagReport.rssiDBm`); nil when the tag
        /// was not heard or the reader sent no RSSI.
        public var rssi: Double?
        /// 0 (not heard, or at the bottom of the RSSI scale) to 1 (its top), from ``rssi``.
        public var proximity: Double

        enum CodingKeys: String, CodingKey {
            case reads, proximity, rssi
            case timeS = "time_s"
        }
    }

    public var access: DeviceAccess
    public var epc: UgiEpc
    /// How long to follow the tag, in seconds of audio.
    public var seconds: Double

    public init(access: DeviceAccess, epc: UgiEpc, seconds: Double) {
        self.access = access
        self.epc = epc
        self.seconds = seconds
    }

    /// 0 (not heard) to 1 (the top of the RSSI scale the reader sends, ``VendorRSSI``):
    /// where `rssi` (dBm) lies between the scale's lowest and highest figures.
    public static func proximity(rssi: Double?) -> Double {
        guard let rssi else { return 0 }
        return min(1, max(0, (rssi - VendorRSSI.floorDBm) / (VendorRSSI.ceilingDBm - VendorRSSI.floorDBm)))
    }

    /// The inventory that follows the tag: the vendor's locate preset, selecting the tag's
    /// EPC. The bar is the tag's RSSI, read round after round: the preset neither reports
    /// RSSI nor toggles A/B (an S0 tag kept powered stays inventoried), so it asks for both.
    public var configuration: UgiRfidConfiguration {
        var configuration = UgiRfidConfiguration.config(inventoryType: .locateDistance)
        configuration.reportRssi = true
        configuration.roundsWithNoFindsToToggleAB = 1
        configuration.selectBank = .epc
        configuration.selectOffset = 32
        configuration.selectMask = epc.bytes
        configuration.selectMaskBitLength = epc.bytes.count * 8
        return configuration
    }

    /// Follows the tag on `device`, handing each interval's reading to `reading` (on the
    /// calling thread) as it ends; returns whether the tag was heard at all.
    public func run(on device: DeviceSpec, reading: (Reading) -> Void) throws -> Bool {
        let configuration = self.configuration
        try configuration.validate()
        return try access.connected(device) { session, _ in
            try session.startInventory(configuration)
            let interval = Double(configuration.historyIntervalMSec) / 1000
            var elapsed = 0.0
            var heard = false
            while elapsed < seconds - 1e-9 {
                let step = min(interval, seconds - elapsed)
                try session.collect(forAtMost: step)
                elapsed += step
                let reads = session.takeReports().filter { $0.epc == epc.bytes }
                let rssi = reads.compactMap(\.rssiDBm).max()
                heard = heard || !reads.isEmpty
                reading(Reading(timeS: (elapsed * 10).rounded() / 10, reads: reads.count, rssi: rssi,
                                proximity: Self.proximity(rssi: rssi)))
            }
            _ = try session.stopInventory()
            return heard
        }
    }
}
