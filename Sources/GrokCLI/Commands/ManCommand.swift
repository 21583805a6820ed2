import GrokBasics
import Foundation
import GrokCommandLine
import GrokFirmware

/// `grokctl man [COMMAND...]`: prints the manual page (roff) of grokctl or of one of its
/// commands; `--directory DIR` writes every page there instead (`grokctl.1`,
/// `grokctl-firmware-flash.1`, ...), which is how scripts/setup.sh installs them. Pages are
/// generated from the same declarations as help, in the user's language.
struct ManCommand: Command {
    static let commands = ArgumentDeclaration(name: .valueSubcommand, help: .argumentManCommand, required: false, repeating: true)
    static let directory = OptionDeclaration.option("directory", value: .valueDirectory, help: .optionManDirectory, type: .directory)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "man", abstract: .commandManAbstract, discussion: .commandManDiscussion,
                             options: [directory], arguments: [commands])
    }

    let path: [any ParsableCommand.Type]
    let directory: String?

    init(_ values: ParsedValues) throws(CLIError) {
        path = try HelpCommand.resolve(values.arguments(Self.commands), from: Grokctl.root)
        directory = values.value(Self.directory)
        if directory != nil, path.count > 1 {
            throw .conflictingOptions(Self.directory.spelling, "<" + Localizer.english.text(.valueSubcommand) + ">")
        }
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let pages = ManPages(localizer: context.localizer, globals: GlobalOptions.declarations, root: Grokctl.root,
                             version: GrokVersion.current)
        guard let directory else {
            context.console.write(pages.page(path))
            return .success
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var written: [String] = []
        for page in pages.paths {
            let file = joinPath(directory, pages.pageName(page) + ".1")
            try FirmwareFiles.write(Array(pages.page(page).utf8), to: file)
            written.append(file)
        }
        if context.console.isJSON {
            context.console.json(["pages": written])
        } else {
            context.console.say(.manWritten, String(written.count), directory)
        }
        return .success
    }
}
