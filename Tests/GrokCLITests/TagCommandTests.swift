import Foundation
import Testing

@testable import GrokCLI

extension CLI {
    @Suite("tag")
    struct TagCommandTests {
        @Test("program a tag; a later run reads the new EPC back, and an inventory finds it")
        func programPersists() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            #expect(try runBinary(["--bench", bench, "region", "set", "fcc", "--device", "sim:0"]).status == 0)
            let listing = try jsonObjects(try runBinary(["--bench", bench, "--json", "inventory", "--device", "sim:0",
                                                          "--duration", "1"]).standardOutput)
            let old = try #require(listing.first?["epc"] as? String)
            let new = "3074257BF7194E4000C0FFEE"
            let programmed = try runBinary(["--bench", bench, "--json", "tag", "program", "--device", "sim:0", "--epc", old,
                                            "--new-epc", new])
            #expect(programmed.status == 0, "\(programmed.standardOutput)\(programmed.standardError)")
            let read = try jsonObjects(try runBinary(["--bench", bench, "--json", "tag", "read", "--device", "sim:0",
                                                      "--epc", new, "--bank", "epc", "--offset", "4", "--length", "12"]).standardOutput)
            // Read at once: the reader looks for the tag over its next rounds (TagSearchTests).
            #expect(read.first?["result"] as? String == "OK")
            #expect(read.first?["data"] as? String == new)
            let after = try jsonObjects(try runBinary(["--bench", bench, "--json", "inventory", "--device", "sim:0",
                                                        "--duration", "1"]).standardOutput)
            let epcs = Set(after.compactMap { $0["epc"] as? String })
            #expect(epcs.contains(new) && !epcs.contains(old))
        }

        @Test("kill is not in the vendor's tag-access set: a localized refusal with a stable code, nothing sent")
        func killIsRefused() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let json = try runBinary(["--bench", bench, "--json", "tag", "kill", "--device", "sim:0", "--epc", "3074257BF7194E4000001A85",
                                      "--kill-password", "DEADBEEF"])
            #expect(json.status == 1)
            #expect(json.standardError.contains("reader_not_supported"), "\(json.standardError)")
            let spanish = try runBinary(["--bench", bench, "--lang", "es", "tag", "kill", "--device", "sim:0",
                                         "--epc", "3074257BF7194E4000001A85", "--kill-password", "DEADBEEF"])
            #expect(spanish.status == 1)
            #expect(spanish.standardError.contains(text(.errorReaderNotSupported, .es, "sim:0", "kill")), "\(spanish.standardError)")
        }

        @Test("a tag out of reach is TAG_NOT_FOUND (exit 1); a bad EPC or odd data is a usage error")
        func failures() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            #expect(try runBinary(["--bench", bench, "region", "set", "fcc", "--device", "sim:0"]).status == 0)
            let missing = try runBinary(["--bench", bench, "tag", "read", "--device", "sim:0", "--epc", "000000000000000000000001"])
            #expect(missing.status == 1)
            #expect(missing.standardOutput.contains("TAG_NOT_FOUND"))
            #expect(try runBinary(["tag", "read", "--device", "sim:0", "--epc", "xyz"]).status == 64)
            #expect(try runBinary(["tag", "write", "--device", "sim:0", "--epc", "30742574", "--data", "ABC"]).status == 64)
            #expect(try runBinary(["tag", "lock", "--device", "sim:0", "--epc", "30742574", "--payload", "FFFFFF"]).status == 64)
        }
    }
}
