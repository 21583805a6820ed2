import GrokBasics
import GrokTUF
import Testing

@Suite("Metadata parsing under mutated input")
struct ParserRobustnessTests {
    /// A real signed targets file with delegations, as the repository tests write it.
    static func sample() throws -> [UInt8] {
        let repo = try TestRepository(label: "fuzz")
        repo.targets["firmware/a.bin"] = Array("a".utf8)
        repo.delegations = [.init(name: "release", delegator: "targets", keys: [try TUFSigningKey.ed25519()],
                                  paths: ["firmware/*"], terminating: true)]
        try repo.publishRoot()
        try repo.publish()
        return try repo.read("targets.json")
    }

    @Test("Mutated metadata never crashes the parser; what parses re-encodes and parses to the same value", arguments: [1, 2, 3, 4] as [UInt64])
    func mutations(seed: UInt64) throws {
        let original = try Self.sample()
        var rng = SplitMix64(seed: seed)
        let alphabet = Array("{}[]\",:\\0123456789-.eEtrufalsn \n\u{00}é".utf8)
        var parsed = 0
        for _ in 0..<2000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[at] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(alphabet.randomElement(using: &rng)!, at: at)
                default: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            guard let value = try? JSONParser.parse(bytes) else { continue }
            parsed += 1
            #expect(try JSONParser.parse(JSONWriter.encode(value)) == value)
            // Canonical JSON writes control characters raw (as securesystemslib does), so it is
            // valid JSON only without them; it is what is signed, never what is parsed.
            if let canonical = try? CanonicalJSON.encode(value, role: "root"), !canonical.contains(where: { $0 < 0x20 }) {
                #expect(try JSONParser.parse(canonical) == value)
            }
            // Metadata reading refuses or accepts, but never traps.
            _ = try? TargetsMetadata(bytes, role: "targets")
        }
        // Some mutations land in string contents and keep the document valid JSON.
        #expect(parsed > 0)
    }
}
