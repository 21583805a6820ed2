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
    public func lines() -> [String] {
        let columns = max(headers.count, rows.map(\.count).max() ?? 0)
        let all = [headers] + rows
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], TextWidth.of(cell)) }
        }
        let separator = String(repeating: " ", count: gap)
        return all.map { row in
            var cells: [String] = []
            for column in 0..<columns {
                let cell = column < row.count ? row[column] : ""
                let padding = String(repeating: " ", count: widths[column] - TextWidth.of(cell))
                let alignment = column < alignments.count ? alignments[column] : .left
                cells.append(alignment == .left ? cell + padding : padding + cell)
            }
            var line = cells.joined(separator: separator)
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}
