import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    @Suite("tag")
    struct TagCommandTests {
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

        @Test("program says the EPC the tag answers with now, in text and in --json")
        func programNamesTheNewEPC() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            let (old, new) = ("3074257BF7194E4000001A85", "3074257BF7194E4000001A99")
            #expect(try runBinary(["--bench", bench, "region", "set", "fcc", "--device", "sim:0"]).status == 0)
            let german = try runBinary(["--bench", bench, "--lang", "de", "tag", "program", "--device", "sim:0", "--epc", old, "--new-epc", new])
            #expect(german.status == 0, "\(german.standardError)")
            #expect(german.standardOutput.contains(text(.tagProgrammed, .de, "sim:0", old, new)), "\(german.standardOutput)")
            let json = try runBinary(["--bench", bench, "--json", "tag", "program", "--device", "sim:0", "--epc", new, "--new-epc", old])
            #expect(json.status == 0 && json.standardOutput.contains("\"new_epc\":\"\(old)\""), "\(json.standardOutput)")
        }

        /// A tag out of reach (TAG_NOT_FOUND, exit 1) is TagResultTests' and DeviceJobTests'.
        @Test("a bad EPC, odd data or a payload past 20 bits is a usage error")
        func failures() throws {
            #expect(try runBinary(["tag", "read", "--device", "sim:0", "--epc", "xyz"]).status == 64)
            #expect(try runBinary(["tag", "write", "--device", "sim:0", "--epc", "30742574", "--data", "ABC"]).status == 64)
            #expect(try runBinary(["tag", "lock", "--device", "sim:0", "--epc", "30742574", "--payload", "FFFFFF"]).status == 64)
        }
    }
}
