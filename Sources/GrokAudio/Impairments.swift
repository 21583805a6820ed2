// What one direction of the simulated cable does to the signal.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The impairments of one direction of a ``SimulatedCablePort``. The default value is a
/// clean wire.
///
/// The stages are applied in this order, each to the output of the one before:
///
/// 1. **Polarity**: the signal is negated if ``invertPolarity`` is set.
/// 2. **Gain**: multiplied by 10^(``gainDB``/20).
/// 3. **High-pass** (AC coupling): a first-order high-pass at ``highPassHz``.
/// 4. **Low-pass** (band limit): a fourth-order Butterworth low-pass at ``lowPassHz``.
/// 5. **Noise**: white Gaussian noise at ``snrDB`` below the signal (see below).
/// 6. **DC offset**: ``dcOffset`` is added.
/// 7. **Dropout**: the result is replaced by exact zeros for ``dropoutMs`` once every
///    ``dropoutEverySeconds``.
/// 8. **Deaf span**: exact zeros from ``deafFromSeconds`` for ``deafForSeconds`` (infinite:
///    for good), counted in samples of this direction since the cable was made: a cable
///    that goes dead while the jack still reports a plug, then comes back.
///
/// **Noise level.** The noise's RMS is the RMS of the signal entering stage 5 divided by
/// 10^(``snrDB``/20). The signal's RMS is a running mean of its square over non-silent
/// samples only (|x| > 1e-4): a plain average over the first 0.1 s of sound heard, then an
/// exponential average with a 0.1 s time constant, updated every 32 samples. During
/// silence the estimate is frozen, so the noise continues at the level last tracked.
/// Before any sound has been heard the level is ``initialReferenceRMS`` (0.1, that is
/// -20 dBFS RMS), so a receiver listening for its first signal hears noise too.
///
/// All filters are designed at the host's sample rate with the bilinear transform; a
/// cut-off at or above 0.45 × the sample rate is lowered to it, a non-positive or non-finite
/// cut-off disables its filter. Samples are not clipped: a gain above 0 dB can leave -1...1.
public struct Impairments: Sendable, Codable, Equatable {
    /// Gain in dB (negative attenuates).
    public var gainDB: Double
    /// Signal-to-noise ratio in dB of added white Gaussian noise; `nil` adds none.
    public var snrDB: Double?
    /// A constant added to every sample, in full-scale units.
    public var dcOffset: Double
    /// Whether the signal is negated (a reversed pair or an inverting amplifier).
    public var invertPolarity: Bool
    /// The -3 dB frequency of a first-order high-pass (AC coupling); `nil` for none.
    public var highPassHz: Double?
    /// The -3 dB frequency of a fourth-order Butterworth low-pass (a band-limited input such
    /// as a phone's microphone); `nil` for none.
    public var lowPassHz: Double?
    /// How long each dropout lasts, in milliseconds; 0 for none.
    public var dropoutMs: Double
    /// The time from one dropout's start to the next, in seconds; 0 for none. The first
    /// dropout starts at a random point within the first period, chosen by the seed.
    public var dropoutEverySeconds: Double
    /// When a deaf span starts, seconds from the cable's first sample; `nil` for none.
    public var deafFromSeconds: Double?
    /// How long the deaf span lasts, seconds (`.infinity`: the line stays dead).
    public var deafForSeconds: Double

    /// The signal RMS assumed for the noise level until the first non-silent sample.
    public static let initialReferenceRMS = 0.1

    /// Creates impairments; every default means "not impaired".
    public init(
        gainDB: Double = 0,
        snrDB: Double? = nil,
        dcOffset: Double = 0,
        invertPolarity: Bool = false,
        highPassHz: Double? = nil,
        lowPassHz: Double? = nil,
        dropoutMs: Double = 0,
        dropoutEverySeconds: Double = 0,
        deafFromSeconds: Double? = nil,
        deafForSeconds: Double = 0
    ) {
        self.gainDB = gainDB
        self.snrDB = snrDB
        self.dcOffset = dcOffset
        self.invertPolarity = invertPolarity
        self.highPassHz = highPassHz
        self.lowPassHz = lowPassHz
        self.dropoutMs = dropoutMs
        self.dropoutEverySeconds = dropoutEverySeconds
        self.deafFromSeconds = deafFromSeconds
        self.deafForSeconds = deafForSeconds
    }

    /// Whether every stage is switched off (the signal passes unchanged).
    public var isClean: Bool {
        gainDB == 0 && snrDB == nil && dcOffset == 0 && !invertPolarity && highPassHz == nil
            && lowPassHz == nil && (dropoutMs <= 0 || dropoutEverySeconds <= 0) && !hasDeafSpan
    }

    /// Whether a deaf span is set (a start and a positive length).
    var hasDeafSpan: Bool {
        guard let deafFromSeconds else { return false }
        return deafFromSeconds.isFinite && deafFromSeconds >= 0 && deafForSeconds > 0
    }

    /// The line dead (exact zeros) from `seconds` for `duration` seconds (`.infinity`: for good).
    public static func deaf(from seconds: Double, for duration: Double) -> Impairments {
        Impairments(deafFromSeconds: seconds, deafForSeconds: duration)
    }

    // MARK: Presets: the conditions the link must survive

    /// A perfect wire.
    public static let clean = Impairments()

    /// White Gaussian noise at `snrDB` below the signal.
    public static func noisy(snrDB: Double) -> Impairments {
        Impairments(snrDB: snrDB)
    }

    /// A weak signal: 20 dB of attenuation.
    public static let quiet = Impairments(gainDB: -20)

    /// A DC bias of 0.2 full scale.
    public static let dcOffset = Impairments(dcOffset: 0.2)

    /// Reversed polarity.
    public static let inverted = Impairments(invertPolarity: true)

    /// A phone's microphone input: AC coupled at 100 Hz and band-limited at 4 kHz.
    public static let phoneInput = Impairments(highPassHz: 100, lowPassHz: 4000)

    /// A loose contact: 10 ms of silence every second.
    public static let dropouts = Impairments(dropoutMs: 10, dropoutEverySeconds: 1)

    // MARK: Codable: every key is optional and defaults to "not impaired"

    private enum CodingKeys: String, CodingKey {
        case gainDB, snrDB, dcOffset, invertPolarity, highPassHz, lowPassHz, dropoutMs, dropoutEverySeconds, deafFromSeconds, deafForSeconds
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            gainDB: try c.decodeIfPresent(Double.self, forKey: .gainDB) ?? 0,
            snrDB: try c.decodeIfPresent(Double.self, forKey: .snrDB),
            dcOffset: try c.decodeIfPresent(Double.self, forKey: .dcOffset) ?? 0,
            invertPolarity: try c.decodeIfPresent(Bool.self, forKey: .invertPolarity) ?? false,
            highPassHz: try c.decodeIfPresent(Double.self, forKey: .highPassHz),
            lowPassHz: try c.decodeIfPresent(Double.self, forKey: .lowPassHz),
            dropoutMs: try c.decodeIfPresent(Double.self, forKey: .dropoutMs) ?? 0,
            dropoutEverySeconds: try c.decodeIfPresent(Double.self, forKey: .dropoutEverySeconds) ?? 0,
            deafFromSeconds: try c.decodeIfPresent(Double.self, forKey: .deafFromSeconds),
            deafForSeconds: try c.decodeIfPresent(Double.self, forKey: .deafForSeconds) ?? 0
        )
    }
}

/// Applies one ``Impairments`` value to a stream of samples, in blocks, keeping filter,
/// noise and dropout state between blocks. Not thread-safe.
struct ImpairmentChain {
    /// Polarity and gain folded into one factor (1 when neither is set).
    private let scale: Float
    private var highPass: OnePoleHighPass?
    private var lowPass: ButterworthLowPass4?
    /// 10^(-snr/20), or `nil` for no noise.
    private let noiseRatio: Double?
    private let dcOffset: Float
    private var gaussian: GaussianSource

    /// The tracked mean square of the signal entering the noise stage.
    private var meanSquare = Impairments.initialReferenceRMS * Impairments.initialReferenceRMS
    /// Non-silent samples heard so far (stops counting once the average becomes exponential).
    private var heard = 0
    /// 1 / (time constant in samples) of the level tracker.
    private let trackingRate: Double

    /// Dropout period and length in samples (period 0: no dropouts).
    private let dropoutPeriod: Int
    private let dropoutLength: Int
    /// Position within the current dropout period; a dropout covers `0 ..< dropoutLength`.
    private var dropoutPhase: Int
    /// The deaf span in samples of this chain, `deafStart ..< deafEnd` (no span: empty).
    private let deafStart: Int64
    private let deafEnd: Int64
    /// Samples processed so far.
    private var position: Int64 = 0

    /// Whether `process` leaves samples unchanged.
    let isIdentity: Bool

    /// - Parameters:
    ///   - impairments: What to do.
    ///   - sampleRate: The rate of the samples this chain sees.
    ///   - seed: The run's seed; `stream` separates the chains of one cable.
    init(_ impairments: Impairments, sampleRate: Int, seed: UInt64, stream: UInt64) {
        let rate = Double(sampleRate)
        let maxCutoff = 0.45 * rate
        let gain = impairments.gainDB.isFinite ? pow(10, impairments.gainDB / 20) : 1
        scale = Float(impairments.invertPolarity ? -gain : gain)
        if let hz = impairments.highPassHz, hz.isFinite, hz > 0 {
            highPass = OnePoleHighPass(cutoff: Swift.min(hz, maxCutoff), sampleRate: rate)
        }
        if let hz = impairments.lowPassHz, hz.isFinite, hz > 0 {
            lowPass = ButterworthLowPass4(cutoff: Swift.min(hz, maxCutoff), sampleRate: rate)
        }
        if let snr = impairments.snrDB, snr.isFinite {
            noiseRatio = pow(10, -snr / 20)
        } else {
            noiseRatio = nil
        }
        dcOffset = impairments.dcOffset.isFinite ? Float(impairments.dcOffset) : 0
        gaussian = GaussianSource(seed: seed, stream: stream)
        trackingRate = 1 / (0.1 * rate)

        let period = impairments.dropoutEverySeconds.isFinite ? (impairments.dropoutEverySeconds * rate).rounded() : 0
        let length = impairments.dropoutMs.isFinite ? (impairments.dropoutMs * rate / 1000).rounded() : 0
        if period >= 1, length >= 1, period < Double(Int32.max) {
            dropoutPeriod = Int(period)
            dropoutLength = Swift.min(Int(length), Int(period))
            dropoutPhase = Int(gaussian.nextUnit() * period) % Int(period)
        } else {
            dropoutPeriod = 0
            dropoutLength = 0
            dropoutPhase = 0
        }
        if impairments.hasDeafSpan, let from = impairments.deafFromSeconds {
            deafStart = Int64((from * rate).rounded())
            let length = impairments.deafForSeconds * rate
            deafEnd = length.isFinite && length < Double(Int64.max / 2) ? deafStart + Int64(length.rounded()) : Int64.max
        } else {
            deafStart = 0
            deafEnd = 0
        }
        isIdentity = scale == 1 && highPass == nil && lowPass == nil && noiseRatio == nil
            && dcOffset == 0 && dropoutPeriod == 0 && deafEnd <= deafStart
    }

    /// Applies every stage to `samples` in place.
    mutating func process(_ samples: UnsafeMutableBufferPointer<Float>) {
        guard !isIdentity, samples.count > 0 else { return }
        if scale != 1 {
            let scale = self.scale
            for i in samples.indices { samples[i] *= scale }
        }
        if var highPass, var lowPass {
            // One loop, so the processor overlaps the two filters' recurrences.
            for i in samples.indices {
                samples[i] = Float(lowPass.step(highPass.step(Double(samples[i]))))
            }
            highPass.endBlock()
            lowPass.endBlock()
            self.highPass = highPass
            self.lowPass = lowPass
        } else if highPass != nil {
            highPass!.process(samples)
        } else if lowPass != nil {
            lowPass!.process(samples)
        }
        if let noiseRatio { addNoise(samples, ratio: noiseRatio) }
        if dcOffset != 0 {
            let dcOffset = self.dcOffset
            for i in samples.indices { samples[i] += dcOffset }
        }
        if dropoutPeriod > 0 { applyDropouts(samples) }
        let first = position
        position += Int64(samples.count)
        if deafEnd > deafStart, first < deafEnd, position > deafStart {
            let from = Int(Swift.max(0, deafStart - first))
            let to = Int(Swift.min(Int64(samples.count), deafEnd - first))
            for i in from..<to { samples[i] = 0 }
        }
    }

    /// Stage 5: tracks the signal level and adds scaled Gaussian noise.
    ///
    /// The level is updated once per `chunk` samples from the chunk's non-silent samples
    /// (equivalent to the per-sample average to well under 0.1 dB for a 0.1 s time constant),
    /// which keeps a square root and a long dependency chain out of the per-sample loop.
    private mutating func addNoise(_ samples: UnsafeMutableBufferPointer<Float>, ratio: Double) {
        let chunk = 32
        let batch = 256  // deviates drawn per call of the generator
        let threshold: Float = 1e-4
        let logRetention = log(1 - trackingRate)
        let saturation = Int(1 / trackingRate)
        var meanSquare = self.meanSquare
        var heard = self.heard
        var gaussian = self.gaussian
        withUnsafeTemporaryAllocation(of: Float.self, capacity: batch) { deviates in
            var batchStart = 0
            while batchStart < samples.count {
                let batchEnd = Swift.min(batchStart + batch, samples.count)
                gaussian.fill(UnsafeMutableBufferPointer(rebasing: deviates[0..<(batchEnd - batchStart)]))
                var start = batchStart
                while start < batchEnd {
                    let end = Swift.min(start + chunk, batchEnd)
                    let sigma = Float(meanSquare.squareRoot() * ratio)
                    var sumOfSquares: Float = 0
                    var count = 0
                    for i in start..<end {
                        let sample = samples[i]
                        let loud = abs(sample) > threshold
                        sumOfSquares += loud ? sample * sample : 0
                        count += loud ? 1 : 0
                        samples[i] = sample + sigma * deviates[i - batchStart]
                    }
                    if count > 0 {
                        if heard < saturation {
                            // A plain average until 0.1 s of sound has been heard.
                            let total = heard + count
                            meanSquare = (meanSquare * Double(heard) + Double(sumOfSquares)) / Double(total)
                            heard = total
                        } else {
                            let retained = exp(Double(count) * logRetention)
                            meanSquare = meanSquare * retained + Double(sumOfSquares) / Double(count) * (1 - retained)
                        }
                    }
                    start = end
                }
                batchStart = batchEnd
            }
        }
        self.meanSquare = meanSquare
        self.heard = heard
        self.gaussian = gaussian
    }

    /// Stage 7: zeroes the samples that fall inside a dropout.
    private mutating func applyDropouts(_ samples: UnsafeMutableBufferPointer<Float>) {
        var phase = dropoutPhase
        var i = 0
        while i < samples.count {
            let remaining = samples.count - i
            if phase < dropoutLength {
                let run = Swift.min(dropoutLength - phase, remaining)
                for k in i..<(i + run) { samples[k] = 0 }
                i += run
                phase += run
            } else {
                let run = Swift.min(dropoutPeriod - phase, remaining)
                i += run
                phase += run
            }
            if phase >= dropoutPeriod { phase = 0 }
        }
        dropoutPhase = phase
    }
}
