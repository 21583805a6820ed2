/// The emulated unit's audio input stage, between the cable and its receiver: what a real
/// unit's analogue front end does to the host's tones before anything is decoded.
///
/// Two things, in this order, on every sample (the figures are the unit's, from
/// ``EmulatedHardware``; docs/scene.md, "The unit's audio ends", says why these):
///
/// 1. **Clipping.** The input saturates: a sample beyond ±``EmulatedHardware/inputClip``
///    becomes ±that level, so a host driven too hot reaches the receiver distorted.
/// 2. **Detection.** The receiver detects the host's tones only when they are strong
///    enough: it hears its input while some sample of the last ``holdSeconds`` reached
///    ``EmulatedHardware/inputThreshold`` in magnitude (a peak detector with a hold of more
///    than half a period of the lowest tone the host plays), and exact silence otherwise.
///    A host whose peaks stay under the threshold is not detected at all: no handshake
///    tone is recognised, nothing is decoded, nothing is answered.
///
/// Sample-exact and pure: the same samples give the same output whatever the blocks they
/// come in. Counts what it heard and clipped, for diagnostics (`grokctl emulate --json`).
public struct AnalogueInput: Sendable {
    /// How long a peak at or above the threshold keeps the receiver listening, seconds:
    /// 5 ms, more than half a period of the lowest tone the vendor host plays (400 Hz, the
    /// non-symmetric handshake phase: a half period is 1.25 ms), so a tone above the
    /// threshold keeps the receiver open from one peak to the next.
    public static let holdSeconds = 0.005

    /// Magnitude a sample must reach to be detected (full scale of the host's output: 1).
    public let threshold: Float
    /// Magnitude beyond which samples are clipped.
    public let clip: Float
    /// ``holdSeconds`` in samples at the unit's rate.
    public let holdSamples: Int
    /// Samples since the last one at or above the threshold (more than ``holdSamples``:
    /// the receiver hears nothing).
    private var sinceLoud: Int
    /// Samples the receiver heard (it was listening).
    public private(set) var detectedSamples: Int64 = 0
    /// Samples clipped at ±``clip``.
    public private(set) var clippedSamples: Int64 = 0
    /// The largest magnitude that reached the input (before clipping).
    public private(set) var loudest: Float = 0

    /// An input stage with `hardware`'s figures at `sampleRate`.
    public init(hardware: EmulatedHardware, sampleRate: Int) {
        threshold = hardware.inputThreshold
        clip = hardware.inputClip
        holdSamples = max(1, Int((Self.holdSeconds * Double(sampleRate)).rounded()))
        sinceLoud = holdSamples + 1
    }

    /// Whether the receiver listens at the moment (the last sample processed was heard).
    public var detecting: Bool { sinceLoud <= holdSamples }

    /// Writes what the receiver hears of `input` to `output` (as many samples).
    public mutating func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(input.count == output.count, "the input stage writes as many samples as it reads")
        var since = sinceLoud
        var detected: Int64 = 0
        var clipped: Int64 = 0
        var peak = loudest
        for i in input.indices {
            var x = input[i]
            let magnitude = abs(x)
            peak = max(peak, magnitude)
            if magnitude > clip {
                x = x > 0 ? clip : -clip
                clipped += 1
            }
            since = magnitude >= threshold ? 0 : min(since + 1, holdSamples + 1)
            if since <= holdSamples {
                output[i] = x
                detected += 1
            } else {
                output[i] = 0
            }
        }
        sinceLoud = since
        detectedSamples += detected
        clippedSamples += clipped
        loudest = peak
    }
}
