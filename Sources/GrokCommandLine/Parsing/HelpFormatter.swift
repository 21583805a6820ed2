/// Help and usage text generated from the declarations, in swift-argument-parser's layout
/// (OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS) with localized headings and text.
public struct HelpFormatter {
    let localizer: Localizer
    let globals: [OptionDeclaration]
    /// Lines are wrapped to this many columns (fixed, so output does not depend on the
    /// terminal).
    var width = 80
    /// Where help text starts in OPTIONS and friends.
    var helpColumn = 26

    /// A formatter writing in `localizer`'s language, listing `globals` as the global options.
    public init(localizer: Localizer, globals: [OptionDeclaration]) {
        self.localizer = localizer
        self.globals = globals
    }

    /// `grokctl audio decode`.
    func commandName(_ path: [any ParsableCommand.Type]) -> String {
        path.map { $0.configuration.name }.joined(separator: " ")
    }

    /// The usage line without `USAGE:`: the command, its own options (required ones
    /// bare, optional ones in brackets), `[<options>]` for the global ones, then its
    /// arguments, then `<subcommand>` for a group.
    public func usage(_ path: [any ParsableCommand.Type]) -> String {
        let configuration = path.last!.configuration
        var parts = [commandName(path)]
        // An exclusive set is shown once, where its first member is declared: `[--csv | --json]`.
        var shown: Set<String> = []
        for option in configuration.options where !shown.contains(option.spelling) {
            let set = configuration.exclusive.first { $0.contains { $0.spelling == option.spelling } } ?? [option]
            let members = set.map(usagePart)
            shown.formUnion(set.map(\.spelling))
            if members.count > 1 {
                let required = set.allSatisfy(\.isRequired)
                parts.append((required ? "(" : "[") + members.joined(separator: " | ") + (required ? ")" : "]"))
            } else {
                parts.append(option.isRequired ? members[0] : "[\(members[0])]")
            }
        }
        parts.append("[\(valueName(.valueOptions))]")
        for argument in configuration.arguments {
            var part = valueName(argument.name)
            if argument.isRepeating { part += " ..." }
            parts.append(argument.isRequired ? part : "[\(part)]")
        }
        if !configuration.subcommands.isEmpty { parts.append(valueName(.valueSubcommand)) }
        return parts.joined(separator: " ")
    }

    /// One option in a usage line: its spelling, its value (a whole number's range instead
    /// of its name: `--limit <1-1000000>`), `...` when it repeats.
    private func usagePart(_ option: OptionDeclaration) -> String {
        var part = option.spelling
        if case .value(let name) = option.kind {
            if case .integer(let range, _) = option.valueType, range.upperBound < Int(Int32.max) {
                part += " <\(range.lowerBound)-\(range.upperBound)>"
            } else {
                part += " " + valueName(name)
            }
        }
        if option.isRepeatable, option.takesValue { part += " ..." }
        return part
    }

    /// The command that shows help for the command at the end of `path`.
    public func helpCommand(_ path: [any ParsableCommand.Type]) -> String {
        commandName(path) + " --help"
    }

    /// The full help text, ending with a newline.
    public func help(_ path: [any ParsableCommand.Type]) -> String {
        let configuration = path.last!.configuration
        var sections: [[String]] = []

        let overview = localizer.text(.helpHeadingOverview) + " " + localizer.text(configuration.abstract)
        var first = TextWidth.wrap(overview, width: width)
        if let discussion = configuration.discussion {
            first.append("")
            for line in localizer.text(discussion).split(separator: "\n", omittingEmptySubsequences: false) {
                first += TextWidth.wrap(String(line), width: width)
            }
        }
        sections.append(first)

        let heading = localizer.text(.helpHeadingUsage) + " "
        sections.append(TextWidth.wrap(heading + usage(path), width: width, hangingIndent: TextWidth.of(heading)))

        if !configuration.arguments.isEmpty {
            sections.append(
                [localizer.text(.helpHeadingArguments)]
                    + configuration.arguments.flatMap { argument in
                        var label = valueName(argument.name)
                        if argument.isRepeating { label += " ..." }
                        var help = localizer.text(argument.help)
                        if let dash = argument.valueType.dashNote { help += " " + localizer.text(dash) }
                        return entry(label: label, help: help)
                    })
        }

        let isRoot = path.count == 1
        var options = configuration.options
        if isRoot { options += globals + [.version] }
        options.append(.help)
        sections.append([localizer.text(.helpHeadingOptions)] + options.flatMap(optionEntry))
        if !isRoot {
            sections.append([localizer.text(.helpHeadingGlobalOptions)] + globals.flatMap(optionEntry))
        }

        if !configuration.subcommands.isEmpty {
            var lines = [localizer.text(.helpHeadingSubcommands)]
            for subcommand in configuration.subcommands {
                let sub = subcommand.configuration
                lines += entry(label: sub.name, help: localizer.text(sub.abstract))
            }
            lines.append("")
            let helpOn = ["grokctl", "help"] + path.dropFirst().map { $0.configuration.name }
                + [valueName(.valueSubcommand)]
            lines += TextWidth.wrap(
                "  " + localizer.text(.helpSeeSubcommandHelp, helpOn.joined(separator: " ")), width: width)
            sections.append(lines)
        }
        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n") + "\n"
    }

    private func valueName(_ key: MessageKey) -> String {
        "<" + localizer.text(key) + ">"
    }

    private func optionEntry(_ option: OptionDeclaration) -> [String] {
        var label = option.spelling
        if let short = option.short { label = "-\(short), " + label }
        if case .value(let name) = option.kind { label += " " + valueName(name) }
        var help = localizer.text(option.help)
        if let dash = option.valueType.dashNote { help += " " + localizer.text(dash) }
        if let defaultValue = option.defaultValue {
            help += " " + localizer.text(.helpDefault, defaultValue)
        }
        return entry(label: label, help: help)
    }

    /// `  label` with `help` wrapped from ``helpColumn``; a label too wide for the column
    /// gets a line of its own.
    private func entry(label: String, help: String) -> [String] {
        let indent = String(repeating: " ", count: helpColumn)
        let helpLines = TextWidth.wrap(indent + help, width: width)
        let labelText = "  " + label
        if TextWidth.of(labelText) + 2 <= helpColumn {
            let firstHelp = String(helpLines[0].dropFirst(helpColumn))
            return [TextWidth.padded(labelText, to: helpColumn) + firstHelp] + helpLines.dropFirst()
        }
        return [labelText] + helpLines
    }
}
