import Foundation
import Testing

@testable import GrokCLI
@testable import GrokCommandLine

/// Debian's chromium, headless: where it is, and whether a missing one may be skipped.
enum Chromium {
    /// `$GROKCTL_CHROMIUM`, else `chromium` or `chromium-browser` on PATH or in /usr/bin.
    static let path: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["GROKCTL_CHROMIUM"], FileManager.default.isExecutableFile(atPath: given) { return given }
        let directories = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        for name in ["chromium", "chromium-browser"] {
            for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
                return directory + "/" + name
            }
        }
        return nil
    }()

    /// Skipped only when chromium is missing and the environment says so; otherwise a
    /// missing chromium fails the tests.
    static let skipped = path == nil && ProcessInfo.processInfo.environment["GROKCTL_SKIP_CHROMIUM"] == "1"

    static func require() throws -> String {
        try #require(path, "chromium was not found (PATH, /usr/bin); install Debian's chromium (scripts/setup.sh --test) or set GROKCTL_SKIP_CHROMIUM=1 to skip")
    }

    /// Runs headless chromium on `file` with `arguments` (a fresh profile directory, no
    /// sandbox as root needs, no GPU), at most `seconds`; its standard output.
    static func run(_ file: String, _ arguments: [String], seconds: Double = 120) throws -> (status: Int32, output: String, error: String) {
        let chromium = try require()
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                             "--user-data-dir=" + directory + "/profile"] + arguments + [URL(fileURLWithPath: file).absoluteString]
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": directory]
        let out = directory + "/out", err = directory + "/err"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            Issue.record("chromium ran longer than \(seconds) s on \(file)")
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        return (process.terminationStatus, try String(contentsOfFile: out, encoding: .utf8), (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// The DOM after load.
    static func dom(_ file: String) throws -> String {
        let result = try run(file, ["--dump-dom"])
        #expect(result.status == 0, "chromium --dump-dom exited \(result.status): \(result.error)")
        return result.output
    }

    /// What the page's load check wrote onto `<html>` (resources fetched, loads the policy
    /// refused, load errors), or nil when it did not run.
    static func loadCheck(_ dom: String) -> (resources: Int, violations: Int, errors: Int)? {
        guard let start = dom.range(of: "<html"), let end = dom[start.upperBound...].firstIndex(of: ">") else { return nil }
        let tag = String(dom[start.upperBound..<end])
        func value(_ name: String) -> Int? {
            guard let range = tag.range(of: name + "=\"") else { return nil }
            return Int(tag[range.upperBound...].prefix { $0.isNumber })
        }
        guard tag.contains("data-load-check=\"done\""), let resources = value("data-resources"),
              let violations = value("data-violations"), let errors = value("data-errors") else { return nil }
        return (resources, violations, errors)
    }

    /// Whether the page loaded nothing from anywhere: its check ran and counted nothing.
    static func loadedNothingFromOutside(_ dom: String) -> Bool {
        guard let check = loadCheck(dom) else { return false }
        return check.resources == 0 && check.violations == 0 && check.errors == 0
    }
}

extension CLI {
    /// `grokctl fleet report --html`: the page rendered by a real headless Chromium from
    /// Debian's packages: its DOM after load (the charts' SVG, the localized headings, the
    /// `lang` attribute), a screenshot, and that nothing was fetched from anywhere.
    @Suite("Fleet report in Chromium", .serialized, .enabled(if: !Chromium.skipped, "chromium not found and GROKCTL_SKIP_CHROMIUM=1"))
    struct FleetReportChromiumTests {
        static let charts = ["progress", "failure-rate", "by-station", "by-hardware", "firmware", "read-rates"]

        func report(_ language: Language) throws -> String {
            let fixture = try SharedFleetFixture.get()
            let file = try makeTemporaryDirectory() + "/fleet-\(language.rawValue).html"
            let result = try fixture.run(["--lang", language.rawValue, "fleet", "report", "--html", file, "--ledger", fixture.uri,
                                          "--profile", fixture.haltProfile])
            #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
            return file
        }

        @Test("the DOM after load has every chart's SVG, the headings in the page's language and its lang attribute", arguments: Language.allCases)
        func domAfterLoad(_ language: Language) throws {
            let dom = try Chromium.dom(try report(language))
            let localizer = Localizer(language: language)
            #expect(dom.contains("<html lang=\"\(language.rawValue)\""), "\(dom.prefix(300))")
            for chart in Self.charts {
                #expect(dom.contains("<svg class=\"chart\" data-chart=\"\(chart)\""), "no \(chart) chart in \(language)")
            }
            for key in [MessageKey.reportTitle, .reportProgress, .reportFailureRate, .reportByStation, .reportByHardware, .reportFirmware,
                        .reportReadRates] {
                let heading = localizer.text(key)
                    .replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\u{00A0}", with: "&nbsp;")
                #expect(dom.contains(heading), "\(language): no '\(heading)'")
            }
            // The halt threshold is drawn: a dashed line and its label in the language's words; one
            // threshold, the rule that halted the stage (30 %), not the --profile's (25 %).
            #expect(dom.contains("class=\"threshold\""))
            #expect(dom.contains(localizer.text(.reportThreshold, "30")), "\(language)")
            #expect(!dom.contains(localizer.text(.reportThreshold, "25")), "\(language)")
            // The stage history, the failed units and the throughput are on the page.
            for table in ["history", "failed-units", "throughput"] { #expect(dom.contains("<table id=\"\(table)\">"), "\(language): no \(table)") }
            // Series were drawn from the data: the two stations' bars, the four units' progress.
            #expect(dom.contains("bench-0") && dom.contains("bench-1"))
            #expect(dom.components(separatedBy: "class=\"bar-failed\"").count - 1 >= 1)
            #expect(Chromium.loadedNothingFromOutside(dom), "the page fetched or tried to fetch something: \(Chromium.loadCheck(dom).map { "\($0)" } ?? "no load check")")
        }

        @Test("a screenshot is rendered: a PNG of the window's size with real content")
        func screenshot() throws {
            let page = try report(.de)
            let png = try makeTemporaryDirectory() + "/report.png"
            let result = try Chromium.run(page, ["--screenshot=" + png, "--window-size=1200,1600", "--hide-scrollbars"])
            #expect(result.status == 0, "\(result.error)")
            let data = try #require(FileManager.default.contents(atPath: png), "no screenshot written: \(result.error)")
            let bytes = [UInt8](data)
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
            #expect(bytes.count > 24 && Array(bytes[12..<16]) == Array("IHDR".utf8))
            func big(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
            #expect(big(16) == 1200 && big(20) == 1600, "IHDR says \(big(16))×\(big(20))")
            // A blank page of this size compresses to a few kilobytes; charts and text do not.
            #expect(bytes.count > 20_000, "the screenshot is \(bytes.count) bytes: nearly blank")
        }

        @Test("the check catches an outside asset: the same page with an <img> from a server, with and without its policy")
        func outsideAssetIsCaught() throws {
            let page = try report(.en)
            let html = try String(contentsOfFile: page, encoding: .utf8)
            #expect(Chromium.loadedNothingFromOutside(try Chromium.dom(page)), "the report itself must pass")
            let image = "<img src=\"http://127.0.0.1:9/logo.png\" alt=\"\">"
            let withImage = html.replacingOccurrences(of: "<body>", with: "<body>" + image)
            #expect(withImage != html)
            let policy = try #require(html.range(of: "<meta http-equiv=\"Content-Security-Policy\"[^>]*>", options: .regularExpression))
            let noPolicy = withImage.replacingOccurrences(of: String(html[policy]), with: "")
            #expect(noPolicy != withImage)
            for (name, text) in [("with-policy", withImage), ("without-policy", noPolicy)] {
                let file = try makeTemporaryDirectory() + "/\(name).html"
                try text.write(toFile: file, atomically: true, encoding: .utf8)
                let dom = try Chromium.dom(file)
                #expect(Chromium.loadCheck(dom) != nil, "\(name): the load check did not run")
                #expect(!Chromium.loadedNothingFromOutside(dom), "\(name): an outside <img> went unnoticed: \(Chromium.loadCheck(dom).map { "\($0)" } ?? "")")
            }
        }
    }
}
