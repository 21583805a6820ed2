import Foundation
import GrokFleet
import GrokProtocol
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// Tag access results are sentences with a next step, not bare vendor codes.
@Suite("tag results")
struct TagResultTests {
    @Test("every vendor result has its own sentence in every language, and the failures say what to do")
    func everyCodeHasASentence() {
        for language in Language.allCases {
            let localizer = Localizer(language: language)
            let sentences = TagAccessStatus.allCases.map { localizer.text(TagCommand.sentence($0), "sim:0") }
            #expect(Set(sentences).count == TagAccessStatus.allCases.count, "\(language): \(sentences)")
            #expect(sentences.allSatisfy { $0.count > 30 && !$0.contains("{") }, "\(language): \(sentences)")
            if language != .en {
                let english = TagAccessStatus.allCases.map { Localizer(language: .en).text(TagCommand.sentence($0), "sim:0") }
                #expect(zip(sentences, english).allSatisfy { $0 != $1 }, "\(language)")
            }
        }
    }

    @Test("a tag out of reach says TAG_NOT_FOUND, why, and the inventory to check it with, in German")
    func tagNotFoundInGerman() throws {
        let bench = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: bench) }
        try setRegion("fcc", bench: bench, devices: [.emulated(index: 0)])
        let missing = try runBinary(["--bench", bench, "--lang", "de", "tag", "read", "--device", "sim:0",
                                     "--epc", "000000000000000000000001"])
        #expect(missing.status == 1)
        #expect(missing.standardOutput.contains("TAG_NOT_FOUND"))
        #expect(missing.standardOutput.contains(text(.tagStatusTagNotFound, .de, "sim:0")), "\(missing.standardOutput)")
        #expect(missing.standardOutput.contains("grokctl inventory --device sim:0"))
        let json = try runBinary(["--bench", bench, "--json", "tag", "read", "--device", "sim:0", "--epc", "000000000000000000000001"])
        #expect(json.status == 1)
        let line = try #require(try jsonObjects(json.standardOutput).first)
        #expect(line["device"] as? String == "sim:0" && line["epc"] as? String == "000000000000000000000001")
        #expect(line["operation"] as? String == "read" && line["result"] as? String == "TAG_NOT_FOUND")
    }
}
