import Foundation

/// Shell completion scripts generated from the command tree's declarations (the same ones
/// the parser and help read), as swift-argument-parser's `--generate-completion-script`.
///
/// Each script walks the words typed so far the way the parser does (subcommand names,
/// options, an option's value), then offers what may come next: the subcommands and
/// options of the command reached, an option's choices (`--type`, `--lang`), or paths for
/// an option whose value is a file or a directory. Positional arguments complete by their
/// declared type too (`audio decode <file>`: files; `completions <shell>`: the shells): bash
/// and zsh count the positional words typed to know which argument comes next; fish offers
/// the command's argument types.
public struct CompletionScripts {
    /// The shells a script can be generated for.
    public enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    let root: any ParsableCommand.Type
    let globals: [OptionDeclaration]

    /// The scripts for the tree under `root`, whose every command also takes `globals`.
    public init(root: any ParsableCommand.Type, globals: [OptionDeclaration]) {
        self.root = root
        self.globals = globals
    }

    /// What one command of the tree offers.
    struct Node {
        /// `grokctl firmware flash`.
        let path: String
        let subcommands: [String]
        let options: [OptionDeclaration]
        /// Its positional arguments, in order.
        let arguments: [ArgumentDeclaration]
    }

    /// Every command of the tree, root first, with its options (globals and `--help` included).
    var nodes: [Node] {
        var result: [Node] = []
        func visit(_ command: any ParsableCommand.Type, _ names: [String]) {
            let configuration = command.configuration
            var options = configuration.options + globals + [.help]
            if names.count == 1 { options.append(.version) }
            result.append(Node(path: names.joined(separator: " "),
                               subcommands: configuration.subcommands.map { $0.configuration.name }, options: options,
                               arguments: configuration.arguments))
            for sub in configuration.subcommands { visit(sub, names + [sub.configuration.name]) }
        }
        visit(root, [root.configuration.name])
        return result
    }

    /// The script for `shell`, ending with a newline.
    public func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        case .fish: fish()
        }
    }

    private var name: String { root.configuration.name }
    private var function: String { "_" + name.replacingOccurrences(of: "-", with: "_") }

    /// `--a --b -x`: an option's spellings.
    private static func spellings(_ options: [OptionDeclaration]) -> String {
        options.flatMap { option in [option.spelling] + (option.short.map { ["-\($0)"] } ?? []) }.joined(separator: " ")
    }

    /// The shell `case` arms (shared by bash and zsh, whose `case` is the same) that set
    /// `path` from `path` and the word `w`, and mark value-taking options so their value is
    /// skipped.
    private func walkCases(indent: String, variable: String = "path") -> String {
        var lines: [String] = []
        for node in nodes {
            for sub in node.subcommands {
                lines.append("\(indent)\"\(node.path)|\(sub)\") \(variable)=\"\(node.path) \(sub)\" ;;")
            }
            let valued = node.options.filter(\.takesValue)
            if !valued.isEmpty {
                let pattern = valued.flatMap { o in ["\"\(node.path)|\(o.spelling)\""] + (o.short.map { ["\"\(node.path)|-\($0)\""] } ?? []) }
                lines.append("\(indent)\(pattern.joined(separator: "|"))) skip=1 ;;")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// What a value completes to: fixed words, the candidates the program lists
    /// (`<program> __complete <source>`, with paths too for a profile, which may be a file),
    /// files or directories.
    private enum ValueCompletion {
        case words([String]), listed(CompletionSource, files: Bool), file, directory, none
    }

    private static func completion(of type: ValueType) -> ValueCompletion {
        if !type.completionWords.isEmpty { return .words(type.completionWords) }
        if let source = type.completionSource { return .listed(source, files: type.completesAsPath) }
        if type == .directory { return .directory }
        if type.completesAsPath { return .file }
        return .none
    }

    /// The command that prints a source's candidates, one a line (errors silenced).
    private func candidates(_ source: CompletionSource) -> String {
        "\(name) \(CompletionSource.command) \(source.rawValue) 2>/dev/null"
    }

    /// The `case "$path|$prev"` arms (bash and zsh) that complete an option's value by its
    /// type, `action` saying how in the shell; a value with no completion offers nothing.
    private func valueArms(_ action: (ValueCompletion) -> String?) -> [String] {
        var arms: [String] = []
        for node in nodes {
            for option in node.options where option.takesValue {
                let keys = (["\"\(node.path)|\(option.spelling)\""] + (option.short.map { ["\"\(node.path)|-\($0)\""] } ?? []))
                    .joined(separator: "|")
                arms.append("        \(keys)) \(action(Self.completion(of: option.valueType)).map { $0 + "; " } ?? "")return ;;")
            }
        }
        return arms
    }

    /// The `case "$path|$npos"` arms (bash and zsh) that complete the next positional
    /// argument by its type: `"path|N"` for the argument at index N, `"path|"*` for a
    /// repeating last one (after the earlier ones, so they match first).
    private func positionalArms(_ body: (ValueCompletion) -> String?) -> [String] {
        var arms: [String] = []
        for node in nodes {
            for (index, argument) in node.arguments.enumerated() {
                guard let action = body(Self.completion(of: argument.valueType)) else { continue }
                let key = argument.isRepeating ? "\"\(node.path)|\"*" : "\"\(node.path)|\(index)\""
                arms.append("            \(key)) \(action); return ;;")
            }
        }
        return arms
    }

    // MARK: bash

    private func bash() -> String {
        let action: (ValueCompletion) -> String? = { completion in
            switch completion {
            case .words(let words): "COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\"))"
            case .listed(let source, let files):
                "COMPREPLY=($(compgen -W \"$(\(self.candidates(source)))\" -- \"$cur\")\(files ? " $(compgen -f -- \"$cur\")" : ""))"
            case .file: "COMPREPLY=($(compgen -f -- \"$cur\"))"
            case .directory: "COMPREPLY=($(compgen -d -- \"$cur\"))"
            case .none: nil
            }
        }
        let nodeArms = nodes.map { node in
            "        \"\(node.path)\") subs=\"\(node.subcommands.joined(separator: " "))\"; opts=\"\(Self.spellings(node.options))\" ;;"
        }
        return """
            # bash completion for \(name), generated from its declarations (\(name) completions bash).
            # The words are split at blanks only (COMP_WORDS splits alsa:hw:1,0 at its colons);
            # what is offered then loses the part of the word before its last colon, which bash
            # keeps as a word of its own.
            \(function)() {
                local line="${COMP_LINE:0:COMP_POINT}" cur i
                local -a words
                read -ra words <<< "$line"
                if [[ -z "$line" || "$line" == *[[:space:]] ]]; then words+=(""); fi
                cur="${words[${#words[@]}-1]}"
                \(function)_reply
                if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
                    local colon="${cur%"${cur##*:}"}"
                    for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]="${COMPREPLY[i]#"$colon"}"; done
                fi
            }
            # Sets COMPREPLY from words (the last one, cur, being completed).
            \(function)_reply() {
                local prev="" path="\(name)" skip=0 npos=0 i w subs="" opts=""
                for ((i = 1; i < ${#words[@]} - 1; i++)); do
                    w="${words[i]}"
                    if [ "$skip" = 1 ]; then skip=0; prev=""; continue; fi
                    prev="$w"
                    case "$path|$w" in
            \(walkCases(indent: "            "))
                        *) if [[ "$w" != -?* ]]; then npos=$((npos + 1)); fi ;;
                    esac
                done
                if [ "$skip" = 1 ]; then
                    case "$path|$prev" in
            \(valueArms(action).joined(separator: "\n"))
                    esac
                fi
                if [[ "$cur" != -?* ]]; then
                    case "$path|$npos" in
            \(positionalArms(action).joined(separator: "\n"))
                    esac
                fi
                case "$path" in
            \(nodeArms.joined(separator: "\n"))
                esac
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
                else
                    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
                fi
            }
            complete -o default -F \(function) \(name)

            """
    }

    // MARK: zsh

    private func zsh() -> String {
        let action: (ValueCompletion) -> String? = { completion in
            switch completion {
            case .words(let words): "compadd -- \(words.joined(separator: " "))"
            case .listed(let source, let files): "compadd -- ${(f)\"$(\(self.candidates(source)))\"}\(files ? "; _files" : "")"
            case .file: "_files"
            case .directory: "_files -/"
            case .none: nil
            }
        }
        let nodeArms = nodes.map { node in
            "        \"\(node.path)\") subs=(\(node.subcommands.joined(separator: " "))); opts=(\(Self.spellings(node.options))) ;;"
        }
        return """
            #compdef \(name)
            # zsh completion for \(name), generated from its declarations (\(name) completions zsh).
            \(function)() {
                local cpath="\(name)" skip=0 npos=0 i w prev=""
                local -a subs opts
                for ((i = 2; i < CURRENT; i++)); do
                    w="${words[i]}"
                    if [[ $skip == 1 ]]; then skip=0; prev=""; continue; fi
                    prev="$w"
                    case "$cpath|$w" in
            \(walkCases(indent: "            ", variable: "cpath"))
                        *) if [[ "$w" != -?* ]]; then npos=$((npos + 1)); fi ;;
                    esac
                done
                if [[ $skip == 1 ]]; then
                    case "$cpath|$prev" in
            \(valueArms(action).joined(separator: "\n"))
                    esac
                fi
                if [[ "${words[CURRENT]}" != -?* ]]; then
                    case "$cpath|$npos" in
            \(positionalArms(action).joined(separator: "\n"))
                    esac
                fi
                case "$cpath" in
            \(nodeArms.joined(separator: "\n"))
                esac
                if [[ "${words[CURRENT]}" == -* ]]; then
                    compadd -- $opts
                else
                    compadd -- $subs
                fi
            }
            compdef \(function) \(name)

            """
    }

    // MARK: fish

    private func fish() -> String {
        var lines = [
            "# fish completion for \(name), generated from its declarations (\(name) completions fish).",
            "# \(function)_path: the command reached by the words typed so far.",
            "function \(function)_path",
            "    set -l words (commandline -opc)",
            "    set -l path \(name)",
            "    set -l skip 0",
            "    for w in $words[2..-1]",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch \"$path|$w\"",
        ]
        for node in nodes {
            for sub in node.subcommands {
                lines.append("            case '\(node.path)|\(sub)'")
                lines.append("                set path '\(node.path) \(sub)'")
            }
            let valued = node.options.filter(\.takesValue)
            if !valued.isEmpty {
                let patterns = valued.flatMap { o in ["'\(node.path)|\(o.spelling)'"] + (o.short.map { ["'\(node.path)|-\($0)'"] } ?? []) }
                lines.append("            case \(patterns.joined(separator: " "))")
                lines.append("                set skip 1")
            }
        }
        lines += ["        end", "    end", "    echo $path", "end", "complete -c \(name) -f"]
        for node in nodes {
            let condition = "-n 'test (\(function)_path) = \"\(node.path)\"'"
            for subName in node.subcommands {
                lines.append("complete -c \(name) \(condition) -a '\(subName)'")
            }
            // Positional arguments by their type (fish offers them wherever the command takes one).
            for argument in node.arguments {
                switch Self.completion(of: argument.valueType) {
                case .words(let words): lines.append("complete -c \(name) \(condition) -a '\(words.joined(separator: " "))'")
                case .listed(let source, let files):
                    lines.append("complete -c \(name) \(condition) -a '(\(candidates(source)))'\(files ? " -F" : "")")
                case .file: lines.append("complete -c \(name) \(condition) -F")
                case .directory: lines.append("complete -c \(name) \(condition) -a '(__fish_complete_directories)'")
                case .none: break
                }
            }
            for option in node.options {
                var line = "complete -c \(name) \(condition) -l \(option.long)"
                if let short = option.short { line += " -s \(short)" }
                if option.takesValue {
                    line += " -r"
                    switch Self.completion(of: option.valueType) {
                    case .words(let words): line += " -a '\(words.joined(separator: " "))'"
                    case .listed(let source, let files): line += " -a '(\(candidates(source)))'\(files ? " -F" : "")"
                    case .file: line += " -F"
                    case .directory: line += " -a '(__fish_complete_directories)'"
                    case .none: break
                    }
                }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
