import Foundation
import GrokAudio
import GrokBasics
import GrokLink
import GrokProtocol
import GrokTestSupport
import Testing
@testable import GrokkerEmulator

/// The emulated unit's audio ends (``AnalogueInput``, ``EmulatedHardware``): it does not
/// hear a host below its threshold, clips a host that is too hot, and answers at its output
/// level. Sample buffers first, then the whole link on a simulated cable.
@Suite("The unit's audio ends")
struct AnalogueInputTests {
    /// `count` samples of a sine of peak `peak` at `hz`, 44.1 kHz.
    static func tone(peak: Float, hz: Double = 1000, count: Int = 4410) -> [Float] {
        (0..<count).map { peak * Float(sin(2 * Double.pi * hz * Double($0) / 44_100)) }
    }

    static func heard(_ samples: [Float], blocks: [Int] = [256]) -> (output: [Float], stage: AnalogueInput) {
        var stage = AnalogueInput(hardware: .grokker1, sampleRate: 44_100)
        var output = [Float](repeating: .nan, count: samples.count)
        var at = 0
        var which = 0
        while at < samples.count {
            let n = min(blocks[which % blocks.count], samples.count - at)
            samples[at..<(at + n)].withUnsafeBufferPointer { input in
                output[at..<(at + n)].withUnsafeMutableBufferPointer { stage.process(input, into: $0) }
            }
            at += n
            which += 1
        }
        return (output, stage)
    }

    @Test("a tone whose peaks stay just under the GR-1's threshold (-40 dBFS) reaches its receiver as exact silence")
    func underTheThresholdIsSilence() {
        let (output, stage) = Self.heard(Self.tone(peak: EmulatedHardware.grokker1InputThreshold * 0.95))
        #expect(output.allSatisfy { $0 == 0 })
        #expect(stage.detectedSamples == 0)
        #expect(!stage.detecting)
    }

    @Test("a tone whose peaks reach just over the threshold passes unchanged from its first peak on")
    func overTheThresholdPassesUnchanged() {
        let input = Self.tone(peak: EmulatedHardware.grokker1InputThreshold * 1.05)
        let (output, stage) = Self.heard(input)
        let first = input.firstIndex { abs($0) >= EmulatedHardware.grokker1InputThreshold }!
        #expect(output[..<first].allSatisfy { $0 == 0 })
        #expect(Array(output[first...]) == Array(input[first...]))
        #expect(stage.detectedSamples == Int64(input.count - first))
    }

    @Test("after the host goes quiet the receiver listens for the 5 ms hold, then hears silence")
    func theHoldEndsAfterFiveMilliseconds() {
        let input = Self.tone(peak: 0.5, count: 441) + [Float](repeating: 0.001, count: 1000)
        let (output, stage) = Self.heard(input)
        let lastLoud = input.lastIndex { abs($0) >= EmulatedHardware.grokker1InputThreshold }!
        #expect(stage.holdSamples == 221)
        #expect(output[lastLoud + stage.holdSamples] == 0.001)
        #expect(output[(lastLoud + stage.holdSamples + 1)...].allSatisfy { $0 == 0 })
    }

    @Test("samples beyond the clip level (1.4 of the host's full scale) reach the receiver clipped, and are counted")
    func aHotHostIsClipped() {
        let input = Self.tone(peak: 4)
        let (output, stage) = Self.heard(input)
        #expect(output.max() == EmulatedHardware.grokker1InputClip && output.min() == -EmulatedHardware.grokker1InputClip)
        #expect(stage.clippedSamples == Int64(input.filter { abs($0) > EmulatedHardware.grokker1InputClip }.count))
        #expect(stage.loudest > 3.99)
        for (x, y) in zip(input, output) where abs(x) <= EmulatedHardware.grokker1InputClip { #expect(x == y) }
    }

    @Test("the same samples in blocks of any size give the same output")
    func blocksDoNotMatter() {
        var input = Self.tone(peak: 0.02, count: 3000) + [Float](repeating: 0, count: 500) + Self.tone(peak: 2, count: 2000)
        input[1000] = 0.5
        let whole = Self.heard(input, blocks: [input.count]).output
        #expect(Self.heard(input, blocks: [1]).output == whole)
        #expect(Self.heard(input, blocks: [7, 256, 1, 333]).output == whole)
    }

    // MARK: The whole link

    /// A host ``VendorLink`` and an out-of-the-box unit, the host's tones changed by `gainDB`
    /// on the way to the unit.
    final class Link {
        let temp = TemporaryDirectory("grok-analogue")
        let grokker: EmulatedGrokker
        let driver: LinkDriver<VendorLink>
        var host: VendorLink { driver.engine }

        init(hostGainDB: Double) throws {
            var rng = SplitMix64(seed: 22)
            let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
            grokker = try EmulatedGrokker(store: store, scene: RFScene(tags: []))
            let cable = CableConfiguration(hostToDevice: Impairments(gainDB: hostGainDB))
            let port = SimulatedCablePort(name: "analogue", sampleRate: 44_100, configuration: cable, peer: grokker)
            driver = LinkDriver(port: port, engine: try VendorLink(role: .host, sampleRate: 44_100), blockSize: 256)
        }

        deinit { temp.remove() }

        /// Handshakes at 12 spb within `seconds` of audio; whether it connected.
        func connect(within seconds: Double) throws -> Bool {
            try host.open(samplesPerBit: 12)
            return try driver.run(forAtMost: seconds) { host.isConnected }
        }

        /// GetVersion's answer, or nil.
        func version() throws -> VendorReaderVersion? {
            let request = VendorRequest.getVersion(VendorVersionRequest())
            try host.send(command: request.opcode.rawValue, payload: request.encodePayload())
            var answer: ResponsePacket?
            var done = false
            _ = try driver.run(forAtMost: 5) {
                for event in host.drainEvents() {
                    if case .packet(.completed(_, let response)) = event { answer = response; done = true }
                    if case .packet(.failed) = event { done = true }
                }
                return done
            }
            return try answer.map { try VendorReaderVersion(decoding: $0.data) }
        }
    }

    @Test("a host 46 dB down (peaks at 0.005 of full scale, under the threshold) gets no answer: the unit detects nothing and never handshakes")
    func aQuietHostIsNotHeard() throws {
        let link = try Link(hostGainDB: -46)
        #expect(try link.connect(within: 2) == false)
        #expect(link.grokker.input.detectedSamples == 0)
        #expect(link.grokker.link.modem.statistics.handshakes == 0)
    }

    @Test("a host 34 dB down (peaks at 0.02 of full scale, over the threshold) connects and is answered")
    func aHostOverTheThresholdIsHeard() throws {
        let link = try Link(hostGainDB: -34)
        #expect(try link.connect(within: 2))
        #expect(try link.version()?.serialNumber == link.grokker.store.state.serialNumber)
    }

    @Test("a host 12 or 20 dB too hot is clipped at the unit's input (to a near square wave), and our modulation survives it", arguments: [12.0, 20.0])
    func aHotHostStillConnects(_ gainDB: Double) throws {
        let link = try Link(hostGainDB: gainDB)
        #expect(try link.connect(within: 2))
        #expect(try link.version()?.serialNumber == link.grokker.store.state.serialNumber)
        #expect(link.grokker.input.clippedSamples > 0)
        #expect(link.grokker.input.loudest > 3.9)
    }

    @Test("the unit answers at its output level: the GR-1 at full scale, a model at 0.25 a quarter as loud")
    func theOutputLevelIsTheModels() throws {
        var peaks: [Float] = []
        for level: Float in [EmulatedHardware.grokker1OutputLevel, 0.25] {
            let temp = TemporaryDirectory("grok-analogue-out")
            defer { temp.remove() }
            var rng = SplitMix64(seed: 5)
            let store = try DeviceStateStore.openOrCreate(deviceDirectory: temp.file("unit"), using: &rng)
            var hardware = EmulatedHardware.grokker1
            hardware.outputLevel = level
            let grokker = try EmulatedGrokker(store: store, scene: RFScene(tags: []), hardware: hardware)
            let silence = [Float](repeating: 0, count: 4410)
            var output = [Float](repeating: 0, count: silence.count)
            silence.withUnsafeBufferPointer { i in output.withUnsafeMutableBufferPointer { grokker.process(input: i, output: $0) } }
            // Its request tone's loudest sample.
            peaks.append(output.map(abs).max() ?? 0)
        }
        #expect(EmulatedHardware.grokker1OutputLevel == 1)
        #expect(peaks[0] > 0.97 && peaks[0] <= 1, "the sampled peak of a full-scale tone: \(peaks[0])")
        #expect(abs(peaks[1] - 0.25 * peaks[0]) < 1e-5, "\(peaks)")
    }
}
