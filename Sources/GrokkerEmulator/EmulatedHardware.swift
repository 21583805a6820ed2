import GrokProtocol

/// The fixed capabilities of an emulated hardware model: what GetVersion reports besides the
/// per-unit ``DeviceState``, and its audio ends (what it needs to hear the host, where its
/// input saturates, how loud it answers).
///
/// Audio levels are in full-scale units of the host's audio: 1 is the peak of a tone the
/// host plays at full scale through a cable of unity gain (the unit's input), or a tone that
/// reaches the host's capture at full scale at unity capture gain (the unit's output).
public struct EmulatedHardware: Sendable, Equatable {
    /// The hardware kind (GetVersion bytes 2-3).
    public var hardwareType: HardwareType
    /// Maximum RF power, tenths of a dBm (GetVersion byte 9).
    public var maxPowerTenthsDBm: Int16
    /// Best receive sensitivity, tenths of a dBm (GetVersion byte 10, negated).
    public var maxSensitivityTenthsDBm: Int16
    /// Speaker volume steps (GetVersion byte 11).
    public var numVolumeLevels: UInt8
    /// Most tones in one sound (GetVersion byte 29).
    public var maxTonesInSound: UInt8
    /// The weakest peak of the host's tones the unit detects (``AnalogueInput``); below it
    /// the unit hears nothing and answers nothing.
    public var inputThreshold: Float
    /// The magnitude at which the unit's input saturates: samples beyond it are clipped
    /// before its receiver.
    public var inputClip: Float
    /// The peak of the tones the unit plays toward the host.
    public var outputLevel: Float

    public init(hardwareType: HardwareType, maxPowerTenthsDBm: Int16, maxSensitivityTenthsDBm: Int16,
                numVolumeLevels: UInt8, maxTonesInSound: UInt8, inputThreshold: Float = Self.grokker1InputThreshold,
                inputClip: Float = Self.grokker1InputClip, outputLevel: Float = Self.grokker1OutputLevel) {
        precondition(inputThreshold >= 0 && inputThreshold < inputClip && outputLevel > 0 && outputLevel <= 1,
                     "a unit hears below its clip level and plays within full scale")
        self.hardwareType = hardwareType
        self.maxPowerTenthsDBm = maxPowerTenthsDBm
        self.maxSensitivityTenthsDBm = maxSensitivityTenthsDBm
        self.numVolumeLevels = numVolumeLevels
        self.maxTonesInSound = maxTonesInSound
        self.inputThreshold = inputThreshold
        self.inputClip = inputClip
        self.outputLevel = outputLevel
    }

    /// The GR-1's input threshold: 0.01 of the host's full scale (-40 dBFS peak). A model
    /// choice (the vendor publishes no figure), argued in docs/scene.md ("The unit's audio
    /// ends"): about 10 mV on a headphone output whose full scale is about 1 V peak, the
    /// level a headset-microphone input is built to hear.
    public static let grokker1InputThreshold: Float = 0.01
    /// The GR-1's clip level: 1.4 times the host's full scale (about +3 dB). A model choice
    /// (docs/scene.md): the vendor's host turned the phone's volume to the maximum for a
    /// Grokker, so its input takes a full-scale host without clipping, with a little headroom
    /// for hotter outputs.
    public static let grokker1InputClip: Float = 1.4
    /// The GR-1's output level: full scale (1), the amplitude the vendor's own modulator
    /// plays and the emulated unit always had; a real unit's figure is not known.
    public static let grokker1OutputLevel: Float = 1

    /// The emulated Grokker 1 (GR-1): 30.0 dBm, -80.0 dBm sensitivity, 8 volume levels, 16
    /// tones per sound; it hears the host from -40 dBFS, clips at +3 dB and answers at full
    /// scale.
    public static let grokker1 = EmulatedHardware(
        hardwareType: .grokker1, maxPowerTenthsDBm: 300, maxSensitivityTenthsDBm: -800, numVolumeLevels: 8, maxTonesInSound: 16)
}
