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

        @Test("program takes GS1 parts or an EPC URI and says the new EPC in hex and as a tag URI, in text and in --json")
        func programNamesTheNewEPC() throws {
            let bench = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: bench) }
            // urn:epc:tag:sgtin-96:3.0614141.812345.6789, the TDS's worked example, and serial 6790.
            let (old, new) = ("3074257BF7194E4000001A85", "3074257BF7194E4000001A86")
            #expect(try runBinary(["--bench", bench, "region", "set", "fcc", "--device", "sim:0"]).status == 0)
            let german = try runBinary(["--bench", bench, "--lang", "de", "tag", "program", "--device", "sim:0", "--epc", old,
                                        "--sgtin", "0614141.812345.6790", "--filter", "3"])
            #expect(german.status == 0, "\(german.standardError)")
            #expect(german.standardOutput.contains(text(.tagProgrammed, .de, "sim:0", old, new, "urn:epc:tag:sgtin-96:3.0614141.812345.6790")),
                    "\(german.standardOutput)")
            let json = try runBinary(["--bench", bench, "--json", "tag", "program", "--device", "sim:0", "--epc", new,
                                      "--epc-uri", "urn:epc:tag:sgtin-96:3.0614141.812345.6789"])
            #expect(json.status == 0 && json.standardOutput.contains("\"new_epc\":\"\(old)\""), "\(json.standardOutput)")
            #expect(json.standardOutput.contains("\"new_epc_uri\":\"urn:epc:tag:sgtin-96:3.0614141.812345.6789\""), "\(json.standardOutput)")
        }

        /// A tag out of reach (TAG_NOT_FOUND, exit 1) is TagResultTests' and DeviceJobTests'.
        @Test("a bad EPC, odd data, a payload past 20 bits or a GS1 part that does not fit is a usage error")
        func failures() throws {
            #expect(try runBinary(["tag", "read", "--device", "sim:0", "--epc", "xyz"]).status == 64)
            #expect(try runBinary(["tag", "write", "--device", "sim:0", "--epc", "30742574", "--data", "ABC"]).status == 64)
            #expect(try runBinary(["tag", "lock", "--device", "sim:0", "--epc", "30742574", "--payload", "FFFFFF"]).status == 64)
            // An item reference one digit short for a 7-digit company prefix: named, in the reader's language.
            let short = try runBinary(["--lang", "fr", "tag", "program", "--device", "sim:0", "--epc", "30742574", "--sgtin", "0614141.81234.1"])
            #expect(short.status == 64)
            #expect(short.standardError.contains("« 81234 »") && short.standardError.contains("6 chiffres"), "\(short.standardError)")
        }
    }
}
