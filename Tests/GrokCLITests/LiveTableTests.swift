@testable import GrokCLI
@testable import GrokCommandLine
import Testing

/// The live inventory table: a pure renderer, the ANSI frame, and when it is used.
@Suite("Live inventory table")
struct LiveTableTests {
    static let headers = ["EPC", "Reads", "RSSI (dBm)", "Last seen (s)", "Visible"]

    static func row(_ i: Int, first: Double, visible: Bool = true) -> LiveTable.Row {
        LiveTable.Row(epc: "30742" + String(repeating: "0", count: 5) + String(i), reads: 10 + i, rssiDBm: -50.25 - Double(i),
                      firstSeenS: first, lastSeenS: first + 1.04, visible: visible)
    }

    static func more(_ n: Int) -> String { "+\(n) more" }

    @Test("rows in the order they were first found, numbers right-aligned, the visible mark")
    func order() {
        let rows = [Self.row(2, first: 0.5), Self.row(1, first: 0.1, visible: false), Self.row(3, first: 0.5)]
        let lines = LiveTable.render(rows: rows, headers: Self.headers, more: Self.more, width: 120, height: 24)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("EPC"))
        #expect(lines[1].hasPrefix("3074200000" + "1"))
        #expect(lines[2].hasPrefix("3074200000" + "2") && lines[3].hasPrefix("3074200000" + "3"))
        #expect(!lines[1].contains(LiveTable.visibleMark))
        #expect(lines[2].hasSuffix(LiveTable.visibleMark))
        #expect(lines[2].contains("-52.3") && lines[2].contains("1.5"))
        // The same rows in another order draw the same table.
        #expect(LiveTable.render(rows: rows.reversed(), headers: Self.headers, more: Self.more, width: 120, height: 24) == lines)
    }

    @Test("capped to the terminal's height with a +N line, and no line wider than the terminal")
    func truncation() {
        let rows = (0..<30).map { Self.row($0, first: Double($0)) }
        let lines = LiveTable.render(rows: rows, headers: Self.headers, more: Self.more, width: 30, height: 10)
        // 9 lines at most (the cursor keeps the 10th): header, 7 rows, "+23 more".
        #expect(lines.count == 9)
        #expect(lines.last == "+23 more")
        #expect(lines.allSatisfy { TextWidth.of($0) <= 30 })
        let all = LiveTable.render(rows: Array(rows.prefix(8)), headers: Self.headers, more: Self.more, width: 200, height: 10)
        #expect(all.count == 9 && !all.contains { $0.hasPrefix("+") })
        let tiny = LiveTable.render(rows: rows, headers: Self.headers, more: Self.more, width: 200, height: 2)
        #expect(tiny == [LiveTable.render(rows: [], headers: Self.headers, more: Self.more, width: 200, height: 2)[0], "+30 more"])
    }

    @Test("each frame moves up over the last one and clears what it leaves")
    func frame() {
        #expect(LiveTable.frame(["a", "b"], previousLineCount: 0) == "a\u{1B}[K\nb\u{1B}[K\n\u{1B}[J")
        #expect(LiveTable.frame(["c"], previousLineCount: 2) == "\u{1B}[2A\rc\u{1B}[K\n\u{1B}[J")
        #expect(LiveTable.frame([], previousLineCount: 3) == "\u{1B}[3A\r\u{1B}[J")
    }

    @Test("only a terminal without --json or --quiet gets the live table")
    func decision() {
        #expect(LiveTable.wanted(standardOutputIsTerminal: true, json: false, quiet: false))
        #expect(!LiveTable.wanted(standardOutputIsTerminal: false, json: false, quiet: false))
        #expect(!LiveTable.wanted(standardOutputIsTerminal: true, json: true, quiet: false))
        #expect(!LiveTable.wanted(standardOutputIsTerminal: true, json: false, quiet: true))
    }

    @Test("the +N line and the new headers are localized")
    func localized() {
        for language in Language.allCases {
            let text = Localizer(language: language).text(.inventoryLiveMore, "7")
            #expect(text.contains("7") && text.hasPrefix("+"))
        }
        #expect(Localizer(language: .de).text(.inventoryColumnLastSeen) != Localizer(language: .en).text(.inventoryColumnLastSeen))
    }
}
