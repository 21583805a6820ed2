/// Rows of text in columns aligned by display width (accents and wide characters count
/// right), with a header row; for terminal output only (`--json` prints objects instead).
public struct Table: Sendable {
    /// How a column's cells sit in its width.
    public enum Alignment: Sendable {
        case left, right
    }

    /// The header row, already localized.
    public var headers: [String]
    /// The data rows; a short row is padded with empty cells.
    public var rows: [[String]]
    /// Per column; missing entries mean `.left`.
    public var alignments: [Alignment]
    /// Spaces between columns.
    public var gap: Int

    /// - Parameters:
    ///   - headers: The header row, already localized.
    ///   - rows: The data rows.
    ///   - alignments: Per column (default: all left).
    ///   - gap: Spaces between columns (default: 2).
    public init(headers: [String], rows: [[String]] = [], alignments: [Alignment] = [], gap: Int = 2) {
        self.headers = headers
        self.rows = rows
        self.alignments = alignments
        self.gap = gap
    }

    /// The table as lines without trailing spaces or newlines.
    ///
    /// - Parameter width: The terminal's width, when the table is shown on one: a table
    ///   wider than that has its widest columns narrowed, none below its longest word, and
    ///   their cells wrapped at spaces onto more lines. When even that is too wide (many
    ///   columns, long words: a German table at 60 columns), each row is shown as a record
    ///   instead, one `header  value` line per column and an empty line between rows, so no
    ///   word is cut (only a single word wider than the terminal itself is), no cell's text is
    ///   lost and no line wraps on the terminal. `nil` (a file or a pipe): every row on one line.
    public func lines(width: Int? = nil) -> [String] {
        let columns = max(headers.count, rows.map(\.count).max() ?? 0)
        let all = [headers] + rows
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], TextWidth.of(cell)) }
        }
        if let width, widths.reduce(0, +) + gap * max(0, columns - 1) > width - 1 {
            guard let fitted = Self.fitted(widths, into: width, gap: gap, cells: all) else { return records(width: width) }
            widths = fitted
        }
        let separator = String(repeating: " ", count: gap)
        return all.flatMap { row in
            let wrapped = (0..<columns).map { column in
                Self.wrap(column < row.count ? row[column] : "", width: widths[column])
            }
            let height = wrapped.map(\.count).max() ?? 1
            return (0..<height).map { index in
                var cells: [String] = []
                for column in 0..<columns {
                    let cell = index < wrapped[column].count ? wrapped[column][index] : ""
                    let padding = String(repeating: " ", count: max(0, widths[column] - TextWidth.of(cell)))
                    let alignment = column < alignments.count ? alignments[column] : .left
                    cells.append(alignment == .left ? cell + padding : padding + cell)
                }
                var line = cells.joined(separator: separator)
                while line.last == " " { line.removeLast() }
                return line
            }
        }
    }

    /// Column widths whose sum with the gaps fits `width` (one column is kept free: writing
    /// the last one leaves some terminals about to wrap): the widest column gives a column at
    /// a time, down to its longest word (and not under 4); `nil` when that is still too wide.
    static func fitted(_ natural: [Int], into width: Int, gap: Int, cells: [[String]]) -> [Int]? {
        var widths = natural
        let room = width - 1 - gap * max(0, natural.count - 1)
        let floors = natural.indices.map { column in
            min(natural[column], max(4, cells.map { $0.count > column ? longestWord($0[column]) : 0 }.max() ?? 0))
        }
        guard floors.reduce(0, +) <= room else { return nil }
        while widths.reduce(0, +) > room {
            let candidates = widths.indices.filter { widths[$0] > floors[$0] }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
        }
        return widths
    }

    /// The width of the widest word of `text` (words are separated by spaces).
    static func longestWord(_ text: String) -> Int {
        text.split(separator: " ").map { TextWidth.of($0) }.max() ?? 0
    }

    /// Each row as a record: a line per column, its header then its value, values aligned
    /// and wrapped at spaces under themselves; a value with a word too wide for that starts
    /// on the line after its header, indented by two. An empty line between records.
    func records(width: Int) -> [String] {
        let columns = max(headers.count, rows.map(\.count).max() ?? 0)
        let labels = (0..<columns).map { $0 < headers.count ? headers[$0] : "" }
        let labelWidth = labels.map { TextWidth.of($0) }.max() ?? 0
        let indent = labelWidth + gap
        var lines: [String] = []
        for (index, row) in rows.enumerated() {
            if index > 0 { lines.append("") }
            for column in 0..<columns {
                let value = column < row.count ? row[column] : ""
                let label = labels[column] + String(repeating: " ", count: labelWidth - TextWidth.of(labels[column]))
                if value.isEmpty {
                    lines.append(labels[column])
                } else if Self.longestWord(value) <= width - 1 - indent {
                    let wrapped = TextWidth.wrap(value, width: width - 1 - indent)
                    lines.append(label + String(repeating: " ", count: gap) + wrapped[0])
                    lines += wrapped.dropFirst().map { String(repeating: " ", count: indent) + $0 }
                } else {
                    lines.append(labels[column])
                    lines += Self.wrap(value, width: width - 3).map { "  " + $0 }
                }
            }
        }
        return lines.map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// `text` on lines of at most `width` columns: at spaces, and a word wider than that cut.
    static func wrap(_ text: String, width: Int) -> [String] {
        guard TextWidth.of(text) > width, width > 0 else { return [text] }
        return TextWidth.wrap(text, width: width).flatMap { line -> [String] in
            guard TextWidth.of(line) > width else { return [line] }
            var pieces: [String] = []
            var piece = ""
            for character in line {
                if TextWidth.of(piece) + TextWidth.of(character) > width {
                    pieces.append(piece)
                    piece = ""
                }
                piece.append(character)
            }
            if !piece.isEmpty { pieces.append(piece) }
            return pieces
        }
    }
}
