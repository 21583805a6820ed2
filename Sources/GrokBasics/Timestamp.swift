import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A moment as the reports, events and ledgers write it: ISO 8601 in UTC with milliseconds
/// (`2026-12-06T07:55:00.123Z`), the form `ISO8601DateFormatter` gives with
/// `.withInternetDateTime` and `.withFractionalSeconds`.
///
/// Written from the calendar fields `gmtime_r` gives, without a formatter: a fleet run stamps
/// every event of every unit (each firmware block is one), and making an
/// `ISO8601DateFormatter` per event took a tenth of a 64-unit provision's CPU in ICU.
public enum Timestamp {
    /// `date` in UTC, to the nearest millisecond (as ICU's `SSS` rounds).
    public static func iso8601(_ date: Date) -> String {
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (quotient, remainder) = total.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(remainder < 0 ? quotient - 1 : quotient)
        let milliseconds = Int(remainder < 0 ? remainder + 1000 : remainder)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        return pad(Int(fields.tm_year) + 1900, 4) + "-" + pad(Int(fields.tm_mon) + 1, 2) + "-" + pad(Int(fields.tm_mday), 2)
            + "T" + pad(Int(fields.tm_hour), 2) + ":" + pad(Int(fields.tm_min), 2) + ":" + pad(Int(fields.tm_sec), 2)
            + "." + pad(milliseconds, 3) + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
