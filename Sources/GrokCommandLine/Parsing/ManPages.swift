import Foundation

/// Manual pages (roff, `man(7)` macros) generated from the command tree's declarations,
/// the same ones help, the parser and the completion scripts read: one page per command
/// (`grokctl.1`, `grokctl-firmware-flash.1`), in the user's language.
public struct ManPages {
    let localizer: Localizer
    let globals: [OptionDeclaration]
    let root: any ParsableCommand.Type
    /// The program's version, in each page's title line.
    let version: String

    /// The pages of the tree under `root` in `localizer`'s language, listing `globals` as
    /// the global options, titled with `version`.
    public init(localizer: Localizer, globals: [OptionDeclaration], root: any ParsableCommand.Type, version: String) {
        self.localizer = localizer
        self.globals = globals
        self.root = root
        self.version = version
    }

    /// Every command of the tree, root first, as paths.
    public var paths: [[any ParsableCommand.Type]] {
        var result: [[any ParsableCommand.Type]] = []
        func visit(_ path: [any ParsableCommand.Type]) {
            result.append(path)
            for sub in path.last!.configuration.subcommands { visit(path + [sub]) }
        }
        visit([root])
        return result
    }

    /// `grokctl-firmware-flash`: the page's name (and file name without `.1`).
    public func pageName(_ path: [any ParsableCommand.Type]) -> String {
        path.map { $0.configuration.name }.joined(separator: "-")
    }

    /// The page of the command at the end of `path`, ending with a newline.
    public func page(_ path: [any ParsableCommand.Type]) -> String {
        let configuration = path.last!.configuration
        let command = path.map { $0.configuration.name }.joined(separator: " ")
        let help = HelpFormatter(localizer: localizer, globals: globals)
        var out: [String] = []
        out.append(".TH \(Self.escape(pageName(path).uppercased())) 1 \"\" \"\(Self.escape(root.configuration.name + " " + version))\"")
        out.append(".SH \(Self.escape(localizer.text(.manHeadingName)))")
        out.append(Self.escape(pageName(path)) + " \\- " + Self.escape(localizer.text(configuration.abstract)))
        out.append(".SH \(Self.escape(localizer.text(.manHeadingSynopsis)))")
        out.append(".B " + Self.escape(command))
        let usageTail = String(help.usage(path).dropFirst(command.count)).trimmingCharacters(in: .whitespaces)
        if !usageTail.isEmpty { out.append(Self.escape(usageTail)) }
        out.append(".SH \(Self.escape(localizer.text(.manHeadingDescription)))")
        out.append(Self.paragraphs(localizer.text(configuration.abstract)))
        if let discussion = configuration.discussion {
            out.append(".PP")
            out.append(Self.paragraphs(localizer.text(discussion)))
        }
        if !configuration.arguments.isEmpty {
            out.append(".SH \(Self.escape(heading(.helpHeadingArguments)))")
            for argument in configuration.arguments {
                out.append(".TP")
                out.append(".I " + Self.escape("<" + localizer.text(argument.name) + ">" + (argument.isRepeating ? " ..." : "")))
                var text = localizer.text(argument.help)
                if case .choice(let choices) = argument.valueType {
                    text += " " + localizer.text(.manChoices, choices.joined(separator: ", "))
                }
                if let dash = argument.valueType.dashNote { text += " " + localizer.text(dash) }
                out.append(Self.escape(text))
            }
        }
        var options = configuration.options
        if path.count == 1 { options += globals + [.version] }
        options.append(.help)
        out.append(".SH \(Self.escape(heading(.helpHeadingOptions)))")
        out += options.flatMap(optionEntry)
        if !configuration.exclusive.isEmpty {
            out.append(".PP")
            let sets = configuration.exclusive.map { $0.map(\.spelling).joined(separator: " | ") }
            out.append(Self.escape(localizer.text(.manExclusive, sets.joined(separator: "; "))))
        }
        if path.count > 1 {
            out.append(".SH \(Self.escape(heading(.helpHeadingGlobalOptions)))")
            out += globals.flatMap(optionEntry)
        }
        if !configuration.subcommands.isEmpty {
            out.append(".SH \(Self.escape(localizer.text(.manHeadingCommands)))")
            for sub in configuration.subcommands {
                out.append(".TP")
                out.append(".B " + Self.escape(sub.configuration.name))
                out.append(Self.escape(localizer.text(sub.configuration.abstract)))
            }
        }
        out.append(".SH \(Self.escape(localizer.text(.manHeadingExitStatus)))")
        let common: [ExitStatus] = [.success, .failure, .usageError]
        let statuses = (common + configuration.exitStatuses).sorted { $0.code.rawValue < $1.code.rawValue }
        for status in statuses {
            out.append(".TP")
            out.append(".B \(status.code.rawValue)")
            out.append(Self.escape(localizer.text(status.meaning)))
        }
        let related = (path.count > 1 ? [path.dropLast()] : []) + configuration.subcommands.map { path + [$0] }
        if !related.isEmpty {
            out.append(".SH \(Self.escape(localizer.text(.manHeadingSeeAlso)))")
            out.append(related.map { ".BR " + Self.escape(pageName(Array($0))) + " (1)" }.joined(separator: ",\n"))
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// A help heading without its colon (`OPTIONS:`, `OPTIONS :`), as a man page section name.
    private func heading(_ key: MessageKey) -> String {
        var text = localizer.text(key)
        while let last = text.last, last == ":" || last == " " { text.removeLast() }
        return text
    }

    private func optionEntry(_ option: OptionDeclaration) -> [String] {
        var label = "\\fB" + Self.escape(option.spelling) + "\\fR"
        if let short = option.short { label = "\\fB\\-" + Self.escape(String(short)) + "\\fR, " + label }
        if case .value(let name) = option.kind { label += " \\fI<" + Self.escape(localizer.text(name)) + ">\\fR" }
        var text = localizer.text(option.help)
        if let choices = option.valueType.completionWords.isEmpty ? nil : option.valueType.completionWords,
            option.choices != nil
        {
            text += " " + localizer.text(.manChoices, choices.joined(separator: ", "))
        }
        if let dash = option.valueType.dashNote { text += " " + localizer.text(dash) }
        if let defaultValue = option.defaultValue { text += " " + localizer.text(.helpDefault, defaultValue) }
        return [".TP", label, Self.escape(text)]
    }

    /// Text as roff: paragraphs (blank lines) become `.PP`.
    private static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces).isEmpty ? ".PP" : escape(String($0)) }
            .joined(separator: "\n")
    }

    /// Escapes roff: backslashes, hyphens (so options copy as ASCII), and a leading `.` or `'`.
    static func escape(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
