import GrokBasics
#if canImport(Glibc)
import Glibc
#endif

/// Everything that can go wrong loading, fetching or verifying TUF metadata and targets.
/// `code` is stable (for `--json` output and the catalog key `error.<code>`); `arguments`
/// are the values a localized message fills in, in order.
public enum TUFError: Error, Sendable, Equatable, CodedError {
    /// A document is not strict JSON (syntax, a duplicate key, a limit); `offset` is the
    /// byte where the parser stopped. `detail` is a code under `tuf.detail`.
    case json(detail: ErrorDetail, offset: Int)
    /// `role`'s metadata is well-formed JSON but not valid TUF metadata of its type.
    case metadata(role: String, detail: ErrorDetail)
    /// `role`'s metadata has `valid` good signatures from its authorised keys; `threshold`
    /// are needed.
    case threshold(role: String, valid: Int, threshold: Int)
    /// `role`'s metadata expired at `expires` (UTC).
    case expired(role: String, expires: String)
    /// `role`'s version went down, or repeats where it must grow: `trusted` is what the
    /// client holds, `offered` what the repository sent.
    case rollback(role: String, trusted: UInt64, offered: UInt64)
    /// `role`'s version is not the one the file name, the snapshot or the timestamp says.
    case versionMismatch(role: String, expected: UInt64, found: UInt64)
    /// A file's length or hash is not what trusted metadata says (`what` names the file).
    case lengthOrHash(what: String, detail: ErrorDetail)
    /// The repository does not have `url` (404 or 403).
    case notFound(url: String)
    /// Fetching `url` failed; `detail` says why (`transport` nests the transport's own
    /// coded error, so it reads in the same language).
    case fetch(url: String, detail: ErrorDetail)
    /// `url` is longer than the `limit` bytes allowed for it.
    case tooLarge(url: String, limit: Int)
    /// The local metadata store at `path` could not be read or written.
    case storage(path: String, detail: ErrorDetail)
    /// No trusted targets role lists `target`.
    case unknownTarget(target: String)
    /// The client workflow was used out of order (for example, a target looked up before a
    /// refresh).
    case workflow(detail: ErrorDetail)
    /// A publisher command (``TUFRepository``) cannot do what was asked: `detail` says why.
    case publisher(detail: ErrorDetail)
    /// `url` is plain `http://` and insecure transport was not allowed.
    case insecureTransport(url: String)

    public var code: String {
        switch self {
        case .json: "tuf_json"
        case .metadata: "tuf_metadata"
        // No signature at all by the keys the trusted root names for a top-level role: most
        // likely the station trusts another repository's root (said as a hint).
        case .threshold(let role, let valid, _) where valid == 0 && ["root", "timestamp", "snapshot", "targets"].contains(role):
            "tuf_threshold_foreign_root"
        case .threshold: "tuf_threshold"
        case .expired: "tuf_expired"
        case .rollback: "tuf_rollback"
        case .versionMismatch: "tuf_version_mismatch"
        case .lengthOrHash: "tuf_length_or_hash"
        case .notFound: "tuf_not_found"
        case .fetch: "tuf_fetch"
        case .tooLarge: "tuf_too_large"
        case .storage: "tuf_storage"
        case .unknownTarget: "tuf_unknown_target"
        case .workflow: "tuf_workflow"
        case .publisher: "tuf_publisher"
        case .insecureTransport: "tuf_insecure_transport"
        }
    }

    public var arguments: [String] {
        switch self {
        case .json(let detail, let offset): [String(offset)] + detail.flattened
        case .metadata(let role, let detail): [role] + detail.flattened
        case .threshold(let role, let valid, let threshold): [role, String(valid), String(threshold)]
        case .expired(let role, let expires): [role, expires]
        case .rollback(let role, let trusted, let offered): [role, String(trusted), String(offered)]
        case .versionMismatch(let role, let expected, let found): [role, String(expected), String(found)]
        case .lengthOrHash(let what, let detail): [what] + detail.flattened
        case .notFound(let url): [url]
        case .fetch(let url, let detail): [url] + detail.flattened
        case .tooLarge(let url, let limit): [url, String(limit)]
        case .storage(let path, let detail): [path] + detail.flattened
        case .unknownTarget(let target): [target]
        case .workflow(let detail): detail.flattened
        case .publisher(let detail): detail.flattened
        case .insecureTransport(let url): [url]
        }
    }

    /// The English message, from the catalog (`error.<code>` in en.json).
    public var description: String { englishMessage }

    /// The detail code of this error (`duplicate_key`), for callers and tests that branch on
    /// what went wrong; nil for the cases without one.
    public var detail: ErrorDetail? {
        switch self {
        case .json(let detail, _), .metadata(_, let detail), .lengthOrHash(_, let detail), .fetch(_, let detail),
             .storage(_, let detail), .workflow(let detail), .publisher(let detail): detail
        default: nil
        }
    }
}
