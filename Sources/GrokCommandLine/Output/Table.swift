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
    ///   wider than that has its widest columns narrowed, a column not below its longest
    ///   word while another can give, and their cells wrapped onto more lines (at spaces,
    ///   else inside a word), so no cell's text is lost and no line wraps on the terminal.
    ///   `nil` (a file or a pipe): every row on one line.
    public func lines(width: Int? = nil) -> [String] {
        let columns = max(headers.count, rows.map(\.count).max() ?? 0)
        let all = [headers] + rows
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], TextWidth.of(cell)) }
        }
        if let width { widths = Self.fitted(widths, into: width, gap: gap, cells: all) }
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
    /// a time, first down to its longest word, then below it; none goes under 4.
    static func fitted(_ natural: [Int], into width: Int, gap: Int, cells: [[String]]) -> [Int] {
        var widths = natural
        let room = width - 1 - gap * max(0, natural.count - 1)
        let words = natural.indices.map { column in
            cells.map { $0.count > column ? $0[column].split(separator: " ").map { TextWidth.of($0) }.max() ?? 0 : 0 }.max() ?? 0
        }
        for floor in [words, natural.map { _ in 4 }] {
            while widths.reduce(0, +) > room {
                let candidates = widths.indices.filter { widths[$0] > max(4, floor[$0]) }
                guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
                widths[widest] -= 1
            }
        }
        return widths
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
