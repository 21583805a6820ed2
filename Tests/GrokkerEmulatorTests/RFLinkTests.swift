import Foundation
import GrokAudio
import GrokProtocol
import Testing

@testable import GrokkerEmulator

/// The radio link as the reader's configuration sets it: receive sensitivity, write power
/// and write sensitivity, bit errors near the floor, capture (docs/scene.md, "The link
/// budget" and "What the simulation does with a scene").
@Suite("RF link")
struct RFLinkTests {
    /// Tags behind one-way path losses of 20, 25, ... 45 dB: at 30 dBm all wake, and their
    /// replies reach the reader at -18, -28, ... -68 dBm (30 − 2L − 8).
    static let ladder = RFScene(tags: (0..<6).map {
        RFScene.Tag(epc: RFFixtures.epc($0), placement: .pathLoss(dB: 20 + 5 * Double($0)))
    })

    @Test("the configured sensitivity is the reader's receive threshold, never below the hardware's floor",
          arguments: [(-85, 6), (-60, 5), (-45, 3), (-25, 1)])
    func readsFallOffAsTheSensitivityRises(sensitivityDBm: Int, expected: Int) {
        var parameters = InventoryParameters()
        parameters.sensitivityTenthsDBm = Int16(sensitivityDBm * 10)
        let (_, reports) = RegionObedienceTests.run("fcc", scene: Self.ladder, seconds: 0.3, parameters: parameters)
        // The strongest `expected` tags, and only they.
        #expect(Set(reports.map(\.epc)) == Set((0..<expected).map(RFFixtures.epc)))
    }
}
