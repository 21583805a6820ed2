/// One full-duplex audio connection to one Grokker: the host plays commands out of the
/// headphone line and hears the reader on the microphone line.
///
/// Samples are mono `Float` in -1...1 at ``sampleRate``. Every call to ``transfer(output:input:)``
/// plays `output.count` frames and captures the same number, so the caller's sample counter
/// is the link's clock (time is samples).
///
/// A port is owned by one thread at a time; it is not `Sendable`.
public protocol AudioPort: AnyObject {
    /// A name a person recognises: `sim:2`, `alsa:hw:1,0`.
    var name: String { get }
    /// Frames per second on this port (44100 or 48000).
    var sampleRate: Int { get }
    /// Plays `output` and captures exactly `input.count` frames (`output.count == input.count`).
    func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError)
    /// Whether something is plugged into the jack, when the port can tell (`nil`: it cannot).
    var jackPlugged: Bool? { get }
    /// Releases the device. Further transfers throw ``AudioError/closed(port:)``.
    func close()
    /// When no Grokker answers: the control of the port's mixer that stands below what a
    /// session sets (``GrokkerLevels``), the one to raise; `nil` when the port has no mixer
    /// or every level is where a session puts it.
    var levelShortfall: LevelShortfall? { get }
}

extension AudioPort {
    /// A port without a mixer has no level to raise.
    public var levelShortfall: LevelShortfall? { nil }
}

/// The far end of an in-memory cable: an emulated device that only ever sees samples.
///
/// The cable calls ``process(input:output:)`` with the samples that reached the device
/// (already impaired, at the device's own clock) and takes the same number back.
public protocol CablePeer: AnyObject {
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>)
}
