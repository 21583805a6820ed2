// The in-memory cable: a host-side AudioPort wired to an emulated device through two
// impaired directions and two sample clocks.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Everything a ``SimulatedCablePort`` does to the link: one ``Impairments`` per direction,
/// the device's clock error, and the seed of every random choice.
///
/// The device's sample clock runs at `sampleRate × (1 + ppm(t) × 1e-6)` measured against the
/// host's, where `ppm(t) = deviceClockPPM + deviceClockDriftPPM × sin(2π t / driftPeriodSeconds)`
/// and `t` is the host's time. The device has therefore produced
/// `∫ rate × (1 + ppm(t) × 1e-6) dt` samples by host time `t`. Each of `deviceClockPPM` and
/// `deviceClockDriftPPM` is limited to ±100 000 ppm; a non-positive or non-finite
/// `driftPeriodSeconds` turns the wander off.
public struct CableConfiguration: Sendable, Codable, Equatable {
    /// What happens between the host's headphone output and the device's input.
    public var hostToDevice: Impairments
    /// What happens between the device's output and the host's microphone input.
    public var deviceToHost: Impairments
    /// The device's constant clock error in parts per million (positive: the device's
    /// clock is fast, so it takes in more samples per host second).
    public var deviceClockPPM: Double
    /// The amplitude, in parts per million, of a slow sinusoidal wander of the device's
    /// clock around ``deviceClockPPM``.
    public var deviceClockDriftPPM: Double
    /// The period of the wander, in seconds of host time.
    public var driftPeriodSeconds: Double
    /// Seeds the noise generators and the dropout phases; the same seed gives the same
    /// samples.
    public var seed: UInt64

    /// Creates a configuration; the defaults describe a clean cable with matched clocks.
    public init(
        hostToDevice: Impairments = .clean,
        deviceToHost: Impairments = .clean,
        deviceClockPPM: Double = 0,
        deviceClockDriftPPM: Double = 0,
        driftPeriodSeconds: Double = 20,
        seed: UInt64 = 1
    ) {
        self.hostToDevice = hostToDevice
        self.deviceToHost = deviceToHost
        self.deviceClockPPM = deviceClockPPM
        self.deviceClockDriftPPM = deviceClockDriftPPM
        self.driftPeriodSeconds = driftPeriodSeconds
        self.seed = seed
    }

    /// A perfect cable with matched clocks.
    public static let clean = CableConfiguration()

    /// The same impairments in both directions.
    public static func symmetric(
        _ impairments: Impairments, deviceClockPPM: Double = 0, seed: UInt64 = 1
    ) -> CableConfiguration {
        CableConfiguration(
            hostToDevice: impairments, deviceToHost: impairments, deviceClockPPM: deviceClockPPM, seed: seed)
    }

    private enum CodingKeys: String, CodingKey {
        case hostToDevice, deviceToHost, deviceClockPPM, deviceClockDriftPPM, driftPeriodSeconds, seed
    }

    /// Decodes a configuration; every key is optional and defaults as in ``init(hostToDevice:deviceToHost:deviceClockPPM:deviceClockDriftPPM:driftPeriodSeconds:seed:)``.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            hostToDevice: try c.decodeIfPresent(Impairments.self, forKey: .hostToDevice) ?? .clean,
            deviceToHost: try c.decodeIfPresent(Impairments.self, forKey: .deviceToHost) ?? .clean,
            deviceClockPPM: try c.decodeIfPresent(Double.self, forKey: .deviceClockPPM) ?? 0,
            deviceClockDriftPPM: try c.decodeIfPresent(Double.self, forKey: .deviceClockDriftPPM) ?? 0,
            driftPeriodSeconds: try c.decodeIfPresent(Double.self, forKey: .driftPeriodSeconds) ?? 20,
            seed: try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1
        )
    }
}

/// The device's sample clock as a function of the host's: how many device samples have
/// elapsed at a given (fractional) host sample count.
struct DeviceClock {
    private let slope: Double  // ppm × 1e-6
    private let wanderAmplitude: Double  // drift × 1e-6 × period / 2π, in device samples
    private let wanderOmega: Double  // 2π / period, per host sample

    /// Whether the two clocks are identical (device time == host time).
    let isExact: Bool

    init(ppm: Double, driftPPM: Double, driftPeriodSeconds: Double, sampleRate: Int) {
        let limit = 100_000.0
        let ppm = ppm.isFinite ? Swift.min(Swift.max(ppm, -limit), limit) : 0
        var drift = driftPPM.isFinite ? Swift.min(Swift.max(driftPPM, -limit), limit) : 0
        let period = driftPeriodSeconds * Double(sampleRate)
        if !(period.isFinite && period > 0) { drift = 0 }
        slope = ppm * 1e-6
        if drift != 0 {
            wanderOmega = 2 * Double.pi / period
            wanderAmplitude = drift * 1e-6 / wanderOmega
        } else {
            wanderOmega = 0
            wanderAmplitude = 0
        }
        isExact = ppm == 0 && drift == 0
    }

    /// Device samples elapsed at host sample count `host`.
    func deviceTime(atHostTime host: Double) -> Double {
        var t = host + host * slope
        if wanderAmplitude != 0 {
            t += wanderAmplitude * (1 - cos(wanderOmega * host))
        }
        return t
    }
}

/// An ``AudioPort`` whose far end is an emulated device (a ``CablePeer``) reached through a
/// simulated cable: impairments in each direction and a device clock that differs from the
/// host's.
///
/// On each ``transfer(output:input:)`` of N host samples:
///
/// 1. The host's samples pass through ``CableConfiguration/hostToDevice``.
/// 2. A fractional resampler converts them to the device's clock. The device receives the
///    M samples whose time has come during these N host samples, about
///    N × (1 + ppm × 1e-6): M varies from call to call and may be 0 for tiny blocks.
/// 3. The peer processes M samples in and M samples out. Its time is its own sample count,
///    ``deviceSamples``.
/// 4. The device's output is resampled back to the host's clock, passes through
///    ``CableConfiguration/deviceToHost``, and the host receives exactly N samples.
///
/// Both resamplers read the same clock function, so the device's output is consumed exactly
/// as fast as it is produced: the short history kept between calls (the FIFO that absorbs
/// the ±1 sample jitter of M) never grows. When the clocks differ, each direction delays the
/// signal by 8 samples (the resampler's half-length), 16 for a round trip through an echoing
/// device. With matched clocks (``CableConfiguration/deviceClockPPM`` and
/// ``CableConfiguration/deviceClockDriftPPM`` both 0) there is no resampling: M = N and no
/// delay.
///
/// Unplugged (``plugged`` false), the host hears exact zeros and its output is lost; the
/// device keeps running on zero input and its output goes nowhere.
///
/// Processing allocates nothing: long transfers are cut into pieces of fixed size. The port is
/// owned by one thread at a time; only ``plugged`` may be changed from another thread.
public final class SimulatedCablePort: AudioPort {
    /// The resampler's delay in each direction, in samples, when the clocks differ.
    static let resamplerDelay = WindowedSincResampler.halfTaps
    /// Samples kept from the previous block in front of each resampler's input.
    private static let historyLength = WindowedSincResampler.taps
    /// Longer transfers are processed in pieces of this many host samples, so the scratch
    /// buffers have a fixed size.
    private static let chunkLength = 4096
    /// The most device samples one chunk can produce: the clock error is at most
    /// 2 × 100 000 ppm, plus one for rounding.
    private static let deviceChunkCapacity = chunkLength + chunkLength / 4 + 4

    public let name: String
    public let sampleRate: Int
    /// What this cable does to the signal.
    public let configuration: CableConfiguration

    /// Samples the device has processed: its own clock.
    public private(set) var deviceSamples: Int64 = 0
    /// Samples the host has transferred: the host's clock.
    public private(set) var hostSamples: Int64 = 0

    private let peer: any CablePeer
    private let pluggedState = Atomic<Bool>(true)
    private var isClosed = false
    private let clock: DeviceClock
    private var toDevice: ImpairmentChain
    private var toHost: ImpairmentChain
    /// The device's time (fractional device samples) at ``hostSamples``.
    private var deviceTime: Double = 0

    /// Host-domain samples: `historyLength` from earlier blocks, then the current block.
    private let hostBuffer: UnsafeMutableBufferPointer<Float>
    /// What the device hears in the current block.
    private let deviceInput: UnsafeMutableBufferPointer<Float>
    /// Device output: `historyLength` from earlier blocks, then the current block.
    private let deviceBuffer: UnsafeMutableBufferPointer<Float>

    /// Connects a host-side port to `peer`.
    ///
    /// - Parameters:
    ///   - name: The port's name, such as `sim:1`.
    ///   - sampleRate: The host's sample rate (the device's nominal rate is the same).
    ///   - configuration: The cable's impairments, clocks and seed.
    ///   - peer: The emulated device; the port keeps it alive.
    public init(name: String, sampleRate: Int, configuration: CableConfiguration, peer: any CablePeer) {
        precondition(sampleRate > 0, "sample rate must be positive")
        self.name = name
        self.sampleRate = sampleRate
        self.configuration = configuration
        self.peer = peer
        clock = DeviceClock(
            ppm: configuration.deviceClockPPM,
            driftPPM: configuration.deviceClockDriftPPM,
            driftPeriodSeconds: configuration.driftPeriodSeconds,
            sampleRate: sampleRate)
        toDevice = ImpairmentChain(
            configuration.hostToDevice, sampleRate: sampleRate, seed: configuration.seed, stream: 1)
        toHost = ImpairmentChain(
            configuration.deviceToHost, sampleRate: sampleRate, seed: configuration.seed, stream: 2)
        hostBuffer = .allocate(capacity: Self.historyLength + Self.chunkLength)
        hostBuffer.initialize(repeating: 0)
        deviceInput = .allocate(capacity: Self.deviceChunkCapacity)
        deviceInput.initialize(repeating: 0)
        deviceBuffer = .allocate(capacity: Self.historyLength + Self.deviceChunkCapacity)
        deviceBuffer.initialize(repeating: 0)
    }

    deinit {
        hostBuffer.deallocate()
        deviceInput.deallocate()
        deviceBuffer.deallocate()
    }

    /// Whether the cable is plugged in. Safe to change from any thread; takes effect at the
    /// next transfer.
    public var plugged: Bool {
        get { pluggedState.load(ordering: .acquiring) }
        set { pluggedState.store(newValue, ordering: .releasing) }
    }

    /// The cable always knows: ``plugged``.
    public var jackPlugged: Bool? { plugged }

    /// Ends the connection; later transfers throw ``AudioError/closed(port:)``.
    public func close() {
        isClosed = true
    }

    /// Plays `output` into the cable and returns what the device sent back over the same
    /// span of host time. See the type's description for the steps.
    public func transfer(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) throws(AudioError) {
        precondition(output.count == input.count, "transfer needs equal output and input counts")
        if isClosed { throw .closed(port: name) }
        var start = 0
        while start < output.count {
            let end = Swift.min(start + Self.chunkLength, output.count)
            transferChunk(
                output: UnsafeBufferPointer(rebasing: output[start..<end]),
                input: UnsafeMutableBufferPointer(rebasing: input[start..<end]))
            start = end
        }
    }

    /// One step of ``transfer(output:input:)`` for at most ``chunkLength`` samples.
    private func transferChunk(output: UnsafeBufferPointer<Float>, input: UnsafeMutableBufferPointer<Float>) {
        let n = output.count
        let isPlugged = plugged
        let hostEnd = hostSamples + Int64(n)

        if clock.isExact {
            let toPeer = UnsafeMutableBufferPointer(rebasing: deviceInput[0..<n])
            let fromPeer = UnsafeMutableBufferPointer(rebasing: deviceBuffer[0..<n])
            if isPlugged {
                _ = toPeer.initialize(fromContentsOf: output)
                toDevice.process(toPeer)
            } else {
                toPeer.update(repeating: 0)
            }
            fromPeer.update(repeating: 0)
            peer.process(input: UnsafeBufferPointer(toPeer), output: fromPeer)
            if isPlugged {
                _ = input.initialize(fromContentsOf: fromPeer)
                toHost.process(input)
            } else {
                input.update(repeating: 0)
            }
            hostSamples = hostEnd
            deviceSamples = hostEnd
            deviceTime = Double(hostEnd)
            return
        }

        let history = Self.historyLength
        let delay = Double(Self.resamplerDelay)
        let startTime = deviceTime
        let endTime = clock.deviceTime(atHostTime: Double(hostEnd))
        let firstDevice = deviceSamples
        let endDevice = Swift.max(firstDevice, Int64(endTime.rounded(.up)))
        let m = Int(endDevice - firstDevice)
        precondition(m <= Self.deviceChunkCapacity, "device clock outside its range")
        // Device samples per host sample over this block.
        let ratio = (endTime - startTime) / Double(n)

        // Host -> device.
        let hostBlock = UnsafeMutableBufferPointer(rebasing: hostBuffer[history..<(history + n)])
        let toPeer = UnsafeMutableBufferPointer(rebasing: deviceInput[0..<m])
        if isPlugged {
            _ = hostBlock.initialize(fromContentsOf: output)
            toDevice.process(hostBlock)
            // Device sample k sits at host position (k - startTime) / ratio within this
            // block, read `delay` samples late so the filter's future taps exist.
            WindowedSincResampler.resample(
                source: UnsafeBufferPointer(rebasing: hostBuffer[0..<(history + n)]),
                first: (Double(firstDevice) - startTime) / ratio + delay,
                step: 1 / ratio,
                output: toPeer)
        } else {
            hostBlock.update(repeating: 0)
            toPeer.update(repeating: 0)
        }

        // The device.
        let fromPeer = UnsafeMutableBufferPointer(rebasing: deviceBuffer[history..<(history + m)])
        fromPeer.update(repeating: 0)
        peer.process(input: UnsafeBufferPointer(toPeer), output: fromPeer)

        // Device -> host: host sample j hears the device at device time
        // startTime + j * ratio - delay.
        if isPlugged {
            WindowedSincResampler.resample(
                source: UnsafeBufferPointer(rebasing: deviceBuffer[0..<(history + m)]),
                first: (startTime - Double(firstDevice)) + delay,
                step: ratio,
                output: input)
            toHost.process(input)
        } else {
            input.update(repeating: 0)
        }

        // Keep the last `history` samples of each side for the next block.
        shiftHistory(hostBuffer, by: n)
        shiftHistory(deviceBuffer, by: m)
        hostSamples = hostEnd
        deviceSamples = endDevice
        deviceTime = endTime
    }

    /// Moves the `historyLength` samples that end at `count + historyLength` to the front.
    private func shiftHistory(_ buffer: UnsafeMutableBufferPointer<Float>, by count: Int) {
        guard count > 0, let base = buffer.baseAddress else { return }
        base.update(from: base + count, count: Self.historyLength)
    }
}

@available(*, unavailable)
extension SimulatedCablePort: Sendable {}
