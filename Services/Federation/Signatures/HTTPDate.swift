import Foundation

/// HTTP's date format (RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`), which `Date`
/// headers of signed requests carry. Written by hand: it is one fixed layout, and
/// `DateFormatter` is a shared mutable object.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// The date of an IMF-fixdate string; nil for anything else.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
            let day = Int32(fields[1]), let month = months.firstIndex(of: String(fields[2])), let year = Int32(fields[3])
        else { return nil }
        let time = fields[4].split(separator: ":").compactMap { Int32($0) }
        guard time.count == 3, (1...31).contains(day), (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2]) else {
            return nil
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = time[0]
        parts.tm_min = time[1]
        parts.tm_sec = time[2]
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
