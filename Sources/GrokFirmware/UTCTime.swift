import Foundation

/// ISO 8601 UTC timestamps of the one form the channel files use, `2025-01-31T12:00:00Z`
/// (whole seconds, `Z`), read and written without a locale or time-zone database.
enum UTCTime {
    /// `date` as `YYYY-MM-DDTHH:MM:SSZ`, rounded down to the second.
    static func format(_ date: Date) -> String {
        format(seconds: Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// `seconds` since 1970-01-01T00:00:00Z as `YYYY-MM-DDTHH:MM:SSZ`.
    static func format(seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = String(y)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year
            + "-\(two(m))-\(two(d))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }

    /// The seconds since 1970 of `YYYY-MM-DDTHH:MM:SSZ` (years 1970-9999); `nil` for anything else.
    static func parse(_ text: String) -> Int64? {
        let c = Array(text.utf8)
        guard c.count == 20, c[4] == 0x2D, c[7] == 0x2D, c[10] == 0x54, c[13] == 0x3A, c[16] == 0x3A, c[19] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                guard (0x30...0x39).contains(c[i]) else { return nil }
                value = value * 10 + Int64(c[i] - 0x30)
            }
            return value
        }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19),
              y >= 1970, (1...12).contains(mo), h < 24, mi < 60, s < 60
        else { return nil }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard d >= 1, d <= monthDays[Int(mo) - 1] else { return nil }
        return days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s
    }

    /// The date of `text`; see ``parse(_:)``.
    static func date(_ text: String) -> Date? {
        parse(text).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    // Howard Hinnant's days-from-civil and civil-from-days (proleptic Gregorian).
    private static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
