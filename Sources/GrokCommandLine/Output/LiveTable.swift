#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The table `grokctl inventory` redraws in place on a terminal: pure rendering (rows and a
/// terminal size in, lines out) plus the ANSI frame that replaces the previous drawing.
public enum LiveTable {
    /// One tag of the live table.
    public struct Row: Sendable, Equatable {
        public var epc: String
        public var reads: Int
        /// nil when the reader sent no RSSI (shown "-").
        public var rssiDBm: Double?
        /// Seconds since the inventory started, of the first and the latest read.
        public var firstSeenS: Double
        public var lastSeenS: Double
        public var visible: Bool

        public init(epc: String, reads: Int, rssiDBm: Double?, firstSeenS: Double, lastSeenS: Double, visible: Bool) {
            self.epc = epc
            self.reads = reads
            self.rssiDBm = rssiDBm
            self.firstSeenS = firstSeenS
            self.lastSeenS = lastSeenS
            self.visible = visible
        }
    }

    /// The marker of a visible tag (no word to translate).
    public static let visibleMark = "●"

    /// The lines to draw: a header and the rows in a stable order (first found first, then
    /// by EPC), cut to `height − 1` lines (the cursor keeps the last one) with a
    /// `more(n)` line for the `n` rows left out, and every line cut to `width` columns so
    /// the terminal never wraps one (the redraw counts lines).
    ///
    /// - Parameters:
    ///   - headers: EPC, reads, RSSI, last seen, visible, localized.
    ///   - more: The localized "+N more" line for `n` hidden rows.
    public static func render(rows: [Row], headers: [String], more: (Int) -> String, width: Int, height: Int) -> [String] {
        let ordered = rows.sorted { ($0.firstSeenS, $0.epc) < ($1.firstSeenS, $1.epc) }
        let room = max(2, height - 1)   // header + at least one line
        var shown = ordered
        var hidden = 0
        if 1 + ordered.count > room {
            shown = Array(ordered.prefix(max(0, room - 2)))
            hidden = ordered.count - shown.count
        }
        let table = Table(
            headers: headers,
            rows: shown.map { [$0.epc, String($0.reads), $0.rssiDBm.map(number) ?? "-", number($0.lastSeenS), $0.visible ? visibleMark : ""] },
            alignments: [.left, .right, .right, .right, .left])
        var lines = table.lines()
        if hidden > 0 { lines.append(more(hidden)) }
        return lines.map { cut($0, to: max(1, width)) }
    }

    /// What to write to replace a drawing of `previousLineCount` lines (the cursor below it)
    /// with `lines`: cursor up, each line cleared to its end, then everything below cleared.
    public static func frame(_ lines: [String], previousLineCount: Int) -> String {
        var text = previousLineCount > 0 ? "\u{1B}[\(previousLineCount)A\r" : ""
        for line in lines { text += line + "\u{1B}[K\n" }
        return text + "\u{1B}[J"
    }

    /// The live table is for people at a terminal: stdout is one, and neither `--json` nor
    /// `--quiet` asked for something else.
    public static func wanted(standardOutputIsTerminal: Bool, json: Bool, quiet: Bool) -> Bool {
        standardOutputIsTerminal && !json && !quiet
    }

    /// Whether stdout is a terminal.
    public static var standardOutputIsTerminal: Bool { isatty(1) == 1 }

    /// The terminal's size (columns, rows) from `TIOCGWINSZ` on `fileDescriptor` (stdout
    /// unless said), else `COLUMNS`/`LINES`, else 80×24.
    public static func terminalSize(fileDescriptor: Int32 = 1) -> (width: Int, height: Int) {
        var size = winsize()
        if ioctl(fileDescriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        let columns = getenv("COLUMNS").flatMap { Int(String(cString: $0)) } ?? 80
        let lines = getenv("LINES").flatMap { Int(String(cString: $0)) } ?? 24
        return (max(1, columns), max(1, lines))
    }

    private static func number(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }

    /// `line` cut to at most `width` display columns.
    static func cut(_ line: String, to width: Int) -> String {
        guard TextWidth.of(line) > width else { return line }
        var out = ""
        var used = 0
        for character in line {
            let w = TextWidth.of(character)
            if used + w > width { break }
            out.append(character)
            used += w
        }
        return out
    }
}
