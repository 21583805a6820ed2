import GrokAudio

/// One end of a link that turns captured samples into samples to play, keeping its own clock
/// in samples: what a ``LinkDriver`` pumps (``VendorLink``).
public protocol SamplePump: AnyObject {
    /// Samples processed so far.
    var now: Int64 { get }
    /// Frames per second of that clock.
    var sampleRate: Int { get }
    /// Consumes one block of captured samples and fills the same number to play.
    func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>)
}

/// Runs a ``SamplePump`` over an ``AudioPort``: each block the engine turns what was captured
/// into what to play, and the port plays it while capturing the next block.
///
/// The driver owns its engine and port and is used from one thread at a time.
public final class LinkDriver<Engine: SamplePump> {
    public let port: any AudioPort
    public let engine: Engine
    /// Frames per transfer.
    public let blockSize: Int
    /// Pace transfers to the wall clock (`--realtime`) instead of running as fast as the port allows.
    public var realtime: Bool
    /// Wall-clock limits on the port's transfers (a frozen peer, a stalled card, a step or
    /// device run past its deadline, a stop signal); `nil`: none. The engine's own timeouts
    /// stay in samples: this bounds only the I/O around it. Checked before every transfer;
    /// a transfer blocked when it fires is interrupted (see ``WallClockBound``), and the
    /// pump throws the bound's ``AudioError``.
    public var bound: WallClockBound?

    private var captured: [Float]
    private var playback: [Float]
    private var wallStart: Double?
    private var samplesAtWallStart: Int64 = 0

    public init(port: any AudioPort, engine: Engine, blockSize: Int = 256, realtime: Bool = false) {
        precondition(port.sampleRate == engine.sampleRate, "port and engine must run at one sample rate")
        self.port = port
        self.engine = engine
        self.blockSize = blockSize
        self.realtime = realtime
        captured = [Float](repeating: 0, count: blockSize)
        playback = [Float](repeating: 0, count: blockSize)
    }

    /// Seconds of audio to samples.
    public func samples(_ seconds: Double) -> Int64 { Int64((seconds * Double(engine.sampleRate)).rounded()) }

    /// One block: the engine digests the last capture and fills the next playback, the port
    /// plays it and captures again.
    public func pump() throws(AudioError) {
        captured.withUnsafeBufferPointer { input in
            playback.withUnsafeMutableBufferPointer { output in engine.process(input: input, output: output) }
        }
        let port = self.port
        let bound = self.bound
        try playback.withUnsafeBufferPointer { (output) throws(AudioError) in
            try captured.withUnsafeMutableBufferPointer { (input) throws(AudioError) in
                if let bound {
                    try bound.guardingTransfer(port: port.name) { () throws(AudioError) in
                        try port.transfer(output: output, input: input)
                    }
                } else {
                    try port.transfer(output: output, input: input)
                }
            }
        }
        if realtime { pace() }
    }

    /// Pumps until `done()` is true or `limit` seconds of audio have passed. Returns whether
    /// `done()` became true.
    @discardableResult
    public func run(forAtMost limit: Double, until done: () -> Bool) throws(AudioError) -> Bool {
        let end = engine.now + samples(limit)
        while !done() {
            guard engine.now < end else { return false }
            try pump()
        }
        return true
    }

    private func pace() {
        let wall = monotonicSeconds()
        guard let start = wallStart else {
            wallStart = wall
            samplesAtWallStart = engine.now
            return
        }
        let due = start + Double(engine.now - samplesAtWallStart) / Double(engine.sampleRate)
        if due > wall { sleepSeconds(due - wall) }
    }
}
