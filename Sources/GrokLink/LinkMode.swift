/// A modem mode as the two sides agree on it: samples per bit at a reference sample rate.
///
/// The vendor's default, 12 samples per bit at 44.1 kHz (3675 bit/s), is ``base`` and always
/// works; the faster rungs of ``ladder`` are tried after the handshake and kept only when the
/// link measures good enough. A side whose port runs at another rate (48 kHz) keeps the same
/// bit rate with fractional samples per bit.
public struct LinkMode: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The reference rate modes are defined at.
    public static let referenceRate = 44_100
    /// The base mode: 12 samples per bit at 44.1 kHz, 3675 bit/s.
    public static let base = LinkMode(samplesPerBit: 12)
    /// Every mode of link protocol 1.x, slowest first. On the wire a mode is its index here
    /// (capabilities carry a mask of indices), so the ladder only ever grows at the end.
    public static let ladder: [LinkMode] = [12, 8, 6, 4, 3, 2.5].map { LinkMode(samplesPerBit: $0) }

    /// Samples per bit at ``referenceRate``.
    public var samplesPerBit: Double

    public init(samplesPerBit: Double) {
        self.samplesPerBit = samplesPerBit
    }

    /// This mode's index in ``ladder`` (its number on the wire), if it has one.
    public var wireIndex: UInt8? { LinkMode.ladder.firstIndex(of: self).map { UInt8($0) } }

    /// The mode with wire number `index`, if this build knows it.
    public init?(wireIndex index: UInt8) {
        guard Int(index) < LinkMode.ladder.count else { return nil }
        self = LinkMode.ladder[Int(index)]
    }

    /// Raw bits per second on the wire.
    public var bitRate: Double { Double(LinkMode.referenceRate) / samplesPerBit }

    /// Samples per bit on a port running at `sampleRate`.
    public func samplesPerBit(atRate sampleRate: Int) -> Double {
        Double(sampleRate) / bitRate
    }

    public static func < (a: LinkMode, b: LinkMode) -> Bool { a.bitRate < b.bitRate }

    public var description: String {
        let rate = bitRate
        let text = rate == rate.rounded() ? String(Int(rate)) : String(format1: rate)
        let spb = samplesPerBit == samplesPerBit.rounded() ? String(Int(samplesPerBit)) : String(samplesPerBit)
        return "\(text) bit/s (\(spb) samples/bit @ 44.1 kHz)"
    }
}

extension String {
    /// One decimal place without Foundation.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
