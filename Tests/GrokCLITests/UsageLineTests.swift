import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// The usage line is generated from the declarations: an exclusive set shows as one
/// choice, a whole number's range in place of its value name.
@Suite("Usage lines")
struct UsageLineTests {
    func usage(_ command: [String], _ language: Language = .en) -> String {
        let help = runInProcess(command + ["--help", "--lang", language.rawValue]).standardOutput
        return collapsed(help.components(separatedBy: "\n\n").first { $0.hasPrefix(text(.helpHeadingUsage, language)) } ?? help)
    }

    @Test("exclusive options show as one choice, once: [--csv | --json], [--interactive | --unattended], [--name <name> | --version <version> | --package <file>]")
    func exclusiveSets() {
        let export = usage(["ledger", "export"])
        #expect(export.contains("[--csv | --json]"), "\(export)")
        #expect(export.components(separatedBy: "--csv").count == 2, "\(export)")
        let provision = usage(["provision"])
        #expect(provision.contains("[--interactive | --unattended]"), "\(provision)")
        let flash = usage(["firmware", "flash"])
        #expect(flash.range(of: #"\[--name <[^>]+> \| --version <[^>]+> \| --package <[^>]+>\]"#, options: .regularExpression) != nil,
                "\(flash)")
    }

    @Test("a whole number's range replaces its value name: --limit <1-1000000>, --offset <0-65534>, in every language")
    func ranges() {
        for language in Language.allCases {
            #expect(usage(["ledger", "show"], language).contains("[--limit <1-1000000>]"), "\(usage(["ledger", "show"], language))")
            #expect(usage(["tag", "read"], language).contains("[--offset <0-65534>]"), "\(usage(["tag", "read"], language))")
        }
    }
}
