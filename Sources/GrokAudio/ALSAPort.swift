internal import CALSA
import GrokBasics
import Glibc

/// A full-duplex ``AudioPort`` on an ALSA device: plays out of the device's playback side
/// (the headphone line) and captures from its capture side (the microphone line).
///
/// A host opens both directions on the same device name (`hw:1,0`, `plughw:CARD=Device`,
/// `default`, or a PCM defined in an extra configuration file); the emulated unit may
/// capture from one device and play to another (`pulse:host_out.monitor` and
/// `pulse:unit_out`). Samples are signed 16-bit little-endian interleaved: mono when the
/// device takes it, otherwise stereo (the output is duplicated to both channels, the input
/// is the left channel).
///
/// Playback is prefilled with one buffer of silence when the port opens (and again after
/// an underrun), so the round trip through the port always carries one buffer
/// (``bufferFrames``) of latency. Overruns, underruns and suspends are recovered and
/// counted in ``xrunCount``.
///
/// With no sound card, a PCM made of ALSA's file and null plugins over two FIFOs (see
/// `Tests/GrokAudioTests/Fixtures/asoundrc`) runs a whole session through libasound
/// against a ``RawPipePort`` on the other ends. Such a PCM is detected by its type and read
/// one frame per call (see `PCMHandle.readLimit`); SIGPIPE is blocked while writing, so a
/// peer that goes away is reported as an error rather than killing the process.
///
/// Not thread-safe: one owner at a time.
public final class ALSAPort: AudioPort {
    /// `alsa:` followed by the device name (with two devices: `alsa:CAPTURE / alsa:PLAYBACK`).
    public let name: String
    /// The ALSA device name the port plays to (and captures from, unless ``captureDevice``
    /// differs).
    public let device: String
    /// The ALSA device name the port captures from.
    public let captureDevice: String
    /// Frames per second (44100 or 48000).
    public let sampleRate: Int
    /// The period size the device accepted, in frames.
    public let periodFrames: Int
    /// The playback buffer size the device accepted, in frames (the prefill).
    public let bufferFrames: Int
    /// How many overruns, underruns and suspends were recovered from.
    public private(set) var xrunCount: Int = 0
    /// The loudest sample captured so far (0...1), for ``levelShortfall``.
    public private(set) var loudestInput: Float = 0

    private var playback: PCMHandle?
    private var capture: PCMHandle?
    /// Kept alive for as long as the PCMs opened from it.
    private var configuration: ALSAConfiguration?
    private var outputSamples: [Int16] = []
    private var inputSamples: [Int16] = []

    /// Opens `device` for playback and capture.
    ///
    /// - Parameters:
    ///   - device: an ALSA PCM name.
    ///   - sampleRate: 44100 or 48000.
    ///   - periodFrames: the period size to ask for (the device may pick a near one).
    ///   - periods: periods per buffer (2...32).
    ///   - configFile: an extra ALSA configuration file (asoundrc syntax) merged on top of
    ///     the system configuration for this open only; use it to define PCMs without
    ///     touching `~/.asoundrc`.
    /// - Throws: ``AudioError/deviceNotFound(device:detail:)``,
    ///   ``AudioError/deviceBusy(device:)``, ``AudioError/unsupportedFormat(device:detail:)``
    ///   (including a rate other than 44100 or 48000), ``AudioError/file(path:detail:)`` for
    ///   a missing or unparsable `configFile`, ``AudioError/io(device:operation:detail:)``.
    ///   - resample: let ALSA's plug resample to `sampleRate` (`false`: the device must run at
    ///     it, see ``nativeRate(device:configFile:)``).
    public convenience init(
        device: String, sampleRate: Int = 44100, periodFrames: Int = 256, periods: Int = 4,
        configFile: String? = nil, resample: Bool = false
    ) throws(AudioError) {
        try self.init(playbackDevice: device, captureDevice: device, sampleRate: sampleRate, periodFrames: periodFrames,
                      periods: periods, configFile: configFile, resample: resample)
    }

    /// Opens `playbackDevice` for playback and `captureDevice` for capture (the same name
    /// for one full-duplex device); the parameters and errors are those of
    /// ``init(device:sampleRate:periodFrames:periods:configFile:resample:)``, each error
    /// naming the device it is about.
    public init(
        playbackDevice device: String, captureDevice: String, sampleRate: Int = 44100, periodFrames: Int = 256,
        periods: Int = 4, configFile: String? = nil, resample: Bool = false
    ) throws(AudioError) {
        guard sampleRate == 44100 || sampleRate == 48000 else {
            throw AudioError.unsupportedFormat(device: device, detail: ErrorDetail("port_rate", [String(sampleRate)]))
        }
        guard (16...65536).contains(periodFrames) else {
            throw AudioError.unsupportedFormat(device: device, detail: ErrorDetail("period_frames", [String(periodFrames)]))
        }
        guard (2...32).contains(periods) else {
            throw AudioError.unsupportedFormat(device: device, detail: ErrorDetail("period_count", [String(periods)]))
        }
        let configuration = try configFile.map { (file) throws(AudioError) in try ALSAConfiguration.merged(with: file) }
        // Playback is set up completely before capture is opened: with the file plugin
        // (see Tests/GrokAudioTests/Fixtures/asoundrc) the playback FIFO is opened in
        // hw_params and the capture FIFO at open, so a peer opens them in that order too.
        let playback = try PCMHandle(device: device, stream: .playback, configuration: configuration)
        let setup = try playback.configure(
            sampleRate: sampleRate, periodFrames: periodFrames, periods: periods, resample: resample)
        let capture = try PCMHandle(device: captureDevice, stream: .capture, configuration: configuration)
        _ = try capture.configure(sampleRate: sampleRate, periodFrames: setup.period, periods: periods, resample: resample)

        self.name = captureDevice == device ? "alsa:\(device)" : "alsa:\(captureDevice) / alsa:\(device)"
        self.device = device
        self.captureDevice = captureDevice
        self.sampleRate = sampleRate
        self.periodFrames = setup.period
        self.bufferFrames = setup.buffer
        self.configuration = configuration
        self.playback = playback
        self.capture = capture
        try prefill(playback)
    }

    deinit {
        close()
    }

    /// Whether `device` names ALSA's plug (`plughw:...`, `plug:...`): a person who names one
    /// asks for its conversions, resampling included.
    public static func isPlugDevice(_ device: String) -> Bool {
        device.hasPrefix("plughw:") || device.hasPrefix("plug:") || device == "plughw" || device == "plug"
    }

    /// The rate the protocol has (44100, else 48000) that `device` plays without resampling
    /// (`snd_pcm_hw_params_test_rate` with resampling off). The playback stream is asked
    /// (it is opened, never configured, so a file plugin's FIFO is not opened).
    /// - Throws: ``AudioError/unsupportedFormat(device:detail:)`` (`no_native_rate`) when it
    ///   plays neither; the open's errors.
    public static func nativeRate(device: String, configFile: String? = nil) throws(AudioError) -> Int {
        guard let rate = try nativeRates(device: device, configFile: configFile).first else {
            throw AudioError.unsupportedFormat(device: device, detail: ErrorDetail("no_native_rate"))
        }
        return rate
    }

    /// The rates the protocol has (44100, 48000, in that order) that `device` runs at
    /// without resampling, asked of its `stream` (opened, never configured).
    public static func nativeRates(device: String, capture: Bool = false, configFile: String? = nil) throws(AudioError) -> [Int] {
        let configuration = try configFile.map { (file) throws(AudioError) in try ALSAConfiguration.merged(with: file) }
        let pcm = try PCMHandle(device: device, stream: capture ? .capture : .playback, configuration: configuration)
        return try pcm.nativeRates(among: [44100, 48000])
    }

    /// Plays `output`, then captures exactly `input.count` frames, recovering from xruns.
    public func transfer(
        output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>
    ) throws(AudioError) {
        guard let playback, let capture else { throw AudioError.closed(port: name) }
        precondition(output.count == input.count, "transfer needs as many input as output frames")
        let frames = output.count
        if frames == 0 { return }

        let outChannels = playback.channels
        if outputSamples.count < frames * outChannels {
            outputSamples = Array(repeating: 0, count: frames * outChannels)
        }
        outputSamples.withUnsafeMutableBufferPointer { samples in
            for frame in 0..<frames {
                let value = PCM16.sample(output[frame])
                for channel in 0..<outChannels { samples[frame * outChannels + channel] = value }
            }
        }
        try write(playback, frames: frames)

        let inChannels = capture.channels
        if inputSamples.count < frames * inChannels {
            inputSamples = Array(repeating: 0, count: frames * inChannels)
        }
        try read(capture, frames: frames)
        inputSamples.withUnsafeBufferPointer { samples in
            var loudest = loudestInput
            for frame in 0..<frames {
                let value = PCM16.float(samples[frame * inChannels])
                input[frame] = value
                loudest = max(loudest, abs(value))
            }
            loudestInput = loudest
        }
    }

    /// Whether a Grokker is plugged in as the vendor judged it (``ALSACard/judge(_:)``): the
    /// headphone and the microphone jack both report a plug, where the card reports them.
    /// `nil` when the device is not a `hw:`/`plughw:` card device or its card reports neither
    /// jack (most USB dongles): only a handshake can tell then.
    public var jackPlugged: Bool? { ALSADevices.jackPlugged(device: device) }

    /// The card's control standing lowest below what a session sets, read from the mixer of
    /// the device (``ALSAMixer/controlName(forDevice:)``) now; `nil` when it has no mixer or
    /// every level is set.
    public var levelShortfall: LevelShortfall? {
        guard let mixer = try? ALSAMixer(ALSAMixer.controlName(forDevice: device)), let levels = try? mixer.levels() else {
            return nil
        }
        return levels.shortfall(loudestInput: loudestInput)
    }

    /// Stops both directions and releases the device. Playback is closed first (the file
    /// plugin flushes what it buffered, then the peer sees end of file), then capture.
    ///
    /// Closing flushes what the playback side still holds; on a FIFO whose reader is frozen
    /// that write would block for ever, so the close is bounded by ``closeBoundSeconds`` of
    /// wall-clock time (then the held-back samples are dropped).
    public func close() {
        let closing = WallClockBound(stallSeconds: Self.closeBoundSeconds)
        try? closing.guarding(port: name) {
            BrokenPipe.withSignalBlocked {
                playback = nil
                capture = nil
            }
        }
        configuration = nil
    }

    /// The longest ``close()`` waits for the playback side to take its last samples.
    public static let closeBoundSeconds = 0.5

    // MARK: Transfers

    private func write(_ pcm: PCMHandle, frames: Int) throws(AudioError) {
        var done = 0
        var stalls = 0
        var failures = 0
        while done < frames {
            let channels = pcm.channels
            let result = BrokenPipe.withSignalBlocked {
                outputSamples.withUnsafeBufferPointer { samples in
                    ALSACall.frames {
                        snd_pcm_writei(pcm.handle, samples.baseAddress! + done * channels, UInt(frames - done))
                    }
                }
            }
            // The file plugin may report a write the watchdog interrupted as done.
            if let fired = WallClockWatchdog.firedOnThisThread() { throw fired }
            if result > 0 {
                done += result
                stalls = 0
                failures = 0
            } else if result == 0 {
                if let fired = WallClockWatchdog.firedOnThisThread() { throw fired }
                stalls += 1
                if stalls > 3 {
                    throw AudioError.io(device: pcm.device, operation: "snd_pcm_writei", detail: ErrorDetail("accepts_no_data"))
                }
            } else {
                try recover(pcm, code: result, operation: "snd_pcm_writei", failures: &failures)
            }
        }
    }

    private func read(_ pcm: PCMHandle, frames: Int) throws(AudioError) {
        var done = 0
        var failures = 0
        let channels = pcm.channels
        let limit = pcm.readLimit
        while done < frames {
            // Read in a tight loop (the file plugin is read one frame per call); leave it
            // for the first error.
            ALSACall.clearMessage()
            let result = inputSamples.withUnsafeMutableBufferPointer { samples -> Int in
                let base = samples.baseAddress!
                while done < frames {
                    let got = snd_pcm_readi(pcm.handle, base + done * channels, UInt(min(frames - done, limit)))
                    if got <= 0 { return got }
                    // The file plugin reports a read of its FIFO that the watchdog interrupted
                    // as a frame read (of stale data): ask after every call.
                    if WallClockWatchdog.firedOnThisThread() != nil { return -Int(EINTR) }
                    done += got
                }
                return 0
            }
            if let fired = WallClockWatchdog.firedOnThisThread() { throw fired }
            if done == frames { break }
            if result == 0 {
                // A blocking read only returns 0 when its source ended.
                throw AudioError.io(device: pcm.device, operation: "snd_pcm_readi", detail: ErrorDetail("capture_ended"))
            }
            try recover(pcm, code: result, operation: "snd_pcm_readi", failures: &failures)
        }
    }

    /// Recovers from an xrun or a suspend (counting it) or from an interrupted call;
    /// throws the mapped error for anything else, or when recovering does not help
    /// (`failures` counts attempts since the last frame went through: the file plugin
    /// also reports a vanished reader of its output file as `-EPIPE`).
    private func recover(_ pcm: PCMHandle, code: Int, operation: String, failures: inout Int) throws(AudioError) {
        // Interrupted by the wall-clock watchdog (``WallClockBound``): its error, not ALSA's
        // (the file plugin reports an interrupted read of its FIFO as -1).
        if let fired = WallClockWatchdog.firedOnThisThread() { throw fired }
        let errno = Int32(clamping: -code)
        guard errno == EPIPE || errno == ESTRPIPE || errno == EINTR else {
            throw ALSACall.error(code: code, operation: operation, stream: pcm.stream.word, device: pcm.device)
        }
        failures += 1
        if failures > 3 {
            throw AudioError.io(
                device: pcm.device, operation: operation,
                detail: ErrorDetail("\(pcm.stream.word)_stopped", [ALSACall.errorName(code)]))
        }
        if errno != EINTR { xrunCount += 1 }
        let recovered = snd_pcm_recover(pcm.handle, Int32(code), 1)
        if recovered < 0 {
            throw ALSACall.error(code: Int(recovered), operation: "snd_pcm_recover", stream: pcm.stream.word, device: pcm.device)
        }
        if pcm.stream == .playback, snd_pcm_state(pcm.handle) == SND_PCM_STATE_PREPARED {
            try prefill(pcm)
        }
    }

    /// Writes one buffer of silence; the stream starts when it is full.
    private func prefill(_ pcm: PCMHandle) throws(AudioError) {
        let channels = pcm.channels
        let silence = [Int16](repeating: 0, count: bufferFrames * channels)
        var done = 0
        while done < bufferFrames {
            let result = BrokenPipe.withSignalBlocked {
                silence.withUnsafeBufferPointer { samples in
                    ALSACall.frames {
                        snd_pcm_writei(pcm.handle, samples.baseAddress! + done * channels, UInt(bufferFrames - done))
                    }
                }
            }
            if result > 0 {
                done += result
            } else if let fired = WallClockWatchdog.firedOnThisThread() {
                throw fired
            } else if result == 0 || Int32(clamping: -result) != EINTR {
                throw ALSACall.error(
                    code: result == 0 ? -Int(EIO) : result, operation: "snd_pcm_writei", stream: "playback", device: pcm.device)
            }
        }
    }
}

@available(*, unavailable) extension ALSAPort: Sendable {}

// MARK: - One PCM

/// Owns one opened `snd_pcm_t` and closes it in `deinit`. Not thread-safe.
final class PCMHandle {
    enum Stream {
        case playback, capture
        var alsa: snd_pcm_stream_t { self == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE }
        /// The stream's token in detail codes (`playback_call_failed`), not a word shown as is.
        var word: String { self == .playback ? "playback" : "capture" }
    }

    let handle: OpaquePointer
    let stream: Stream
    let device: String
    private(set) var channels: Int = 1
    /// The most frames one `snd_pcm_readi` call may ask for.
    ///
    /// ALSA's file plugin (alsa-lib 1.1.9 and later) fills a capture read with a single
    /// `read()` of its infile but reports every frame asked for as read, leaving the rest
    /// of the buffer stale when a FIFO holds less. Asking for one frame at a time is the
    /// only way to get what the other side wrote, in order and whole (a pipe never splits
    /// a frame its writer wrote in one piece).
    private(set) var readLimit: Int = .max

    /// Opens `device` in blocking mode, through `configuration` when given.
    init(device: String, stream: Stream, configuration: ALSAConfiguration?) throws(AudioError) {
        var pcm: OpaquePointer?
        let operation = configuration == nil ? "snd_pcm_open" : "snd_pcm_open_lconf"
        do {
            try ALSACall.check(operation, stream: stream.word, device: device) {
                if let configuration {
                    snd_pcm_open_lconf(&pcm, device, stream.alsa, 0, configuration.handle)
                } else {
                    snd_pcm_open(&pcm, device, stream.alsa, 0)
                }
            }
        }
        guard let pcm else {
            throw AudioError.io(device: device, operation: operation, detail: ErrorDetail("no_pcm"))
        }
        self.handle = pcm
        self.stream = stream
        self.device = device
        if stream == .capture, snd_pcm_type(pcm) == SND_PCM_TYPE_FILE {
            readLimit = 1
        }
    }

    deinit {
        snd_pcm_close(handle)
    }

    /// Of `rates`, those the device runs at without resampling, in the order given.
    func nativeRates(among rates: [Int]) throws(AudioError) -> [Int] {
        var hw: OpaquePointer?
        try ALSACall.check("snd_pcm_hw_params_malloc", device: device) { snd_pcm_hw_params_malloc(&hw) }
        defer { snd_pcm_hw_params_free(hw) }
        let what = stream.word
        try ALSACall.check("snd_pcm_hw_params_any", stream: what, device: device) { snd_pcm_hw_params_any(handle, hw) }
        try ALSACall.check("snd_pcm_hw_params_set_rate_resample", stream: what, device: device) {
            snd_pcm_hw_params_set_rate_resample(handle, hw, 0)
        }
        return rates.filter { snd_pcm_hw_params_test_rate(handle, hw, UInt32($0), 0) == 0 }
    }

    /// Sets S16_LE interleaved, mono (else stereo), the rate, period and buffer sizes and the
    /// start threshold (playback: a full buffer; capture: the first read).
    /// - Returns: the period and buffer sizes the device accepted.
    func configure(sampleRate: Int, periodFrames: Int, periods: Int, resample: Bool) throws(AudioError) -> (period: Int, buffer: Int) {
        var hw: OpaquePointer?
        try ALSACall.check("snd_pcm_hw_params_malloc", device: device) { snd_pcm_hw_params_malloc(&hw) }
        defer { snd_pcm_hw_params_free(hw) }
        let what = stream.word
        try ALSACall.check("snd_pcm_hw_params_any", stream: what, device: device) { snd_pcm_hw_params_any(handle, hw) }
        try ALSACall.check("snd_pcm_hw_params_set_access", stream: what, device: device) {
            snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        }
        try ALSACall.check("snd_pcm_hw_params_set_format", stream: what, device: device) {
            snd_pcm_hw_params_set_format(handle, hw, SND_PCM_FORMAT_S16_LE)
        }
        let channels: UInt32 = snd_pcm_hw_params_test_channels(handle, hw, 1) == 0 ? 1 : 2
        try ALSACall.check("snd_pcm_hw_params_set_channels", stream: what, device: device) {
            snd_pcm_hw_params_set_channels(handle, hw, channels)
        }
        try ALSACall.check("snd_pcm_hw_params_set_rate_resample", stream: what, device: device) {
            snd_pcm_hw_params_set_rate_resample(handle, hw, resample ? 1 : 0)
        }
        try ALSACall.check("snd_pcm_hw_params_set_rate", stream: what, device: device) {
            snd_pcm_hw_params_set_rate(handle, hw, UInt32(sampleRate), 0)
        }
        var period = UInt(periodFrames)
        var direction: Int32 = 0
        try ALSACall.check("snd_pcm_hw_params_set_period_size_near", stream: what, device: device) {
            snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &direction)
        }
        var buffer = period * UInt(periods)
        try ALSACall.check("snd_pcm_hw_params_set_buffer_size_near", stream: what, device: device) {
            snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer)
        }
        try ALSACall.check("snd_pcm_hw_params", stream: what, device: device) { snd_pcm_hw_params(handle, hw) }
        try ALSACall.check("snd_pcm_hw_params_get_period_size", stream: what, device: device) {
            snd_pcm_hw_params_get_period_size(hw, &period, &direction)
        }
        try ALSACall.check("snd_pcm_hw_params_get_buffer_size", stream: what, device: device) {
            snd_pcm_hw_params_get_buffer_size(hw, &buffer)
        }
        self.channels = Int(channels)

        var sw: OpaquePointer?
        try ALSACall.check("snd_pcm_sw_params_malloc", device: device) { snd_pcm_sw_params_malloc(&sw) }
        defer { snd_pcm_sw_params_free(sw) }
        try ALSACall.check("snd_pcm_sw_params_current", stream: what, device: device) { snd_pcm_sw_params_current(handle, sw) }
        let threshold: UInt = stream == .playback ? buffer : 1
        try ALSACall.check("snd_pcm_sw_params_set_start_threshold", stream: what, device: device) {
            snd_pcm_sw_params_set_start_threshold(handle, sw, threshold)
        }
        try ALSACall.check("snd_pcm_sw_params_set_avail_min", stream: what, device: device) {
            snd_pcm_sw_params_set_avail_min(handle, sw, period)
        }
        try ALSACall.check("snd_pcm_sw_params", stream: what, device: device) { snd_pcm_sw_params(handle, sw) }
        return (Int(period), Int(buffer))
    }
}

@available(*, unavailable) extension PCMHandle: Sendable {}

// MARK: - Cards and jacks

/// Card lookups for `hw:`/`plughw:` device names and jack detection.
public enum ALSACard {
    /// The card index a `hw:`/`plughw:` device name refers to (`hw:1,0`, `hw:1`,
    /// `plughw:CARD=Device,DEV=0`, `plughw:Device`), or `nil` for other names and cards
    /// that do not exist.
    static func index(ofDevice device: String) -> Int32? {
        guard let card = cardArgument(ofDevice: device) else { return nil }
        ALSACall.prepare()
        let index = snd_card_get_index(card)
        return index >= 0 ? index : nil
    }

    /// The card part of a `hw:`/`plughw:` name, unresolved (`"1"`, `"Device"`).
    static func cardArgument(ofDevice device: String) -> String? {
        guard let colon = device.firstIndex(of: ":") else { return nil }
        let prefix = device[..<colon]
        guard prefix == "hw" || prefix == "plughw" else { return nil }
        let arguments = device[device.index(after: colon)...].split(separator: ",")
        guard let first = arguments.first else { return nil }
        var card = first.hasPrefix("CARD=") ? first.dropFirst(5) : first
        if card.contains("=") {
            guard let named = arguments.first(where: { $0.hasPrefix("CARD=") }) else { return nil }
            card = named.dropFirst(5)
        }
        let trimmed = card.trimmingCharacters(in: "\"'")
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Whether a Grokker is plugged in, as the vendor's Android layer judged a headset plug:
    /// only a plug with a microphone counts. Of the card's `... Jack` controls (`name`, on),
    /// the headphone jacks (`Headphone`, `Line Out`, `Headset`) must report a plug where the
    /// card has any, and so must the microphone jacks (names with `Mic`); other jacks (HDMI,
    /// speaker phantom jacks) are no Grokker's. `nil` when the card reports neither kind.
    public static func judge(_ jacks: [(name: String, plugged: Bool)]) -> Bool? {
        let microphones = jacks.filter { $0.name.contains("Mic") }
        let headphones = jacks.filter { jack in
            !jack.name.contains("Mic") && ["Headphone", "Line Out", "Headset"].contains { jack.name.contains($0) }
        }
        if microphones.isEmpty && headphones.isEmpty { return nil }
        let heard = microphones.isEmpty || microphones.contains { $0.plugged }
        let played = headphones.isEmpty || headphones.contains { $0.plugged }
        return heard && played
    }

    /// The card's `... Jack` boolean controls and whether each reports a plug (any of its
    /// values on); empty when it has none or they cannot be read.
    static func jacks(card: Int32) -> [(name: String, plugged: Bool)] {
        var ctl: OpaquePointer?
        guard snd_ctl_open(&ctl, "hw:\(card)", 0) >= 0, let ctl else { return [] }
        defer { snd_ctl_close(ctl) }
        var list: OpaquePointer?
        guard snd_ctl_elem_list_malloc(&list) >= 0, let list else { return [] }
        defer { snd_ctl_elem_list_free(list) }
        guard snd_ctl_elem_list(ctl, list) >= 0 else { return [] }
        let count = snd_ctl_elem_list_get_count(list)
        guard count > 0, snd_ctl_elem_list_alloc_space(list, count) >= 0 else { return [] }
        defer { snd_ctl_elem_list_free_space(list) }
        guard snd_ctl_elem_list(ctl, list) >= 0 else { return [] }

        var id: OpaquePointer?
        var info: OpaquePointer?
        var value: OpaquePointer?
        guard snd_ctl_elem_id_malloc(&id) >= 0, snd_ctl_elem_info_malloc(&info) >= 0,
            snd_ctl_elem_value_malloc(&value) >= 0
        else {
            snd_ctl_elem_id_free(id); snd_ctl_elem_info_free(info); snd_ctl_elem_value_free(value)
            return []
        }
        defer { snd_ctl_elem_id_free(id); snd_ctl_elem_info_free(info); snd_ctl_elem_value_free(value) }

        var jacks: [(name: String, plugged: Bool)] = []
        for index in 0..<snd_ctl_elem_list_get_used(list) {
            guard let cName = snd_ctl_elem_list_get_name(list, index) else { continue }
            let name = String(cString: cName)
            guard name.hasSuffix(" Jack") else { continue }
            snd_ctl_elem_list_get_id(list, index, id)
            snd_ctl_elem_info_set_id(info, id)
            guard snd_ctl_elem_info(ctl, info) >= 0,
                snd_ctl_elem_info_get_type(info) == SND_CTL_ELEM_TYPE_BOOLEAN
            else { continue }
            snd_ctl_elem_value_set_id(value, id)
            guard snd_ctl_elem_read(ctl, value) >= 0 else { continue }
            let plugged = (0..<snd_ctl_elem_info_get_count(info)).contains { snd_ctl_elem_value_get_boolean(value, $0) != 0 }
            jacks.append((name, plugged))
        }
        return jacks
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in characters: String) -> String {
        var text = self
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
