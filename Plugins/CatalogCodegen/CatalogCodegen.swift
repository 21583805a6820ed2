import Foundation
import PackagePlugin

/// Generates Swift from the message catalog (Sources/GrokCommandLine/Localization/en.json), so the
/// catalog is the one source of English and of the key list:
/// - for GrokBasics, `EnglishCatalog.swift`: the English catalog built in, which every
///   library error's `description` reads;
/// - for GrokCommandLine, `MessageKey.swift`: one case per key (dotted key in camelCase).
@main
struct CatalogCodegen: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let catalog = context.package.directoryURL.appending(path: "Sources/GrokCommandLine/Localization/en.json")
        let tool = try context.tool(named: "catalog-codegen")
        let mode: String
        let file: String
        switch target.name {
        case "GrokBasics": (mode, file) = ("english", "EnglishCatalog.swift")
        case "GrokCommandLine": (mode, file) = ("keys", "MessageKey.swift")
        default: return []
        }
        let output = context.pluginWorkDirectoryURL.appending(path: file)
        // English mode also reads the other catalogs' region names.
        let localization = context.package.directoryURL.appending(path: "Sources/GrokCommandLine/Localization")
        let inputs = mode == "english"
            ? ["en", "es", "fr", "de"].map { localization.appending(path: "\($0).json") }
            : [catalog]
        return [
            .buildCommand(
                displayName: "Generating \(file) from the message catalog",
                executable: tool.url,
                arguments: [mode, catalog.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
