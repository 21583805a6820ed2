import GrokAudio

/// Runs a ``LinkEngine`` over an ``AudioPort``: each block the engine turns what was captured
/// into what to play, and the port plays it while capturing the next block.
///
/// The driver owns its engine and port and is used from one thread at a time.
public final class LinkDriver {
    public let port: any AudioPort
    public let engine: LinkEngine
    /// Frames per transfer.
    public let blockSize: Int
    /// Pace transfers to the wall clock (`--realtime`) instead of running as fast as the port allows.
    public var realtime: Bool

    private var captured: [Float]
    private var playback: [Float]
    private var wallStart: Double?
    private var samplesAtWallStart: Int64 = 0

    public init(port: any AudioPort, engine: LinkEngine, blockSize: Int = 256, realtime: Bool = false) {
        precondition(port.sampleRate == engine.sampleRate, "port and engine must run at one sample rate")
        self.port = port
        self.engine = engine
        self.blockSize = blockSize
        self.realtime = realtime
        captured = [Float](repeating: 0, count: blockSize)
        playback = [Float](repeating: 0, count: blockSize)
    }

    /// Seconds of audio to samples.
    public func samples(_ seconds: Double) -> Int64 { engine.samples(seconds) }

    /// One block: the engine digests the last capture and fills the next playback, the port
    /// plays it and captures again.
    public func pump() throws(AudioError) {
        captured.withUnsafeBufferPointer { input in
            playback.withUnsafeMutableBufferPointer { output in engine.process(input: input, output: output) }
        }
        let port = self.port
        try playback.withUnsafeBufferPointer { (output) throws(AudioError) in
            try captured.withUnsafeMutableBufferPointer { (input) throws(AudioError) in
                try port.transfer(output: output, input: input)
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
