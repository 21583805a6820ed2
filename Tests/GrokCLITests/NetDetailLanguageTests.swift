import Foundation
import GrokBasics
import NetTestSupport
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The repository root (three levels above this file).
private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

extension CLI {
    /// Real `grokctl firmware list` runs against a channel that cannot be fetched: a host no
    /// DNS knows, a refused port, an nginx whose certificate no trusted CA issued (the system
    /// store, then another pinned CA), a 404, and a server that closes without answering.
    /// The transport's error is nested inside TUF's `transport` detail, and what went wrong
    /// inside it is a code under `net.detail` (from libcurl's CURLcode, the socket's errno,
    /// the certificate check), so the whole message reads in the user's language.
    @Suite("Network details in es, fr and de: no English inside an unreachable channel's message")
    struct NetDetailLanguageTests {
        /// `grokctl firmware list` on `repository` with the demo channel's trust root, in a
        /// fresh state directory, giving up at the first failure (the default four retries
        /// would pause 15 s on each unreachable channel; the message is the same).
        static func list(_ repository: String, _ language: Language, extra: [String] = []) throws -> RunResult {
            let state = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: state) }
            return try runBinary(
                ["firmware", "list", "--repository", repository, "--trusted-root", checkout + "/firmware/demo-channel/root.json",
                 "--state", state, "--network-retries", "0"] + extra + ["--lang", language.rawValue],
                environment: ["HOME": state, "XDG_CONFIG_HOME": state + "/config", "LANG": language.rawValue])
        }

        @Test("an unknown host, a refused port, an untrusted server, a 404 and an empty reply read whole in the user's language",
              arguments: [Language.en, .es, .fr, .de])
        func unreachableChannelsReadInTheUsersLanguage(_ language: Language) throws {
            let server = try NginxServer()
            defer { server.stop() }
            let other = try TestPKI(in: server.scratch.path, name: "other")
            let silent = try ScriptedUpstream { _, _ in }  // closes every connection without a byte
            defer { silent.stop() }
            let sentences = language == .en ? [] : try FleetLocalizationTests.englishSentences(for: language)
            // Each failure, with what its English message says of it.
            let failures: [(name: String, repository: String, extra: [String], english: String)] = [
                ("unknown host", "https://fw.nonexistent.invalid/channel", [], "(no such host name is known)"),
                ("refused port", "https://127.0.0.1:9/channel", [], "(the server refused the connection)"),
                ("untrusted by the system store", server.base + "/channel", [],
                 "is not trusted by the system CA store (its certificate's issuer is not among the trusted authorities)"),
                ("untrusted by another CA", server.base + "/channel", ["--ca-bundle", other.caCertificate],
                 "is not trusted by the pinned CA bundle '\(other.caCertificate)' (its certificate's issuer"),
                ("404", server.base + "/channel", ["--ca-bundle", server.pki.caCertificate], "The repository has no https://"),
                ("empty reply", "http://127.0.0.1:\(silent.port)/channel", ["--allow-insecure-http"],
                 "(the server closed the connection without answering)"),
            ]
            for failure in failures {
                let run = try Self.list(failure.repository, language, extra: failure.extra)
                #expect(run.status != 0, "\(failure.name): \(run.standardError)")
                #expect(!run.standardError.contains("  "), "\(language) \(failure.name): \(run.standardError)")
                if language == .en {
                    #expect(run.standardError.contains(failure.english), "\(failure.name): \(run.standardError)")
                    continue
                }
                let found = LanguageAcceptanceTests.faults(run.standardError, language, sentences: sentences)
                #expect(found.isEmpty, "\(language) \(failure.name): \(found)\n\(run.standardError)")
                for code in ["host_not_found", "connection_refused", "issuer_unknown", "system_store", "pinned_bundle", "empty_reply"] {
                    #expect(!run.standardError.contains(code), "\(language) \(failure.name) shows the raw code \(code):\n\(run.standardError)")
                }
            }
        }
    }
}
