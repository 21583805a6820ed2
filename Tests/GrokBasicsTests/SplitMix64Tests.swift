import GrokBasics
import GrokTestSupport
import Testing

@Suite("SplitMix64: the one seeded generator")
struct SplitMix64Tests {
    @Test("seed 0 gives the reference implementation's first outputs (Vigna's splitmix64.c)")
    func referenceOutputs() {
        var generator = SplitMix64(seed: 0)
        #expect((0..<3).map { _ in generator.next() } == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    @Test("the same seed draws the same bytes; another seed does not")
    func seededBytes() {
        var a = SplitMix64(seed: 42)
        var b = SplitMix64(seed: 42)
        var c = SplitMix64(seed: 43)
        let drawn = a.bytes(64)
        #expect(drawn == b.bytes(64))
        #expect(drawn != c.bytes(64))
    }
}
