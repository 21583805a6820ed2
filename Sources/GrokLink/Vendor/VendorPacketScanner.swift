/// One packet found in a recording by ``VendorPacketScanner``.
public struct ScannedVendorPacket: Sendable, Equatable {
    /// What the bytes decoded to.
    public enum Content: Sendable, Equatable {
        /// A request (host → reader, or reader → host in slave mode), crc8 checked.
        case request(RequestPacket)
        /// A response; one-byte responses carry no crc8, the others were checked.
        case response(ResponsePacket)
        /// Bytes that parsed as a packet whose crc8 failed: what it would have been.
        case badCRC(expecting: VendorPacketDecoder.Expecting, received: UInt8, expected: UInt8)
        /// Bytes that are no packet of either kind.
        case malformed
    }

    public var content: Content
    /// The bytes as they came off the line (the whole burst for a damaged one).
    public var bytes: [UInt8]
    /// The last sample of the packet's last stop bit (counted from the recording's first
    /// sample, 0).
    public var endSample: Int64
    /// The setting it was decoded at.
    public var samplesPerBit: Int

    /// Whether the packet decoded whole (a crc8 that checked, or a one-byte response).
    public var isWhole: Bool {
        switch content {
        case .request, .response: true
        case .badCRC, .malformed: false
        }
    }
}

/// Finds the vendor's packets in a recording of one direction of the link (one channel),
/// without knowing the setting, the direction or whether slave mode was on.
///
/// Every setting that fits the sample rate gets its own ``VendorFSKDemodulator``. Its bytes
/// are cut into bursts where the line was quiet for more than the vendor's inter-byte
/// timeout (20 bit times): the vendor sends each packet in one go, and the other side only
/// ever answers after a packet ended. Each burst is decoded both as requests and as
/// responses (``VendorPacketDecoder``); the reading that takes every byte without a fault is
/// kept (a crc8-checked reading first). A burst neither reading takes is reported damaged.
///
/// A demodulator at the wrong setting turns link audio into bytes too (8, 10 and 12 spb share
/// the "1" tone), and now and then one of its bursts parses whole by chance: a two-byte request
/// whose crc8 checks is one in 256. So the settings are judged strongest first (the most bytes
/// in crc8-checked packets): a packet that lies where a stronger setting already found one (its
/// air time, widened by the burst gap) is that packet's audio read wrongly and is dropped. A
/// setting counts as carried by the recording (and what is left of its packets is reported)
/// only when that rest holds a crc8-checked packet, or at least three whole bursts that are
/// most of its bursts.
///
/// Pure and incremental: feed samples in any chunking, then read ``packets``.
public struct VendorPacketScanner: Sendable {
    private struct Lane: Sendable {
        var demodulator: VendorFSKDemodulator
        var burst: [UInt8] = []
        var burstEnd: Int64 = 0
        var found: [ScannedVendorPacket] = []
        var bytes: [VendorFSKDemodulator.Byte] = []

        var spb: Int { demodulator.setting.samplesPerBit }
    }

    public let sampleRate: Int
    private var lanes: [Lane]

    /// A scanner for every setting at `sampleRate`. The vendor's modem runs at 44.1 and
    /// 48 kHz only; at any other rate there is no setting and nothing is ever found.
    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        let settings = VendorModemSetting.supportedSampleRates.contains(sampleRate) ? VendorModemSetting.all(sampleRate: sampleRate) : []
        lanes = settings.map { Lane(demodulator: VendorFSKDemodulator(setting: $0)) }
    }

    /// The samples per bit this scanner looks for.
    public var samplesPerBit: [Int] { lanes.map(\.spb) }

    /// Consumes the next samples of the recording.
    public mutating func scan(_ samples: UnsafeBufferPointer<Float>) {
        for i in lanes.indices {
            var bytes = lanes[i].bytes
            bytes.removeAll(keepingCapacity: true)
            lanes[i].demodulator.process(samples, into: &bytes)
            lanes[i].bytes = bytes
            let gap = Int64(30 * lanes[i].spb)
            for byte in bytes {
                if !lanes[i].burst.isEmpty && byte.end - lanes[i].burstEnd > gap { close(i) }
                lanes[i].burst.append(byte.value)
                lanes[i].burstEnd = byte.end
            }
        }
    }

    /// Every packet found so far at the settings the recording carries, by time then setting.
    /// A burst still open (the recording may continue) is included as it stands.
    public var packets: [ScannedVendorPacket] {
        var copy = self
        for i in copy.lanes.indices where !copy.lanes[i].burst.isEmpty { copy.close(i) }
        let ranked = copy.lanes.map { (found: $0.found, spb: $0.spb, evidence: Self.evidence($0.found)) }
            .sorted { ($0.evidence.checked, $0.evidence.whole, -$0.spb) > ($1.evidence.checked, $1.evidence.whole, -$1.spb) }
        var claimed: [ClosedRange<Int64>] = []
        var all: [ScannedVendorPacket] = []
        for lane in ranked {
            let free = lane.found.filter { packet in !claimed.contains { $0.overlaps(Self.airTime(packet, widenedBy: 0)) } }
            guard Self.carried(free) else { continue }
            all += free
            claimed += free.map { Self.airTime($0, widenedBy: Int64(30 * lane.spb)) }
        }
        return all.sorted { ($0.endSample, $0.samplesPerBit) < ($1.endSample, $1.samplesPerBit) }
    }

    /// How strongly `found` says its setting is on the line: bytes in crc8-checked packets,
    /// then bytes in whole ones.
    static func evidence(_ found: [ScannedVendorPacket]) -> (checked: Int, whole: Int) {
        var checked = 0
        var whole = 0
        for packet in found where packet.isWhole {
            whole += packet.bytes.count
            switch packet.content {
            case .request: checked += packet.bytes.count
            case .response(let r) where !r.data.isEmpty: checked += packet.bytes.count
            default: break
            }
        }
        return (checked, whole)
    }

    /// The samples `packet`'s bytes were on the air, `margin` more on each side.
    static func airTime(_ packet: ScannedVendorPacket, widenedBy margin: Int64) -> ClosedRange<Int64> {
        let start = packet.endSample - Int64(packet.bytes.count * 10 * packet.samplesPerBit) + 1
        return (start - margin)...(packet.endSample + margin)
    }

    static func carried(_ found: [ScannedVendorPacket]) -> Bool {
        let checked = found.contains {
            switch $0.content {
            case .request: true
            case .response(let r): !r.data.isEmpty
            default: false
            }
        }
        if checked { return true }
        let whole = found.count(where: \.isWhole)
        return whole >= 3 && 2 * whole > found.count
    }

    private mutating func close(_ i: Int) {
        lanes[i].found += Self.decode(burst: lanes[i].burst, end: lanes[i].burstEnd, samplesPerBit: lanes[i].spb)
        lanes[i].burst.removeAll(keepingCapacity: true)
    }

    /// The packets of one burst, read the way that takes every byte (see the type's summary).
    static func decode(burst: [UInt8], end: Int64, samplesPerBit spb: Int) -> [ScannedVendorPacket] {
        let readings = [VendorPacketDecoder.Expecting.requests, .responses].map { reading(burst, $0) }
        let whole = readings.filter { !$0.contains { if case .fault = $0.output { true } else { false } } }
        let bytesBefore = Int64(burst.count)
        func packet(_ output: VendorPacketDecoder.Output, last: Int, bytes: [UInt8]) -> ScannedVendorPacket? {
            let endSample = end - (bytesBefore - 1 - Int64(last)) * Int64(10 * spb)
            switch output {
            case .request(let r): return ScannedVendorPacket(content: .request(r), bytes: bytes, endSample: endSample, samplesPerBit: spb)
            case .response(let r): return ScannedVendorPacket(content: .response(r), bytes: bytes, endSample: endSample, samplesPerBit: spb)
            case .fault: return nil
            }
        }
        // Prefer a reading with a checked packet; then the one with fewer (longer) packets.
        func checked(_ r: [Step]) -> Bool {
            r.contains { if case .request = $0.output { true } else if case .response(let p) = $0.output { !p.data.isEmpty } else { false } }
        }
        if let best = whole.sorted(by: { (checked($0) ? 0 : 1, $0.count) < (checked($1) ? 0 : 1, $1.count) }).first {
            return best.compactMap { packet($0.output, last: $0.last, bytes: Array(burst[$0.first...$0.last])) }
        }
        for r in readings {
            for step in r {
                if case .fault(.badCRC(let received, let expected)) = step.output {
                    let expecting: VendorPacketDecoder.Expecting = r.first?.expecting ?? .requests
                    return [ScannedVendorPacket(content: .badCRC(expecting: expecting, received: received, expected: expected),
                                                bytes: burst, endSample: end, samplesPerBit: spb)]
                }
            }
        }
        return [ScannedVendorPacket(content: .malformed, bytes: burst, endSample: end, samplesPerBit: spb)]
    }

    struct Step {
        var output: VendorPacketDecoder.Output
        var first: Int
        var last: Int
        var expecting: VendorPacketDecoder.Expecting
    }

    /// `burst` through a fresh decoder; a packet left open at the end is a timeout fault.
    static func reading(_ burst: [UInt8], _ expecting: VendorPacketDecoder.Expecting) -> [Step] {
        var decoder = VendorPacketDecoder(expecting: expecting)
        var steps: [Step] = []
        var first = 0
        for (i, byte) in burst.enumerated() {
            if let out = decoder.feed(byte) {
                steps.append(Step(output: out, first: first, last: i, expecting: expecting))
                first = i + 1
            }
        }
        if !decoder.isIdle, let out = decoder.interByteTimeout() {
            steps.append(Step(output: out, first: first, last: burst.count - 1, expecting: expecting))
        }
        return steps
    }
}
