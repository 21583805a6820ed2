/// A frame found in recorded audio.
public struct ScannedFrame: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        case ok
        /// The header checked, the CRC-32C did not.
        case badCRC = "bad_crc"
        /// The header's CRC-8 did not check.
        case badHeader = "bad_header"
    }
    /// Sample index (in the scanned stream) where the frame ended.
    public var endSample: Int64
    public var mode: LinkMode
    public var status: Status
    /// The frame, when it checked; for `badCRC`, type and seq from the header only.
    public var frame: Frame?
    /// Mean decision margin of its bits (1 = perfect).
    public var quality: Double
}

/// Finds link frames in audio recorded from a session, for debugging a cable
/// (`grokctl audio decode`) and for measuring the demodulator. Feed samples in any chunking.
public final class FrameScanner {
    public let mode: LinkMode
    public let sampleRate: Int
    private let demod: FM0Demodulator
    private var events: [DemodEvent] = []
    public private(set) var found: [ScannedFrame] = []

    /// The fewest samples per bit the demodulator works with: below that a half-bit is less
    /// than a sample.
    public static let minimumSamplesPerBit = 2.0

    /// A scanner for `mode` in audio sampled at `sampleRate`; nil when that rate is too low
    /// for the mode (fewer than ``minimumSamplesPerBit`` samples per bit).
    public init?(mode: LinkMode, sampleRate: Int) {
        let spb = mode.samplesPerBit(atRate: sampleRate)
        guard spb.isFinite, spb >= FrameScanner.minimumSamplesPerBit else { return nil }
        self.mode = mode
        self.sampleRate = sampleRate
        demod = FM0Demodulator(samplesPerBit: spb, sampleRate: sampleRate, startTime: 0)
    }

    /// The sender's clock relative to ours, as tracked so far.
    public var skewFactor: Double { demod.skewFactor }

    /// Scans more samples; returns the frames they completed.
    @discardableResult
    public func scan(_ samples: UnsafeBufferPointer<Float>) -> ArraySlice<ScannedFrame> {
        let before = found.count
        demod.process(samples, events: &events)
        for event in events {
            switch event {
            case .frame(let frame, let quality, let end):
                found.append(ScannedFrame(endSample: end, mode: mode, status: .ok, frame: frame, quality: quality))
            case .badCRC(let type, let seq, let end):
                found.append(ScannedFrame(endSample: end, mode: mode, status: .badCRC,
                                          frame: Frame(type: type, seq: seq), quality: 0))
            case .badHeader(let end):
                found.append(ScannedFrame(endSample: end, mode: mode, status: .badHeader, frame: nil, quality: 0))
            }
        }
        events.removeAll(keepingCapacity: true)
        return found[before...]
    }

    /// Scans a whole array.
    @discardableResult
    public func scan(_ samples: [Float]) -> ArraySlice<ScannedFrame> {
        samples.withUnsafeBufferPointer { scan($0) }
    }
}

/// Renders frames to audio exactly as a ``LinkEngine`` sends them: for tests, benchmarks and
/// signal generators.
public struct FrameSynthesizer {
    private var modulator: FM0Modulator
    public let mode: LinkMode
    public let sampleRate: Int

    public init(mode: LinkMode, sampleRate: Int, amplitude: Float = 0.5) {
        self.mode = mode
        self.sampleRate = sampleRate
        modulator = FM0Modulator(amplitude: amplitude)
    }

    /// Appends one frame with its preamble and sync word to `out`.
    public mutating func append(_ frame: Frame, preambleBits: Int = 24, to out: inout [Float]) {
        var rendered: [Float] = []
        modulator.render(bytes: frame.encoded(), preambleBits: preambleBits,
                         samplesPerBit: mode.samplesPerBit(atRate: sampleRate), into: &rendered)
        out.append(contentsOf: rendered)
    }
}
