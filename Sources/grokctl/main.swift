// grokctl: an entry point only; parsing, commands and presentation live in GrokCLI.
import Foundation
import GrokCLI

exit(Grokctl.main())
