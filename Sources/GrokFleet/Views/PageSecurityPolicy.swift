import Foundation
import GrokCrypto

/// The Content-Security-Policy of a self-contained page (`grokctl fleet report`): nothing
/// from anywhere (`default-src 'none'`), only the page's own style sheet and script,
/// each allowed by its SHA-256, so a browser refuses any other style, script or load.
public enum PageSecurityPolicy {
    /// `'sha256-<base64>'`: how a policy names an inline source by its UTF-8 bytes.
    public static func hash(_ source: String) -> String {
        "'sha256-" + Data(SHA256.hash(Array(source.utf8)).bytes).base64EncodedString() + "'"
    }

    /// The policy allowing only `style` and `script`, by hash.
    public static func policy(style: String, script: String) -> String {
        "default-src 'none'; style-src \(hash(style)); script-src \(hash(script)); img-src 'none'; base-uri 'none'; form-action 'none'"
    }
}
