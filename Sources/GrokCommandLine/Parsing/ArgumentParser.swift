/// What the command line asks for.
public enum ParseOutcome {
    /// Run the last command of `path` with `values`.
    case run(path: [any ParsableCommand.Type], values: ParsedValues)
    /// Print the help of the last command of `path` (`-h`, `--help`).
    case help(path: [any ParsableCommand.Type])
    /// Print the version (`--version`).
    case version
    /// A usage error, found while parsing the command at the end of `path`.
    case failure(CLIError, path: [any ParsableCommand.Type])
}

/// Parses arguments against a command tree, swift-argument-parser style.
///
/// Rules: subcommand names come first (global options may precede them); options are
/// `--name value`, `--name=value`, `-x value`, `-xvalue`, and clusters of short flags
/// (`-qh`); flags take no value; an option takes the next argument as its value unless
/// that looks like an option (`-` alone is a value); `--` ends options, everything after
/// it is positional. Global options are accepted at every level, `--version` on the root
/// only. When `-h`/`--help` appears before `--`, errors are ignored and the help of the
/// deepest command named is shown.
///
/// Not thread-safe: one parser per command line.
public final class ArgumentParser {
    let root: any ParsableCommand.Type
    let globals: [OptionDeclaration]

    private var path: [any ParsableCommand.Type] = []
    private var values = ParsedValues()
    private var positionals: [String] = []
    private var lenient = false

    /// - Parameters:
    ///   - root: The top command.
    ///   - globals: Options accepted before or after any subcommand.
    public init(root: any ParsableCommand.Type, globals: [OptionDeclaration]) {
        self.root = root
        self.globals = globals
    }

    /// Parses `arguments` (without the program name).
    public func parse(_ arguments: [String]) -> ParseOutcome {
        path = [root]
        values = ParsedValues()
        positionals = []
        let beforeTerminator = arguments.prefix { $0 != "--" }
        lenient = beforeTerminator.contains("-h") || beforeTerminator.contains("--help")
        do throws(CLIError) {
            try parseTokens(arguments)
            if lenient || values.flag(.help) { return .help(path: path) }
            // A command with a `--version <v>` option of its own (`firmware flash`) keeps it.
            if values.flag(.version), !path.last!.configuration.options.contains(where: { $0.long == "version" }) {
                return .version
            }
            try checkExclusive()
            try assignPositionals()
            for option in path.last!.configuration.options where option.isRequired {
                if values.values(option).isEmpty { throw CLIError.missingOption(option: option.spelling) }
            }
            return .run(path: path, values: values)
        } catch {
            return .failure(error, path: path)
        }
    }

    /// The options accepted at the current command.
    private var scope: [OptionDeclaration] {
        var options = path.last!.configuration.options + globals + [.help]
        if path.count == 1 { options.append(.version) }
        return options
    }

    private func reject(_ error: CLIError) throws(CLIError) {
        if !lenient { throw error }
    }

    private func parseTokens(_ arguments: [String]) throws(CLIError) {
        var index = 0
        var terminated = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if terminated {
                positionals.append(argument)
            } else if argument == "--" {
                terminated = true
            } else if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name: String
                let inline: String?
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                    inline = nil
                }
                guard let option = scope.first(where: { $0.long == name }) else {
                    let suggestion = Suggestions.closest(to: name, among: scope.map(\.long))
                    try reject(.unknownOption("--" + name, suggestion: suggestion.map { "--" + $0 }))
                    continue
                }
                try take(option, inline: inline, from: arguments, at: &index)
            } else if argument.hasPrefix("-"), argument.count > 1 {
                var cluster = argument.dropFirst()
                while let letter = cluster.first {
                    cluster = cluster.dropFirst()
                    guard let option = scope.first(where: { $0.short == letter }) else {
                        try reject(.unknownOption("-" + String(letter), suggestion: nil))
                        break
                    }
                    if option.takesValue {
                        let inline = cluster.isEmpty ? nil : String(cluster)
                        cluster = ""
                        try take(option, inline: inline, from: arguments, at: &index)
                    } else {
                        try take(option, inline: nil, from: arguments, at: &index)
                    }
                }
            } else {
                let subcommands = path.last!.configuration.subcommands
                if !subcommands.isEmpty, positionals.isEmpty {
                    if let subcommand = subcommands.first(where: { $0.configuration.name == argument }) {
                        path.append(subcommand)
                        continue
                    }
                    let names = subcommands.map { $0.configuration.name }
                    try reject(
                        .unknownSubcommand(
                            argument, suggestion: Suggestions.closest(to: argument, among: names)))
                }
                positionals.append(argument)
            }
        }
    }

    private func take(
        _ option: OptionDeclaration, inline: String?, from arguments: [String], at index: inout Int
    ) throws(CLIError) {
        guard option.takesValue else {
            if inline != nil { return try reject(.flagWithValue(option.spelling)) }
            values.record(option, "")
            return
        }
        let value: String
        if let inline {
            value = inline
        } else if index < arguments.count, acceptsAsValue(arguments[index]) {
            value = arguments[index]
            index += 1
        } else {
            return try reject(.missingValue(option: option.spelling))
        }
        if value.isEmpty { return try reject(.missingValue(option: option.spelling)) }
        if !option.isRepeatable, !values.values(option).isEmpty {
            return try reject(.duplicateOption(option.spelling))
        }
        do throws(CLIError) {
            _ = try option.valueType.parse(value, option: option.spelling)
        } catch {
            return try reject(error)
        }
        values.record(option, value)
    }

    /// Whether `token` can be an option's value rather than the next option.
    private func acceptsAsValue(_ token: String) -> Bool {
        if token == "-" { return true }
        if token.hasPrefix("--") { return false }
        if token.hasPrefix("-"), let letter = token.dropFirst().first {
            return !scope.contains { $0.short == letter }
        }
        return true
    }

    /// Two options of one of the command's exclusive sets given together is a usage error.
    private func checkExclusive() throws(CLIError) {
        for set in path.last!.configuration.exclusive {
            let given = set.filter { !values.values($0).isEmpty }
            if given.count > 1 { throw .conflictingOptions(given[0].spelling, given[1].spelling) }
        }
    }

    private func assignPositionals() throws(CLIError) {
        var remaining = positionals[...]
        for argument in path.last!.configuration.arguments {
            if argument.isRepeating {
                values.arguments[argument] = Array(remaining)
                remaining = []
            } else if let first = remaining.popFirst() {
                values.arguments[argument] = [first]
            }
            if argument.isRequired, values.arguments(argument).isEmpty {
                throw .missingArgument(name: argument.name)
            }
            for value in values.arguments(argument) {
                _ = try argument.valueType.parse(value, argument: argument.name)
            }
        }
        if let extra = remaining.first { throw .unexpectedArgument(extra) }
        try checkStandardInputOnce()
    }

    /// Standard input can be read once: `-` may stand for it in one input file of the command
    /// line only (`audio decode - -` is refused, naming the second).
    private func checkStandardInputOnce() throws(CLIError) {
        var seen = false
        let configuration = path.last!.configuration
        for option in scope where option.valueType == .inputFile {
            for value in values.values(option) where value == InputFile.dash {
                if seen { throw .badValue(value: value, option: option.spelling, rule: .standardInputOnce) }
                seen = true
            }
        }
        for argument in configuration.arguments where argument.valueType == .inputFile {
            for value in values.arguments(argument) where value == InputFile.dash {
                if seen { throw .badArgument(value: value, name: argument.name, rule: .standardInputOnce) }
                seen = true
            }
        }
    }
}
