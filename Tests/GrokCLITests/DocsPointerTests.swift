import Foundation
import GrokBasics
import Testing

@testable import GrokCommandLine

/// Messages point at documentation an installed copy has: no text names a checkout's
/// `docs/` path (the installed copy's is `<prefix>/share/doc/grokctl`, which `grokctl paths`
/// lists as docs).
@Suite("Pointers to the documentation")
struct DocsPointerTests {
    @Test("no message, help or option text in any language names docs/<file>.md", arguments: Language.allCases)
    func noCheckoutPaths(_ language: Language) throws {
        let catalog = try Catalogs.load(language)
        let offending = catalog.filter { _, entry in entry.texts.contains { $0.contains("docs/") } }.keys.sorted()
        #expect(offending.isEmpty, "\(language): \(offending)")
    }
}
