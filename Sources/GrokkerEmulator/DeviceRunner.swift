import GrokAudio

/// Runs a device (any ``CablePeer``) on an audio port of its own: a pipe or an ALSA device,
/// when the emulated Grokker lives in its own process (`grokctl emulate`).
public enum DeviceRunner {
    /// Pumps blocks until the port closes or `shouldStop()` says so. Returns the samples processed.
    @discardableResult
    public static func run(_ device: any CablePeer, on port: any AudioPort, blockSize: Int = 256,
                           shouldStop: () -> Bool = { false }) throws(AudioError) -> Int64 {
        var captured = [Float](repeating: 0, count: blockSize)
        var playback = [Float](repeating: 0, count: blockSize)
        var total: Int64 = 0
        while !shouldStop() {
            captured.withUnsafeBufferPointer { i in playback.withUnsafeMutableBufferPointer { device.process(input: i, output: $0) } }
            do {
                try playback.withUnsafeBufferPointer { (o) throws(AudioError) in
                    try captured.withUnsafeMutableBufferPointer { (i) throws(AudioError) in try port.transfer(output: o, input: i) }
                }
            } catch .closed {
                break
            }
            total += Int64(blockSize)
        }
        return total
    }
}
