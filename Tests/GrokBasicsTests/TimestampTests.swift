import Foundation
import GrokBasics
import Testing

@Suite("Timestamps")
struct TimestampTests {
    @Test("a moment reads as ISO8601DateFormatter writes it, in UTC with milliseconds",
          arguments: [0.0, 1.5, 59.999, 86_399.0005, 951_782_400.25, 1_796_542_500.123, 4_102_444_799.9999, -0.5])
    func sameAsTheFormatter(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        #expect(Timestamp.iso8601(date) == formatter.string(from: date))
    }
}
