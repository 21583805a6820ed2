/// Which configuration GetConfiguration (0x0a) / SetConfiguration (0x0b) address (the first
/// payload byte). Facts: the JNI sound getters and setters pass 1, 2 and 3
/// (`Java_..._CommandGet/SetGeigerCounterSound` 1, `FoundItemSound` 2, `FoundLastItemSound` 3);
/// `CommandGetConfigurationUsingCache` decodes configuration 0 as the reader's 11 radio bytes
/// (0x1505a), not as a tone list.
public enum VendorConfigurationKind: UInt8, Sendable, Hashable, CaseIterable {
    /// The reader's own default radio settings (11 bytes, the layout of inventory bytes 11-21).
    case radioDefaults = 0
    /// The Geiger-counter sound.
    case geigerCounterSound = 1
    /// The found-item tone list.
    case foundItemSound = 2
    /// The found-last-item tone list.
    case foundLastItemSound = 3
}

/// One tone of a tone list: frequency and duration.
public struct VendorTone: Sendable, Hashable {
    public var frequencyHz: UInt16
    public var durationMs: UInt16
    public init(frequencyHz: UInt16, durationMs: UInt16) {
        self.frequencyHz = frequencyHz
        self.durationMs = durationMs
    }
}

/// The Geiger-counter sound: `[freq LE16][click ms LE16][round(clickRate x 256) LE16]
/// [maxClicksPerSecond][(historyMs + 4) >> 3]`.
public struct VendorGeigerSound: Sendable, Hashable {
    public var frequencyHz: UInt16
    public var clickDurationMs: UInt16
    /// The click rate times 256, rounded (the library divides by 256 when reading it back).
    public var clickRate256: UInt16
    public var maxClicksPerSecond: UInt8
    /// The history length in units of 8 ms (the library sends `(historyMs + 4) >> 3` and reads `x << 3`).
    public var history8Ms: UInt8

    public init(frequencyHz: UInt16, clickDurationMs: UInt16, clickRate256: UInt16, maxClicksPerSecond: UInt8,
                history8Ms: UInt8) {
        self.frequencyHz = frequencyHz
        self.clickDurationMs = clickDurationMs
        self.clickRate256 = clickRate256
        self.maxClicksPerSecond = maxClicksPerSecond
        self.history8Ms = history8Ms
    }

    /// From the vendor API's values (`setGeigerCounterSound(freq, ms, clickRate, maxClicks, historyMs)`).
    public init(frequencyHz: UInt16, clickDurationMs: UInt16, clickRate: Double, maxClicksPerSecond: UInt8,
                historyMs: Int) throws(VendorCommandError) {
        let rate = (clickRate * 256).rounded()
        guard rate.isFinite, rate >= 0, rate <= Double(UInt16.max) else {
            throw .outOfRange(field: "geiger.clickRate", value: String(clickRate), allowed: "0...255.99")
        }
        try checkRange("geiger.historyMs", historyMs, 0...(255 * 8 + 3))
        self.init(frequencyHz: frequencyHz, clickDurationMs: clickDurationMs, clickRate256: UInt16(rate),
                  maxClicksPerSecond: maxClicksPerSecond, history8Ms: UInt8((historyMs + 4) >> 3))
    }

    public var clickRate: Double { Double(clickRate256) / 256 }
    public var historyMs: Int { Int(history8Ms) << 3 }

    func write(_ w: inout VendorWriter) {
        w.u16(frequencyHz)
        w.u16(clickDurationMs)
        w.u16(clickRate256)
        w.u8(maxClicksPerSecond)
        w.u8(history8Ms)
    }

    static func read(_ r: inout VendorReader) throws(VendorCommandError) -> VendorGeigerSound {
        VendorGeigerSound(frequencyHz: try r.u16("geiger.frequency"), clickDurationMs: try r.u16("geiger.clickMs"),
                          clickRate256: try r.u16("geiger.clickRate"), maxClicksPerSecond: try r.u8("geiger.maxClicks"),
                          history8Ms: try r.u8("geiger.history"))
    }
}

/// A configuration's content, as SetConfiguration carries it after its kind byte and as
/// GetConfiguration answers it.
public enum VendorConfiguration: Sendable, Hashable {
    case radioDefaults(VendorRadioSettings)
    case geigerCounterSound(VendorGeigerSound)
    /// A tone list (kinds 2 and 3). On the wire the list ends with a `00 00 00 00` tone.
    case tones(VendorConfigurationKind, [VendorTone])

    public var kind: VendorConfigurationKind {
        switch self {
        case .radioDefaults: .radioDefaults
        case .geigerCounterSound: .geigerCounterSound
        case .tones(let kind, _): kind
        }
    }

    /// The most tones that fit one payload beside the kind byte and terminator.
    public static let maxTones = (VendorWireLimits.maxPayloadBytes - 1) / 4 - 1

    /// The content bytes (without the kind byte).
    public func encodeContent() throws(VendorCommandError) -> [UInt8] {
        var w = VendorWriter()
        switch self {
        case .radioDefaults(let settings):
            settings.write(&w)
        case .geigerCounterSound(let sound):
            sound.write(&w)
        case .tones(let kind, let tones):
            guard kind == .foundItemSound || kind == .foundLastItemSound else {
                throw .unknownValue(field: "configuration.tones.kind", value: Int(kind.rawValue))
            }
            guard tones.count <= Self.maxTones else {
                throw .tooLong(field: "configuration.tones", length: tones.count, limit: Self.maxTones)
            }
            for tone in tones {
                guard tone.frequencyHz != 0 || tone.durationMs != 0 else {
                    throw .outOfRange(field: "configuration.tone", value: "0 Hz for 0 ms", allowed: "a non-zero frequency or duration (00 00 00 00 ends the list)")
                }
                w.u16(tone.frequencyHz)
                w.u16(tone.durationMs)
            }
            w.u32(0)
        }
        return w.bytes
    }

    /// Reads the content of a configuration of `kind`.
    public init(kind: VendorConfigurationKind, decoding data: [UInt8]) throws(VendorCommandError) {
        var r = VendorReader(data)
        switch kind {
        case .radioDefaults:
            self = .radioDefaults(try VendorRadioSettings.read(&r))
        case .geigerCounterSound:
            self = .geigerCounterSound(try VendorGeigerSound.read(&r))
        case .foundItemSound, .foundLastItemSound:
            var tones: [VendorTone] = []
            var ended = false
            while !r.isAtEnd {
                let tone = VendorTone(frequencyHz: try r.u16("configuration.tone.frequency"),
                                      durationMs: try r.u16("configuration.tone.durationMs"))
                if tone.frequencyHz == 0 && tone.durationMs == 0 { ended = true; break }
                tones.append(tone)
            }
            guard ended else { throw .truncated(field: "configuration.tones.terminator", needed: 4, available: 0) }
            self = .tones(kind, tones)
        }
        try r.finish("configuration \(kind)")
    }
}

/// GetConfiguration (0x0a) request: `[kind][refresh]`; the library sends its second argument
/// as the second byte (seen `01`).
public struct VendorGetConfiguration: Sendable, Hashable {
    public var kind: VendorConfigurationKind
    public var refresh: UInt8
    public init(kind: VendorConfigurationKind, refresh: UInt8 = 1) {
        self.kind = kind
        self.refresh = refresh
    }
}
