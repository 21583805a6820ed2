import Foundation
import GrokBasics
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

extension CLI {
    /// Real grokctl runs whose audio port cannot be opened, through the real libasound (its
    /// null and file plugins, as in CI) and the real FIFO and WAV code: a device name ALSA
    /// does not know, a configuration file that is missing or that libasound cannot parse, a
    /// PCM the file plugin refuses, a file plugin output under a regular file, an emulator
    /// input that is not there, a recording directory that cannot be made. What went wrong is
    /// a code under `audio.detail` with the errno's name, so the whole message reads in the
    /// user's language: no `strerror` or libasound English inside.
    @Suite("Audio port details in es, fr and de: no English inside a port's failure", .serialized)
    struct ALSADetailLanguageTests {
        /// One failing run: its arguments and what its message must name.
        struct Failure {
            let name: String
            let arguments: [String]
            /// Text the message must contain (the device or file, the errno's name).
            let names: [String]
        }

        /// PCMs libasound accepts as configuration but cannot use.
        static func asoundrc(blocker: String) -> String {
            """
            pcm.grok_no_slave {
                type file
                file "/dev/null"
                format "raw"
            }
            pcm.grok_blocked_file {
                type file
                slave.pcm { type null }
                file "\(blocker)/out.raw"
                format "raw"
            }
            """
        }

        static func failures(in directory: String) throws -> [Failure] {
            // A regular file where a directory should be: ENOTDIR even for root.
            let blocker = directory + "/not-a-directory"
            try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
            let config = directory + "/asoundrc"
            try asoundrc(blocker: blocker).write(toFile: config, atomically: true, encoding: .utf8)
            let broken = directory + "/broken-asoundrc"
            try "pcm.broken {\n  type file\n  slave { pcm \"null\"\n".write(toFile: broken, atomically: true, encoding: .utf8)
            let bench = directory + "/bench"
            return [
                Failure(name: "unknown device", arguments: ["info", "--device", "alsa:grok_no_such_device"],
                        names: ["grok_no_such_device", "snd_pcm_open", "ENOENT"]),
                Failure(name: "missing configuration file",
                        arguments: ["--alsa-config", directory + "/no-such-asoundrc", "info", "--device", "alsa:grokbench_host"],
                        names: [directory + "/no-such-asoundrc", "ENOENT"]),
                Failure(name: "unparsable configuration file",
                        arguments: ["--alsa-config", broken, "info", "--device", "alsa:broken"], names: [broken, "EINVAL"]),
                Failure(name: "a PCM the file plugin refuses",
                        arguments: ["--alsa-config", config, "info", "--device", "alsa:grok_no_slave"],
                        names: ["grok_no_slave", "EINVAL"]),
                Failure(name: "file plugin output under a regular file",
                        arguments: ["--alsa-config", config, "info", "--device", "alsa:grok_blocked_file"],
                        // The file plugin opens its output at the first write and says only EIO.
                        names: ["grok_blocked_file", "snd_pcm_writei", "EIO"]),
                Failure(name: "emulator input missing",
                        arguments: ["emulate", "--state", directory + "/unit", "--input", directory + "/no-input",
                                    "--output", directory + "/output"],
                        names: [directory + "/no-input", "ENOENT"]),
                Failure(name: "recording directory under a regular file",
                        arguments: ["info", "--device", "sim:0", "--bench", bench, "--record-audio", blocker + "/recordings"],
                        names: ["ENOTDIR"]),
            ]
        }

        /// `strerror`'s English for the errnos these failures meet (what details used to hold).
        static let systemSentences = [ENOENT, ENOTDIR, EINVAL, EACCES, EPIPE, EIO].map { String(cString: strerror($0)) }

        @Test("a port that cannot be opened is explained in the user's language, naming the errno",
              arguments: [Language.es, .fr, .de])
        func portFailuresReadInTheUsersLanguage(_ language: Language) throws {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let sentences = try FleetLocalizationTests.englishSentences(for: language)
            for failure in try Self.failures(in: directory) {
                let result = try runBinary(failure.arguments + ["--lang", language.rawValue])
                let output = result.standardOutput + result.standardError
                #expect(result.status != 0, "\(failure.name): \(output)")
                for name in failure.names {
                    #expect(output.contains(name), "\(language) \(failure.name) does not name \(name):\n\(output)")
                }
                let found = LanguageAcceptanceTests.faults(output, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(failure.name): \(found)\n\(output)")
                for sentence in Self.systemSentences {
                    #expect(!output.contains(sentence), "\(language) \(failure.name) holds strerror's English:\n\(output)")
                }
                for code in ["_failed", "_error", "config_", "directory_uncreatable"] {
                    #expect(!output.contains(code), "\(language) \(failure.name) shows a raw detail code:\n\(output)")
                }
            }
        }
    }
}
