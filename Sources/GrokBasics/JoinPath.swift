/// `tail` inside `directory`, with exactly one `/` between them (`/var/lib/grokctl/` and
/// `ledger.sqlite` make `/var/lib/grokctl/ledger.sqlite`): the one way the libraries and the
/// command line name a file in a directory.
public func joinPath(_ directory: String, _ tail: String) -> String {
    directory.hasSuffix("/") ? directory + tail : directory + "/" + tail
}
