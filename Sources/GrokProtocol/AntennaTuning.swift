/// The reflected power of one channel of the region's channel plan.
public struct ChannelReflection: Sendable, Hashable {
    /// The channel, kHz.
    public var frequencyKHz: UInt32
    /// Power reflected back from the antenna at the reader's maximum power, 0.1 dBm.
    public var reflectedTenthsDBm: Int16

    public init(frequencyKHz: UInt32, reflectedTenthsDBm: Int16) {
        self.frequencyKHz = frequencyKHz
        self.reflectedTenthsDBm = reflectedTenthsDBm
    }
}

/// The answer to ``Command/getAntennaTuning`` (vendor `getAntennaTuning`).
public struct AntennaTuningInfo: Sendable, Hashable {
    /// The average reflected power over the region's channels as the antenna is tuned now
    /// (vendor static average), 0.1 dBm.
    public var staticAverageTenthsDBm: Int16
    /// The average reflected power the reader measured on the channels it hopped to during
    /// the last inventory, at that inventory's power (vendor dynamic average), 0.1 dBm;
    /// `nil` before any inventory since power-on.
    public var dynamicAverageTenthsDBm: Int16?
    /// Every channel of the region's plan, in the plan's order.
    public var channels: [ChannelReflection]

    public init(staticAverageTenthsDBm: Int16, dynamicAverageTenthsDBm: Int16?, channels: [ChannelReflection]) {
        self.staticAverageTenthsDBm = staticAverageTenthsDBm
        self.dynamicAverageTenthsDBm = dynamicAverageTenthsDBm
        self.channels = channels
    }

    /// Most channels in one answer.
    public static let maxChannels = 255

    func write(to w: inout ByteWriter) {
        w.i16(staticAverageTenthsDBm)
        w.u8(dynamicAverageTenthsDBm == nil ? 0 : 1)
        w.i16(dynamicAverageTenthsDBm ?? 0)
        let list = channels.prefix(Self.maxChannels)
        w.u8(UInt8(list.count))
        for c in list { w.u32(c.frequencyKHz); w.i16(c.reflectedTenthsDBm) }
    }

    static func read(from r: inout ByteReader) throws(ProtocolError) -> AntennaTuningInfo {
        let stat = try r.i16("antennaTuning.static")
        let hasDynamic = try r.u8("antennaTuning.hasDynamic")
        guard hasDynamic <= 1 else { throw .invalidValue(field: "antennaTuning.hasDynamic", value: Int(hasDynamic)) }
        let dynamic = try r.i16("antennaTuning.dynamic")
        let count = try r.u8("antennaTuning.channels.count")
        var channels: [ChannelReflection] = []
        for _ in 0..<count {
            channels.append(ChannelReflection(frequencyKHz: try r.u32("antennaTuning.channel.frequency"),
                                              reflectedTenthsDBm: try r.i16("antennaTuning.channel.reflected")))
        }
        return AntennaTuningInfo(staticAverageTenthsDBm: stat, dynamicAverageTenthsDBm: hasDynamic == 1 ? dynamic : nil,
                                 channels: channels)
    }
}

/// Progress of a running antenna tuning (event opcode ``Opcode/startAntennaTuning``): one
/// channel has been tuned.
public struct AntennaTuningProgress: Sendable, Hashable {
    /// The channel just tuned, kHz.
    public var frequencyKHz: UInt32
    /// Its reflected power after tuning, at the reader's maximum power, 0.1 dBm.
    public var reflectedTenthsDBm: Int16
    /// Channels tuned so far in this run (1 for the first event).
    public var tuned: UInt16
    /// Channels in the region's plan.
    public var total: UInt16

    public init(frequencyKHz: UInt32, reflectedTenthsDBm: Int16, tuned: UInt16, total: UInt16) {
        self.frequencyKHz = frequencyKHz
        self.reflectedTenthsDBm = reflectedTenthsDBm
        self.tuned = tuned
        self.total = total
    }

    public func encode() -> [UInt8] {
        encodeMessage(version: .current, kind: .event, opcode: .startAntennaTuning, id: 0) { w in
            w.u32(frequencyKHz); w.i16(reflectedTenthsDBm); w.u16(tuned); w.u16(total)
        }
    }

    /// Decodes a tuning progress event. Pure and bounded; never traps.
    public static func decode(_ message: some Collection<UInt8>) throws(ProtocolError) -> AntennaTuningProgress {
        let (header, newerMinor, bytes) = try decodeHeader(message, expecting: .event)
        guard header.opcode == .startAntennaTuning else { throw .unknownOpcode(header.opcode.rawValue) }
        var r = ByteReader(bytes, from: MessageHeader.size)
        let progress = AntennaTuningProgress(
            frequencyKHz: try r.u32("tuningProgress.frequency"), reflectedTenthsDBm: try r.i16("tuningProgress.reflected"),
            tuned: try r.u16("tuningProgress.tuned"), total: try r.u16("tuningProgress.total"))
        try finishMessage(r, newerMinor: newerMinor)
        return progress
    }
}
