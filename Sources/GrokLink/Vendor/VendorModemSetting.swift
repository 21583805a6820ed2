// The vendor modem's settings: every samples-per-bit the vendor host offers, at 44.1 and 48
// kHz, with its handshake answer tone, its "1" tone, its "0"/idle tone and the handshake's
// window counts. Facts recovered from the vendor host library (see docs/vendor-protocol.md, section 3.1); no vendor
// code is used: the numbers below are the library's table values and the arithmetic it
// performs on them, restated.

/// One audio tone as the vendor's modem makes it: an integer frequency in Hz turned into the
/// phase increment of a 25-bit phase accumulator (2^25 is one cycle) at the sample rate.
public struct VendorTone: Sendable, Hashable, CustomStringConvertible {
    /// The frequency the vendor computes, in whole Hz (its divisions truncate).
    public let nominalHz: Int
    /// The phase added per sample; one cycle is ``VendorTone/phaseCycle``.
    public let phaseIncrement: UInt32
    /// The sample rate the increment was computed for.
    public let sampleRate: Int

    /// One cycle of the vendor's phase accumulator (the top 9 of its 25 bits index a
    /// 512-entry sine table).
    public static let phaseCycle: UInt32 = 1 << 25

    /// A tone of `hz` whole Hz at `sampleRate`: increment = (hz << 25) / rate, truncated, as
    /// the vendor computes it.
    public init(hz: Int, sampleRate: Int) {
        precondition(hz >= 0 && sampleRate > 0)
        nominalHz = hz
        self.sampleRate = sampleRate
        phaseIncrement = UInt32((UInt64(hz) << 25) / UInt64(sampleRate))
    }

    /// A tone given directly by its phase increment (the vendor's 48 kHz and non-symmetric
    /// handshake tones are written that way).
    init(phaseIncrement: UInt32, nominalHz: Int, sampleRate: Int) {
        self.phaseIncrement = phaseIncrement
        self.nominalHz = nominalHz
        self.sampleRate = sampleRate
    }

    /// The frequency actually produced: increment × rate / 2^25.
    public var hz: Double { Double(phaseIncrement) * Double(sampleRate) / Double(Self.phaseCycle) }

    /// Silence (increment 0).
    public static func silence(sampleRate: Int) -> VendorTone { VendorTone(hz: 0, sampleRate: sampleRate) }

    public var description: String { "\(nominalHz) Hz" }
}

/// The length of the handshake's analysis window in samples, at every sample rate (the
/// vendor hard-codes 1260; at 48 kHz a window is therefore 26.25 ms, not 28.6 ms).
public let vendorHandshakeWindow = 1260

/// One modem setting: samples per bit at a sample rate.
///
/// The vendor's table has one row per samples-per-bit: `{spb, a, b, c}`. The host's answer
/// tone is `rate / (2a)`; a "1" bit carries `b` sign changes, so its tone is
/// `rate / (2 × (spb / b))`; a "0" bit (and the idle carrier) `c`, so `rate / (2 × (spb / c))`.
/// Every division truncates, as in the library.
public struct VendorModemSetting: Sendable, Hashable, CustomStringConvertible {
    /// Samples per bit.
    public let samplesPerBit: Int
    /// Samples per second (44 100 or 48 000).
    public let sampleRate: Int
    /// The row's `a`: the answer tone is `rate / (2a)`.
    public let answerDivisor: Int
    /// The row's `b`: sign changes in a "1" bit.
    public let signChangesPerOne: Int
    /// The row's `c`: sign changes in a "0" bit.
    public let signChangesPerZero: Int

    /// The vendor's rows `{spb, a, b, c}` (library offset 0x22b00, 16 bytes a row).
    static let rows: [(spb: Int, a: Int, b: Int, c: Int)] = [
        (12, 9, 6, 3), (8, 10, 4, 1), (10, 11, 5, 2), (16, 12, 8, 4), (20, 14, 10, 5),
        (24, 16, 12, 6), (36, 19, 9, 4), (48, 29, 6, 3), (72, 38, 6, 3),
    ]

    /// Every samples-per-bit the vendor host offers, fastest first.
    public static let supportedSamplesPerBit = [8, 10, 12, 16, 20, 24, 36, 48, 72]
    /// The sample rates the vendor host runs at.
    public static let supportedSampleRates = [44_100, 48_000]
    /// The vendor's default: 12 samples per bit.
    public static let defaultSamplesPerBit = 12

    /// The setting for `samplesPerBit` at `sampleRate`.
    ///
    /// - Throws: ``VendorModemError/unsupportedSetting(samplesPerBit:sampleRate:)`` for a
    ///   samples-per-bit outside ``supportedSamplesPerBit`` or a rate outside
    ///   ``supportedSampleRates``.
    public init(samplesPerBit: Int, sampleRate: Int) throws(VendorModemError) {
        guard Self.supportedSampleRates.contains(sampleRate),
            let row = Self.rows.first(where: { $0.spb == samplesPerBit })
        else { throw .unsupportedSetting(samplesPerBit: samplesPerBit, sampleRate: sampleRate) }
        self.samplesPerBit = samplesPerBit
        self.sampleRate = sampleRate
        answerDivisor = row.a
        signChangesPerOne = row.b
        signChangesPerZero = row.c
    }

    /// Every setting at `sampleRate`, fastest first.
    public static func all(sampleRate: Int) -> [VendorModemSetting] {
        supportedSamplesPerBit.compactMap { try? VendorModemSetting(samplesPerBit: $0, sampleRate: sampleRate) }
    }

    /// The tone the host answers the request with, proposing this setting.
    public var answerTone: VendorTone { VendorTone(hz: sampleRate / (2 * answerDivisor), sampleRate: sampleRate) }
    /// Samples between sign changes of a "1" bit.
    var oneHalfPeriod: Int { samplesPerBit / signChangesPerOne }
    /// Samples between sign changes of a "0" bit.
    var zeroHalfPeriod: Int { samplesPerBit / signChangesPerZero }
    /// The tone of a "1" bit (the UART start bit is a 1).
    public var oneTone: VendorTone { VendorTone(hz: sampleRate / (2 * oneHalfPeriod), sampleRate: sampleRate) }
    /// The tone of a "0" bit, the stop bit and the idle carrier.
    public var zeroTone: VendorTone { VendorTone(hz: sampleRate / (2 * zeroHalfPeriod), sampleRate: sampleRate) }
    /// Bits per second.
    public var bitsPerSecond: Double { Double(sampleRate) / Double(samplesPerBit) }
    /// Samples one UART byte takes on the wire (10 bits).
    public var samplesPerByte: Int { 10 * samplesPerBit }

    /// Sign changes the vendor host expects in one handshake window of the idle tone
    /// (`1260 / (spb / c)`); it accepts ±3.
    public var idleSignChangesPerWindow: Int { vendorHandshakeWindow / zeroHalfPeriod }
    /// Connected, a window with fewer sign changes than this counts as carrier missing
    /// (idle count - 2: 313 at 12 samples per bit).
    public var carrierSignChangeThreshold: Int { idleSignChangesPerWindow - 2 }
    /// The vendor receiver's per-bit threshold on sign changes: `(b + c + 1) / 2`.
    public var bitSignChangeThreshold: Int { (signChangesPerOne + signChangesPerZero + 1) / 2 }
    /// The lengths of the two moving averages the vendor's receiver runs over its input
    /// before counting sign changes, when the application leaves them at 0.
    public var vendorAveragingPeriods: (Int, Int) {
        switch samplesPerBit {
        case 72: (9, 5)
        case 48: (8, 5)
        case 36: (3, 1)
        default: (1, 1)
        }
    }

    public var description: String { "\(samplesPerBit) spb at \(sampleRate) Hz" }

    public static func == (a: Self, b: Self) -> Bool {
        a.samplesPerBit == b.samplesPerBit && a.sampleRate == b.sampleRate
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(samplesPerBit)
        hasher.combine(sampleRate)
    }
}

/// The tones of the handshake that do not depend on the setting.
public enum VendorHandshakeTones {
    /// The reader's request tone: the host connects only after hearing it.
    public static let requestHz = 3150.0
    /// Host, at any rate but 44.1 kHz: "I run at another rate" (phase increment
    /// 0x77c000000 / rate, that is 958 << 25 / rate: 958 Hz).
    public static func rateAnnouncement(sampleRate: Int) -> VendorTone {
        VendorTone(phaseIncrement: UInt32(0x7_7C00_0000 / UInt64(sampleRate)), nominalHz: 958, sampleRate: sampleRate)
    }
    /// The reader's answer to ``rateAnnouncement(sampleRate:)``: 2666.66 Hz.
    public static let rateAcknowledgementHz = 2666.66
    /// Host, when asked to send non-symmetric: 400 Hz (phase increment 0x320000000 / rate).
    public static func nonSymmetricAnnouncement(sampleRate: Int) -> VendorTone {
        VendorTone(phaseIncrement: UInt32(0x3_2000_0000 / UInt64(sampleRate)), nominalHz: 400, sampleRate: sampleRate)
    }
    /// The reader's answer to ``nonSymmetricAnnouncement(sampleRate:)``: 3675 Hz, read from the
    /// code (210 ± 3 sign changes a window at 44.1 kHz); not yet seen from a real reader.
    public static let nonSymmetricAcknowledgementHz = 3675.0

    /// The sign changes the vendor host expects per window for a reader tone of `hz`:
    /// `trunc(1260 / (rate / hz × 0.5))` (180 for the request at 44.1 kHz, 165 at 48 kHz).
    public static func expectedSignChanges(hz: Double, sampleRate: Int) -> Int {
        Int(Double(vendorHandshakeWindow) / (Double(sampleRate) / hz * 0.5))
    }
}
