import GrokBasics
import GrokFirmware
import GrokLedger

/// The station's files whose names the ledger decides, and how a ledger's address is shown
/// (`grokctl paths`, the spool's notices): the ledger's part of where a station keeps things
/// (GrokFirmware's ``StationPaths`` holds the trust root and state directory).
extension StationPaths {
    /// The spool of `station` in `directory`: `<directory>/<name>.sqlite`, the name with
    /// anything but letters, digits, `.`, `-` and `_` made `_` (``GrokLedger/Spool/fileName(station:)``).
    public static func spool(station: String, in directory: String) -> String {
        joinPath(directory, Spool.fileName(station: station))
    }

    /// A ledger's address as people are shown it: a database's password masked, a file as it is.
    public static func shownLedger(_ location: String) -> String { LedgerLocation.shown(location) }
}
