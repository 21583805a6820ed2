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
    /// `date` in UTC, milliseconds truncated (as ICU's `SSS` does).
    public static func iso8601(_ date: Date) -> String {
        let since1970 = date.timeIntervalSince1970
        var seconds = time_t(since1970.rounded(.down))
        var milliseconds = Int(((since1970 - Double(seconds)) * 1000).rounded(.down))
        if milliseconds >= 1000 {  // a value a hair under the next second
            seconds += 1
            milliseconds -= 1000
        }
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
