import Foundation
import GrokLink
import GrokProtocol
import GrokTestSupport
@testable import GrokkerEmulator
import Testing

/// The emulated Grokker takes every sound the vendor's library can encode (kind 1: `freq LE16,
/// ms LE16, rate x 256 LE16, clicks u8, (historyMs + 4) >> 3 u8`; kinds 2 and 3: u16 pairs).
/// The vendor's host re-sends a refused setting eight times and resets the link, so a unit
/// refusing what the vendor's app sends would be unusable to it.
@Suite("Sounds across the vendor's value ranges")
struct SoundRangeTests {
    static func unit() throws -> EmulatedGrokker {
        let bench = TemporaryDirectory("grok-sounds")
        return try EmulatedGrokker(store: try DeviceStateStore.openOrCreate(directory: bench.path, index: 0))
    }

    static func set(_ unit: EmulatedGrokker, _ configuration: VendorConfiguration) throws -> VendorReply? {
        let request = VendorRequest.setConfiguration(configuration)
        return unit.answer(RequestPacket(command: request.opcode.rawValue, payload: try request.encodePayload()))
    }

    @Test("every Geiger sound on the wire's edges is taken, 40 ms of history among them")
    func geigerEdges() throws {
        let unit = try Self.unit()
        var taken = 0
        for frequency: UInt16 in [0, 1, 199, 200, 3000, 8000, 8001, 65535] {
            for ms: UInt16 in [0, 1, 20, 100, 101, 65535] {
                for rate: UInt16 in [0, 1, 640, 65535] {
                    for clicks: UInt8 in [0, 1, 10, 255] {
                        for history: UInt8 in [0, 5, 38, 255] {  // 0, 40, 304, 2040 ms
                            let sound = VendorGeigerSound(frequencyHz: frequency, clickDurationMs: ms, clickRate256: rate,
                                                          maxClicksPerSecond: clicks, history8Ms: history)
                            #expect(try Self.set(unit, .geigerCounterSound(sound)) == .ack, "\(sound)")
                            taken += 1
                        }
                    }
                }
            }
        }
        #expect(taken == 8 * 6 * 4 * 4 * 4)
        // The vendor API's own call with a 40 ms history encodes and is taken.
        let vendor = try VendorGeigerSound(frequencyHz: 1000, clickDurationMs: 20, clickRate: 2.5, maxClicksPerSecond: 10, historyMs: 40)
        #expect(vendor.history8Ms == 5)
        #expect(try Self.set(unit, .geigerCounterSound(vendor)) == .ack)
    }

    @Test("what the piezo cannot sound is silence, not a refusal; clicks never overlap")
    func audibility() {
        #expect(GeigerSound.standard.isAudible)
        var quiet = GeigerSound.standard
        quiet.frequencyHz = 20_000
        #expect(!quiet.isAudible)
        quiet = GeigerSound.standard
        quiet.maxClicksPerSecond = 0
        #expect(!quiet.isAudible && quiet.playableClicksPerSecond == 0)
        var long = GeigerSound.standard
        (long.clickDurationMs, long.maxClicksPerSecond) = (100, 255)
        #expect(long.playableClicksPerSecond == 10)
        #expect(!SoundTone(frequencyHz: 0, durationMs: 50).isAudible)
        #expect(!SoundTone(frequencyHz: 2700, durationMs: 0).isAudible)
        #expect(SoundTone(frequencyHz: 2700, durationMs: 1).isAudible)
    }

    @Test("found sounds of any frequency and length are taken, up to the unit's tone count")
    func foundSoundEdges() throws {
        let unit = try Self.unit()
        let edges: [UInt16] = [0, 1, 199, 8001, 65535]
        // (0 Hz, 0 ms) is the list's end on the wire, not a tone.
        let tones = edges.flatMap { f in edges.map { VendorTone(frequencyHz: f, durationMs: $0) } }.filter { $0.frequencyHz != 0 || $0.durationMs != 0 }
        let most = Int(EmulatedHardware.grokker1.maxTonesInSound)
        for kind in [VendorConfigurationKind.foundItemSound, .foundLastItemSound] {
            for start in stride(from: 0, to: tones.count, by: most) {
                let chunk = Array(tones[start..<min(start + most, tones.count)])
                #expect(try Self.set(unit, .tones(kind, chunk)) == .ack, "\(kind) \(chunk)")
            }
            let tooMany = Array(repeating: VendorTone(frequencyHz: 2700, durationMs: 10), count: most + 1)
            #expect(try Self.set(unit, .tones(kind, tooMany)) == .nack, "more tones than the unit has room for")
        }
    }
}
