import GrokCrypto
import GrokProtocol

/// The Grokker password on the device: how it is kept (``PasswordHash``) and checked, with a
/// lockout against guessing that runs on the device's sample clock.
///
/// Lockout: after `n` wrong passwords in a row, every attempt (authenticate, or set with an
/// old password) during the next `0.25 · 2^(n−1)` seconds (at most 60 s) of the device's
/// clock is answered WRONG_PASSWORD without looking at the password, and does not extend the
/// lockout. A right password ends the run. The count lives in RAM: a power cycle resets it,
/// as the hardware's would.
final class PasswordGuard {
    /// Wrong passwords in a row.
    private(set) var failures = 0
    /// Until this sample of the device clock attempts are refused.
    private(set) var lockedUntil: Int64 = 0

    /// The lockout after `failures` wrong passwords in a row, seconds.
    static func lockout(afterFailures failures: Int) -> Double {
        guard failures > 0 else { return 0 }
        return min(60, 0.25 * Double(1 << min(failures - 1, 16)))
    }

    /// A new salted hash of `password`.
    static func hash(_ password: String) -> PasswordHash {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return PasswordHash(salt: Hex.encode(salt), sha256: digest(password, salt: salt).hex)
    }

    static func digest(_ password: String, salt: [UInt8]) -> SHA256Digest {
        SHA256.hash(salt + Array(password.utf8))
    }

    /// Whether `password` is the one `stored` was made from (compared in constant time).
    static func matches(_ password: String, _ stored: PasswordHash) -> Bool {
        guard let salt = Hex.decode(stored.salt), let expected = SHA256Digest(hex: stored.sha256) else { return false }
        let actual = digest(password, salt: salt)
        var difference: UInt8 = 0
        for (a, b) in zip(actual.bytes, expected.bytes) { difference |= a ^ b }
        return difference == 0
    }

    /// One attempt at `now` (samples of the device clock): `true` when `password` is right
    /// and no lockout runs.
    func attempt(_ password: String, stored: PasswordHash, now: Int64, sampleRate: Int) -> Bool {
        guard now >= lockedUntil else { return false }
        if Self.matches(password, stored) {
            failures = 0
            return true
        }
        failures += 1
        lockedUntil = now + Int64((Self.lockout(afterFailures: failures) * Double(sampleRate)).rounded())
        return false
    }
}
