/// The hardware band a region entry is for (vendor entry byte 2): which radio and antenna a
/// Grokker must have to tune the entry's channels.
public enum VendorFrequencyBand: UInt8, Sendable, Hashable, CaseIterable {
    /// The 900 MHz hardware (902-928 MHz): code 0, every vendor region but three.
    case band900 = 0
    /// The 860 MHz hardware (865-868 MHz): code 1, the vendor's ETSI (EU), Latvia and India.
    case band860 = 1

    /// The band whose hardware tunes every one of `channelsKHz`: 860 MHz when all lie below
    /// 900 MHz, else 900 MHz.
    public static func forChannels(_ channelsKHz: [Int]) -> VendorFrequencyBand {
        !channelsKHz.isEmpty && channelsKHz.allSatisfy { $0 < 900_000 } ? .band860 : .band900
    }
}

/// One region entry as the Grokker's firmware takes it: the vendor's 120-byte layout, sent by
/// `SetRegion` (0x11) and built into the vendor host library as a table of 22 (docs/regions.md
/// has the layout and the vendor's values; docs/vendor-protocol.md the command).
///
/// | bytes | field |
/// |---|---|
/// | 0 | region index, 0-21 (our ``RegionEntry/number`` - 1) |
/// | 1 | revision |
/// | 2 | hardware band (``VendorFrequencyBand``) |
/// | 3 | channel count, at most 50 |
/// | 4-103 | 50 channels, u16 LE in 50 kHz units, in the order the reader hops; unused ones 0 |
/// | 104-111 | zero |
/// | 112-113 | longest time on one channel, ms, LE16 |
/// | 114 | shortest inventory round, ms |
/// | 115 | bit 0 listen-before-talk on by default, bit 1 a configuration may switch it |
/// | 116 | listening time, ms |
/// | 117 | listening threshold, dBm, signed |
/// | 118 | highest conducted power, (dBm - 5) x 10 |
/// | 119 | structure padding: never sent, 0 in every vendor entry |
///
/// Decoding never traps: a short or malformed entry throws ``ProtocolError``.
public struct VendorRegionEntry: Sendable, Hashable {
    /// Bytes in an entry.
    public static let byteCount = 120
    /// The most channels an entry holds.
    public static let maxChannels = 50
    /// Bytes of a `SetRegion` payload: the CRC-32 and the first 119 bytes of the entry.
    public static let setRegionPayloadCount = 123
    /// The entry bytes a `SetRegion` carries (all but the padding byte 119).
    public static let setRegionEntryBytes = 119
    /// Channels are whole multiples of this, kHz.
    public static let channelUnitKHz = 50
    /// The Grokker's highest conducted power, dBm (vendor code 250; every preset's upper limit).
    public static let hardwareMaxPowerDBm = 30.0

    /// Region index, 0-21: the position in the vendor's table.
    public var index: UInt8
    /// Revision of the entry: 0 in every vendor entry; ours carry ``RegionEntry/revision``.
    public var revision: UInt8
    /// Hardware band code (``band`` when it is one of the two known).
    public var frequencyBand: UInt8
    /// Channel centre frequencies, kHz, in hop order (at most 50, each a multiple of 50 kHz).
    public var channelsKHz: [Int]
    /// The longest the reader stays on one channel, ms.
    public var maxMillisecondsPerChannel: UInt16
    /// The shortest inventory round, ms.
    public var minMillisecondsPerRound: UInt8
    /// Listen before talk unless a configuration says otherwise.
    public var listenBeforeTalkByDefault: Bool
    /// A configuration may switch listening on or off.
    public var listenBeforeTalkOverrideAllowed: Bool
    /// Listening time, ms.
    public var listenMilliseconds: UInt8
    /// Listening threshold, dBm.
    public var listenThresholdDBm: Int8
    /// Highest conducted power as coded: (dBm - 5) x 10.
    public var maxPowerCode: UInt8
    /// Byte 119 as received (structure padding, 0 in the vendor's table).
    public var padding: UInt8

    /// Creates an entry from its fields.
    public init(index: UInt8, revision: UInt8, frequencyBand: UInt8, channelsKHz: [Int], maxMillisecondsPerChannel: UInt16,
                minMillisecondsPerRound: UInt8, listenBeforeTalkByDefault: Bool, listenBeforeTalkOverrideAllowed: Bool,
                listenMilliseconds: UInt8, listenThresholdDBm: Int8, maxPowerCode: UInt8, padding: UInt8 = 0) {
        self.index = index
        self.revision = revision
        self.frequencyBand = frequencyBand
        self.channelsKHz = channelsKHz
        self.maxMillisecondsPerChannel = maxMillisecondsPerChannel
        self.minMillisecondsPerRound = minMillisecondsPerRound
        self.listenBeforeTalkByDefault = listenBeforeTalkByDefault
        self.listenBeforeTalkOverrideAllowed = listenBeforeTalkOverrideAllowed
        self.listenMilliseconds = listenMilliseconds
        self.listenThresholdDBm = listenThresholdDBm
        self.maxPowerCode = maxPowerCode
        self.padding = padding
    }

    /// The hardware band, when the code is a known one.
    public var band: VendorFrequencyBand? { VendorFrequencyBand(rawValue: frequencyBand) }

    /// The highest conducted power, dBm.
    public var maxPowerDBm: Double { Double(maxPowerCode) / 10 + 5 }

    /// The power code for `dBm` (rounded down to 0.1 dB, within 5 to 30.5 dBm).
    public static func powerCode(dBm: Double) -> UInt8 {
        guard dBm.isFinite else { return 0 }
        let tenths = ((dBm - 5) * 10 + 1e-9).rounded(.down)
        return UInt8(max(0, min(255, tenths)))
    }

    // MARK: Bytes

    /// Reads an entry of 120 bytes (119 are accepted: the form a `SetRegion` carries, padding 0).
    /// - Throws: ``ProtocolError/truncated(field:needed:available:)`` for fewer than 119 bytes,
    ///   ``ProtocolError/trailingBytes(count:)`` for more than 120,
    ///   ``ProtocolError/invalidValue(field:value:)`` for a channel count above 50.
    public init<Bytes: Collection>(bytes: Bytes) throws(ProtocolError) where Bytes.Element == UInt8 {
        let b = Array(bytes)
        guard b.count >= Self.setRegionEntryBytes else {
            throw .truncated(field: "region_entry", needed: Self.byteCount, available: b.count)
        }
        guard b.count <= Self.byteCount else { throw .trailingBytes(count: b.count - Self.byteCount) }
        let count = Int(b[3])
        guard count <= Self.maxChannels else { throw .invalidValue(field: "region_entry.channel_count", value: count) }
        func u16(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
        self.init(
            index: b[0], revision: b[1], frequencyBand: b[2],
            channelsKHz: (0..<count).map { u16(4 + 2 * $0) * Self.channelUnitKHz },
            maxMillisecondsPerChannel: UInt16(u16(112)), minMillisecondsPerRound: b[114],
            listenBeforeTalkByDefault: b[115] & 0x01 != 0, listenBeforeTalkOverrideAllowed: b[115] & 0x02 != 0,
            listenMilliseconds: b[116], listenThresholdDBm: Int8(bitPattern: b[117]), maxPowerCode: b[118],
            padding: b.count == Self.byteCount ? b[119] : 0)
    }

    /// The 120 bytes of the entry. Channels beyond 50 are dropped and a channel is written as
    /// its whole number of 50 kHz units (clamped to 16 bits); ``init(_:antennaGainDBi:)``
    /// refuses entries where that would change anything.
    public func encode() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: Self.byteCount)
        let channels = channelsKHz.prefix(Self.maxChannels)
        b[0] = index
        b[1] = revision
        b[2] = frequencyBand
        b[3] = UInt8(channels.count)
        for (i, kHz) in channels.enumerated() {
            let units = UInt16(clamping: max(0, kHz) / Self.channelUnitKHz)
            b[4 + 2 * i] = UInt8(units & 0xFF)
            b[5 + 2 * i] = UInt8(units >> 8)
        }
        b[112] = UInt8(maxMillisecondsPerChannel & 0xFF)
        b[113] = UInt8(maxMillisecondsPerChannel >> 8)
        b[114] = minMillisecondsPerRound
        b[115] = (listenBeforeTalkByDefault ? 0x01 : 0) | (listenBeforeTalkOverrideAllowed ? 0x02 : 0)
        b[116] = listenMilliseconds
        b[117] = UInt8(bitPattern: listenThresholdDBm)
        b[118] = maxPowerCode
        b[119] = padding
        return b
    }

    /// The `SetRegion` (0x11) payload, 123 bytes: CRC-32/MPEG-2 of the entry's first 119 bytes,
    /// little-endian, then those 119 bytes.
    public func setRegionPayload() -> [UInt8] {
        let body = Array(encode().prefix(Self.setRegionEntryBytes))
        let crc = Self.crc32MPEG2(body)
        return [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)] + body
    }

    /// Reads a `SetRegion` payload (what a Grokker receives).
    /// - Throws: ``ProtocolError/truncated(field:needed:available:)`` or
    ///   ``ProtocolError/trailingBytes(count:)`` for a payload that is not 123 bytes,
    ///   ``ProtocolError/invalidValue(field:value:)`` with field `set_region.crc32` and the
    ///   received CRC when it does not match, or any error of ``init(bytes:)``.
    public init<Bytes: Collection>(setRegionPayload payload: Bytes) throws(ProtocolError) where Bytes.Element == UInt8 {
        let p = Array(payload)
        guard p.count >= Self.setRegionPayloadCount else {
            throw .truncated(field: "set_region", needed: Self.setRegionPayloadCount, available: p.count)
        }
        guard p.count == Self.setRegionPayloadCount else { throw .trailingBytes(count: p.count - Self.setRegionPayloadCount) }
        let received = UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
        let body = p[4...]
        guard Self.crc32MPEG2(body) == received else { throw .invalidValue(field: "set_region.crc32", value: Int(received)) }
        try self.init(bytes: body)
    }

    /// CRC-32/MPEG-2: polynomial 0x04C11DB7, initial 0xFFFFFFFF, not reflected, no final xor
    /// (check value 0x0376E6E7 for "123456789").
    static func crc32MPEG2<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    // MARK: Our region entries

    /// The entry our ``RegionEntry`` becomes on the wire: index = number - 1, our revision,
    /// the band whose hardware tunes the channels, the channels in ``hopOrder(_:)``, our dwell,
    /// round and listening values, and the highest conducted power the region allows with an
    /// antenna of `antennaGainDBi` (``RegionEntry/maxConductedPowerDBm(antennaGainDBi:)``),
    /// never above the Grokker's 30 dBm.
    /// - Throws: ``RegionEntryError`` naming the field the vendor layout cannot carry (number
    ///   outside 1-22, more than 50 channels, a channel off the 50 kHz grid, a time too long
    ///   for its byte, a power below 5 dBm).
    public init(_ entry: RegionEntry, antennaGainDBi: Double = 0) throws(RegionEntryError) {
        func bad(_ field: String, _ expected: String, _ found: String) -> RegionEntryError {
            RegionEntryError(region: entry.name, field: field, expected: expected, found: found)
        }
        guard (1...22).contains(entry.number) else { throw bad("number", "1 to 22", String(entry.number)) }
        guard (0...255).contains(entry.revision) else { throw bad("revision", "0 to 255", String(entry.revision)) }
        guard entry.channelsKHz.count <= Self.maxChannels else {
            throw bad("channels_khz", "at most \(Self.maxChannels) channels", String(entry.channelsKHz.count))
        }
        for (i, kHz) in entry.channelsKHz.enumerated() where kHz % Self.channelUnitKHz != 0 || kHz <= 0 || kHz / Self.channelUnitKHz > 0xFFFF {
            throw bad("channels_khz[\(i)]", "a multiple of \(Self.channelUnitKHz) kHz", "\(kHz) kHz")
        }
        guard (0...0xFFFF).contains(entry.maxDwellMilliseconds) else { throw bad("max_dwell_ms", "0 to 65535", String(entry.maxDwellMilliseconds)) }
        guard (0...255).contains(entry.minRoundMilliseconds) else { throw bad("min_round_ms", "0 to 255", String(entry.minRoundMilliseconds)) }
        let lbt = entry.listenBeforeTalk
        guard (0...255).contains(lbt.listenMilliseconds) else {
            throw bad("listen_before_talk.listen_ms", "0 to 255", String(lbt.listenMilliseconds))
        }
        guard (-128...127).contains(lbt.thresholdDBm) else {
            throw bad("listen_before_talk.threshold_dbm", "-128 to 127", String(lbt.thresholdDBm))
        }
        let power = min(Self.hardwareMaxPowerDBm, entry.maxConductedPowerDBm(antennaGainDBi: antennaGainDBi))
        guard power >= 5 else { throw bad("max_power_dbm", "a conducted power of at least 5 dBm", "\(power) dBm") }
        self.init(
            index: UInt8(entry.number - 1), revision: UInt8(entry.revision),
            frequencyBand: VendorFrequencyBand.forChannels(entry.channelsKHz).rawValue,
            channelsKHz: Self.hopOrder(entry.channelsKHz), maxMillisecondsPerChannel: UInt16(entry.maxDwellMilliseconds),
            minMillisecondsPerRound: UInt8(entry.minRoundMilliseconds), listenBeforeTalkByDefault: lbt.enabledByDefault,
            listenBeforeTalkOverrideAllowed: lbt.overrideAllowed, listenMilliseconds: UInt8(lbt.listenMilliseconds),
            listenThresholdDBm: Int8(lbt.thresholdDBm), maxPowerCode: Self.powerCode(dBm: power))
    }

    /// The order we send channels in: the firmware hops through the list as given (the vendor's
    /// own lists are scrambled; FCC 15.247 asks for a pseudorandom order), so we scramble too,
    /// deterministically, and so that no two channels next to each other in the list are next
    /// to each other on the band (for 5 or more). With the channels ascending at positions
    /// 0..<n: every `s`-th of them, wrapping, `s` the whole number nearest 0.618 x n that
    /// shares no factor with n and lies in 2...n-2; where there is none (3, 4 and 6 channels),
    /// the two halves interleaved, the longer (or for an even count the upper) half first.
    /// Fewer than 3 channels stay ascending.
    public static func hopOrder(_ channelsKHz: [Int]) -> [Int] {
        let sorted = channelsKHz.sorted()
        let n = sorted.count
        guard n >= 3 else { return sorted }
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let target = Double(n) * 0.618
        let strides = n >= 4 ? (2...(n - 2)).filter { gcd($0, n) == 1 } : []
        if let step = strides.min(by: { abs(Double($0) - target) < abs(Double($1) - target) }) {
            return (0..<n).map { sorted[($0 * step) % n] }
        }
        let lower = Array(sorted[..<((n + 1) / 2)])
        let upper = Array(sorted[((n + 1) / 2)...])
        let (first, second) = n % 2 == 0 ? (upper, lower) : (lower, upper)
        return (0..<n).map { $0 % 2 == 0 ? first[$0 / 2] : second[$0 / 2] }
    }
}

extension RegionEntry {
    /// Our entry for what a Grokker received: the vendor index as our number (index + 1), the
    /// name and code of ``RegionCatalog``, the channels ascending, their span as the band (the
    /// vendor entry has no band edges), its dwell, round and listening values, and its conducted
    /// power plus `antennaGainDBi` as EIRP. `nil` for an index outside 0-21.
    public init?(vendor: VendorRegionEntry, antennaGainDBi: Double = 0) {
        guard let region = RegionCatalog.named(number: UInt16(vendor.index) + 1) else { return nil }
        let channels = vendor.channelsKHz.sorted()
        self.init(
            number: region.number, name: region.name, code: region.code, revision: Int(vendor.revision),
            bands: channels.isEmpty ? [] : [FrequencyBand(lowKHz: channels[0], highKHz: channels[channels.count - 1])],
            channelsKHz: channels, maxDwellMilliseconds: Int(vendor.maxMillisecondsPerChannel),
            minRoundMilliseconds: Int(vendor.minMillisecondsPerRound),
            listenBeforeTalk: ListenBeforeTalk(
                enabledByDefault: vendor.listenBeforeTalkByDefault, overrideAllowed: vendor.listenBeforeTalkOverrideAllowed,
                listenMilliseconds: Int(vendor.listenMilliseconds), thresholdDBm: Int(vendor.listenThresholdDBm)),
            maxPowerDBm: vendor.maxPowerDBm + antennaGainDBi, powerReference: .eirp,
            source: "SetRegion entry (vendor layout)")
    }

    /// The hardware band whose radio tunes this entry's channels.
    public var hardwareBand: VendorFrequencyBand { VendorFrequencyBand.forChannels(channelsKHz) }
}
