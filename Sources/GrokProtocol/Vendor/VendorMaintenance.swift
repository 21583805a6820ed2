/// GetDiagnosticData (0x06): request `[reset]` (1 resets the reader's counters, the API's
/// `reset:` argument); response up to 52 bytes, the reader's counters as a little-endian
/// struct (`CommandGetDiagnosticData`, 0x14650; field names from its debug strings). From
/// code only: not yet seen on the wire.
public struct VendorDiagnostics: Sendable, Hashable {
    public static let byteCount = 52

    /// [0] clock slew << 16 (the Java `byteProtocolSkewFactor` x 65536).
    public var clockSlew16: UInt32
    /// [4], [8]
    public var bytesSent: UInt32
    public var bytesReceived: UInt32
    /// [12] u16, then two bytes the library never reads ([14..15], kept as read).
    public var subsequentReadTimeouts: UInt16
    public var padding: UInt16
    /// [16], [20]
    public var packetsSent: UInt32
    public var packetsReceived: UInt32
    /// [24..35] six u16 counters.
    public var sendFailures: UInt16
    public var sendRetries: UInt16
    public var sendTimeouts: UInt16
    public var invalidPackets: UInt16
    public var internalCrcMismatches: UInt16
    public var crcMismatches: UInt16
    /// [36], [40]
    public var rawInventoryRounds: UInt32
    public var rawTagFinds: UInt32
    /// [44..51] four u16 counters.
    public var uniqueTags: UInt16
    public var forgottenTags: UInt16
    public var forgottenNotAcknowledgedTags: UInt16
    public var forgottenNotSentTags: UInt16

    /// Vendor `byteProtocolSkewFactor`: the factor the reader's clock is off by
    /// (``clockSlew16`` / 65536).
    public var skewFactor: Double { Double(clockSlew16) / 65536 }

    public init(clockSlew16: UInt32 = 0, bytesSent: UInt32 = 0, bytesReceived: UInt32 = 0, subsequentReadTimeouts: UInt16 = 0,
                padding: UInt16 = 0, packetsSent: UInt32 = 0, packetsReceived: UInt32 = 0, sendFailures: UInt16 = 0,
                sendRetries: UInt16 = 0, sendTimeouts: UInt16 = 0, invalidPackets: UInt16 = 0, internalCrcMismatches: UInt16 = 0,
                crcMismatches: UInt16 = 0, rawInventoryRounds: UInt32 = 0, rawTagFinds: UInt32 = 0, uniqueTags: UInt16 = 0,
                forgottenTags: UInt16 = 0, forgottenNotAcknowledgedTags: UInt16 = 0, forgottenNotSentTags: UInt16 = 0) {
        self.clockSlew16 = clockSlew16
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.subsequentReadTimeouts = subsequentReadTimeouts
        self.padding = padding
        self.packetsSent = packetsSent
        self.packetsReceived = packetsReceived
        self.sendFailures = sendFailures
        self.sendRetries = sendRetries
        self.sendTimeouts = sendTimeouts
        self.invalidPackets = invalidPackets
        self.internalCrcMismatches = internalCrcMismatches
        self.crcMismatches = crcMismatches
        self.rawInventoryRounds = rawInventoryRounds
        self.rawTagFinds = rawTagFinds
        self.uniqueTags = uniqueTags
        self.forgottenTags = forgottenTags
        self.forgottenNotAcknowledgedTags = forgottenNotAcknowledgedTags
        self.forgottenNotSentTags = forgottenNotSentTags
    }

    public func encode() -> [UInt8] {
        var w = VendorWriter(capacity: Self.byteCount)
        w.u32(clockSlew16)
        w.u32(bytesSent)
        w.u32(bytesReceived)
        w.u16(subsequentReadTimeouts)
        w.u16(padding)
        w.u32(packetsSent)
        w.u32(packetsReceived)
        for value in [sendFailures, sendRetries, sendTimeouts, invalidPackets, internalCrcMismatches, crcMismatches] {
            w.u16(value)
        }
        w.u32(rawInventoryRounds)
        w.u32(rawTagFinds)
        for value in [uniqueTags, forgottenTags, forgottenNotAcknowledgedTags, forgottenNotSentTags] { w.u16(value) }
        return w.bytes
    }

    public init(decoding data: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(data)
        clockSlew16 = try r.u32("diagnostics.clockSlew")
        bytesSent = try r.u32("diagnostics.bytesSent")
        bytesReceived = try r.u32("diagnostics.bytesReceived")
        subsequentReadTimeouts = try r.u16("diagnostics.subsequentReadTimeouts")
        padding = try r.u16("diagnostics.padding")
        packetsSent = try r.u32("diagnostics.packetsSent")
        packetsReceived = try r.u32("diagnostics.packetsReceived")
        sendFailures = try r.u16("diagnostics.sendFailures")
        sendRetries = try r.u16("diagnostics.sendRetries")
        sendTimeouts = try r.u16("diagnostics.sendTimeouts")
        invalidPackets = try r.u16("diagnostics.invalidPackets")
        internalCrcMismatches = try r.u16("diagnostics.internalCrcMismatches")
        crcMismatches = try r.u16("diagnostics.crcMismatches")
        rawInventoryRounds = try r.u32("diagnostics.rawInventoryRounds")
        rawTagFinds = try r.u32("diagnostics.rawTagFinds")
        uniqueTags = try r.u16("diagnostics.uniqueTags")
        forgottenTags = try r.u16("diagnostics.forgottenTags")
        forgottenNotAcknowledgedTags = try r.u16("diagnostics.forgottenNotAcknowledgedTags")
        forgottenNotSentTags = try r.u16("diagnostics.forgottenNotSentTags")
        try r.finish("diagnostics response")
    }
}

/// GetAntennaTuning (0x10, no payload, 1 s timeout) response: `[static average LE16][dynamic average LE16]`.
public struct VendorAntennaTuning: Sendable, Hashable {
    public var staticAverage: UInt16
    public var dynamicAverage: UInt16
    public init(staticAverage: UInt16, dynamicAverage: UInt16) {
        self.staticAverage = staticAverage
        self.dynamicAverage = dynamicAverage
    }
}

/// One channel of GetDetailedAntennaTuning (0x0e): `[value LE16][a][b][c]` (5 bytes; the
/// library stores the three bytes as ints without naming them). Request `[max channels]`,
/// 2 s timeout, up to 270 bytes back (54 channels); frequency = region channel x 50 kHz.
public struct VendorDetailedTuning: Sendable, Hashable {
    public var value: UInt16
    public var a: UInt8
    public var b: UInt8
    public var c: UInt8
    public init(value: UInt16, a: UInt8, b: UInt8, c: UInt8) {
        self.value = value
        self.a = a
        self.b = b
        self.c = c
    }
}

/// One channel of ScanAllFrequencies (0x14): three signed bytes I, Q and dBm (debug string
/// "#%d: %.2f MHZ: i=%d, q=%d, dBm=%d"). Request `[max channels]`, 2 s timeout, up to 162 bytes (54 channels).
public struct VendorChannelScan: Sendable, Hashable {
    public var i: Int8
    public var q: Int8
    public var dBm: Int8
    public init(i: Int8, q: Int8, dBm: Int8) {
        self.i = i
        self.q = q
        self.dBm = dBm
    }
}

/// ScanWide (0x16): `[start MHz LE16][end MHz LE16][step MHz][mode]`; the reader answers one
/// byte per step, `(end - start) / step + 1` of them, within 3.5 s per step.
public struct VendorScanWide: Sendable, Hashable {
    public var startMHz: UInt16
    public var endMHz: UInt16
    public var stepMHz: UInt8
    /// The function's first argument, sent last (meaning unknown).
    public var mode: UInt8

    public init(startMHz: UInt16, endMHz: UInt16, stepMHz: UInt8, mode: UInt8) throws(VendorCommandError) {
        try checkRange("scanWide.stepMHz", Int(stepMHz), 1...255)
        try checkRange("scanWide.endMHz", Int(endMHz), Int(startMHz)...Int(UInt16.max))
        self.startMHz = startMHz
        self.endMHz = endMHz
        self.stepMHz = stepMHz
        self.mode = mode
    }

    public var steps: Int { (Int(endMHz) - Int(startMHz)) / Int(stepMHz) + 1 }
}

/// SpeakerTest (0x0f): `[frequency LE16][duration ms LE16][volume level]` (5 bytes; ACK).
public struct VendorSpeakerTest: Sendable, Hashable {
    public var frequencyHz: UInt16
    public var durationMs: UInt16
    public var volumeLevel: UInt8
    public init(frequencyHz: UInt16, durationMs: UInt16, volumeLevel: UInt8) {
        self.frequencyHz = frequencyHz
        self.durationMs = durationMs
        self.volumeLevel = volumeLevel
    }
}

/// ContinuousTest (0x12): `[a][b][c LE16][power byte][volume level, or ff when the volume is 0]`
/// (6 bytes, sent from a thread with a progress callback, 0x12220). The first three arguments
/// are not named by the library; from code only.
public struct VendorContinuousTest: Sendable, Hashable {
    public var a: UInt8
    public var b: UInt8
    public var c: UInt16
    public var powerByte: UInt8
    /// 0xff: no sound.
    public var volumeLevel: UInt8
    public init(a: UInt8, b: UInt8, c: UInt16, powerByte: UInt8, volumeLevel: UInt8) {
        self.a = a
        self.b = b
        self.c = c
        self.powerByte = powerByte
        self.volumeLevel = volumeLevel
    }
}

/// GetTemperature (0x15, no payload, reader protocol >= 13) response: `[raw LE16][degrees C]`.
public struct VendorTemperature: Sendable, Hashable {
    public var raw: UInt16
    public var degreesC: UInt8
    public init(raw: UInt16, degreesC: UInt8) {
        self.raw = raw
        self.degreesC = degreesC
    }
}

/// What the reader sends during a tune-antenna run (0x0d; handler 0x125c0). The host answers
/// ACK_0, or ACK_1 once its callback wants to stop; anything else gets ACK_7. From code only.
public enum VendorTuneAntennaPacket: Sendable, Hashable {
    /// 00: exactly `[result][u16 LE]`.
    case completed(result: UInt8, value: UInt16)
    /// 01: exactly 9 bytes `[channel LE16, 50 kHz units][reflected power LE16][5 bytes]` (the
    /// library prints three of them as "%u/%u/%u" and passes all five to its callback).
    case oneFrequency(channel: UInt16, reflectedPower: UInt16, values: [UInt8])

    public var opcode: UInt8 {
        switch self {
        case .completed: 0
        case .oneFrequency: 1
        }
    }

    public func encode() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter()
        switch self {
        case .completed(let result, let value):
            w.u8(result)
            w.u16(value)
        case .oneFrequency(let channel, let power, let values):
            guard values.count == 5 else { throw .inconsistent(field: "tuneAntenna.values", declared: 5, actual: values.count) }
            w.u16(channel)
            w.u16(power)
            w.raw(values)
        }
        return w.bytes
    }

    public init(opcode: UInt8, payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        switch opcode {
        case 0: self = .completed(result: try r.u8("tuneAntenna.result"), value: try r.u16("tuneAntenna.value"))
        case 1:
            self = .oneFrequency(channel: try r.u16("tuneAntenna.channel"), reflectedPower: try r.u16("tuneAntenna.reflectedPower"),
                                 values: try r.raw(5, "tuneAntenna.values"))
        default: throw .unknownValue(field: "tuneAntenna.opcode", value: Int(opcode))
        }
        try r.finish("tune-antenna packet")
    }
}

/// What the reader sends during a continuous test (0x12; handler 0x12350): 00 `[result]`
/// (exactly 1 byte) ends it, 01 with no data is a ping. ACK_0, or ACK_1 to stop. From code only.
public enum VendorContinuousTestPacket: Sendable, Hashable {
    case completed(result: UInt8)
    case ping

    public var opcode: UInt8 {
        switch self {
        case .completed: 0
        case .ping: 1
        }
    }

    public func encode() -> [UInt8] {
        switch self {
        case .completed(let result): [result]
        case .ping: []
        }
    }

    public init(opcode: UInt8, payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        switch opcode {
        case 0: self = .completed(result: try r.u8("continuousTest.result"))
        case 1: self = .ping
        default: throw .unknownValue(field: "continuousTest.opcode", value: Int(opcode))
        }
        try r.finish("continuous-test packet")
    }
}

/// What the reader sends in the echo test it drives after EchoMaster (0x05; handler 0x12460):
/// 01 `[data]`, which the host answers with the same bytes (ACK_1 instead of ACK_0 when its
/// callback wants to stop); 00 `[successes LE16][failures LE16]` (exactly 4 bytes) ends it.
/// From code only.
public enum VendorEchoMasterPacket: Sendable, Hashable {
    case completed(successes: UInt16, failures: UInt16)
    case echo([UInt8])

    public var opcode: UInt8 {
        switch self {
        case .completed: 0
        case .echo: 1
        }
    }

    public func encode() -> [UInt8] {
        var w = VendorWriter()
        switch self {
        case .completed(let successes, let failures):
            w.u16(successes)
            w.u16(failures)
        case .echo(let data):
            w.raw(data)
        }
        return w.bytes
    }

    public init(opcode: UInt8, payload: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(payload)
        switch opcode {
        case 0: self = .completed(successes: try r.u16("echoMaster.successes"), failures: try r.u16("echoMaster.failures"))
        case 1: self = .echo(r.rest())
        default: throw .unknownValue(field: "echoMaster.opcode", value: Int(opcode))
        }
        try r.finish("echo-master packet")
    }
}
