/// How many terminal columns text takes, so tables and help line up with accented,
/// combining and wide (CJK, emoji) characters.
public enum TextWidth {
    /// The display width of `text`: 0 for control and zero-width characters, 2 for East
    /// Asian wide and emoji-presentation characters, 1 for the rest. Combining marks join
    /// their base character (`e` + U+0301 is one column, like `é`).
    public static func of(_ text: some StringProtocol) -> Int {
        var width = 0
        for character in text { width += of(character) }
        return width
    }

    /// The display width of one character (grapheme cluster).
    public static func of(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation || character.unicodeScalars.contains("\u{FE0F}") {
            return 2
        }
        return isWide(value) ? 2 : 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode UAX #11), coarsely.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }

    /// `text` followed by spaces up to `width` columns (unchanged when already as wide).
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - of(text)))
    }

    /// Words of `text` on lines of at most `width` columns; only ASCII spaces break a line
    /// (a no-break space keeps French `option :` together). A word wider than `width` gets
    /// a line of its own. Leading spaces of `text` indent every line, unless
    /// `hangingIndent` says how far to indent the lines after the first.
    static func wrap(_ text: String, width: Int, hangingIndent: Int? = nil) -> [String] {
        let firstIndent = String(text.prefix { $0 == " " })
        let indent = hangingIndent.map { String(repeating: " ", count: $0) } ?? firstIndent
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        var lines: [String] = []
        var line = ""
        for word in words {
            if line.isEmpty {
                line = (lines.isEmpty ? firstIndent : indent) + word
            } else if of(line) + 1 + of(word) <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = indent + word
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}
