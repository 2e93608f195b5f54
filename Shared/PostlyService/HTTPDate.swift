import Foundation
import PostlyModels

/// HTTP's date, the IMF-fixdate of RFC 9110 §5.6.7 (`Sun, 06 Nov 1994 08:49:37 GMT`), as
/// `Last-Modified`, `If-Modified-Since`, `Retry-After` and signed requests' `Date` carry it.
/// Written by hand: it is one fixed layout, and `DateFormatter` is a shared mutable object.
public enum HTTPDate {
    /// From 1970-01-01, a Thursday.
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// To the whole second below; `zone` is what follows the time (RSS writes `+0000`).
    public static func format(_ date: Date, zone: String = "GMT") -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let (days, secondOfDay) = CivilDate.floorDivision(seconds, 86_400)
        let (year, month, day) = CivilDate.date(fromDays: days)
        let weekday = weekdays[Int(CivilDate.floorDivision(days, 7).1)]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[Int(month) - 1]) \(year) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) \(zone)"
    }

    /// The date of an IMF-fixdate; nil for anything else, a year of other than four digits
    /// included (an unparsable date is ignored, RFC 9110 §13.1.3).
    public static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].count == 4, weekdays.contains(String(fields[0].dropLast())), fields[0].last == ",",
            let day = number(fields[1], digits: 2), let month = months.firstIndex(of: String(fields[2])),
            let year = number(fields[3], digits: 4), fields[5] == "GMT"
        else { return nil }
        let time = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, let hour = number(time[0], digits: 2), let minute = number(time[1], digits: 2),
            let second = number(time[2], digits: 2), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = CivilDate.days(year: year, month: Int64(month + 1), day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Exactly `digits` ASCII digits: bounded, so nothing computed from it can overflow.
    private static func number(_ text: Substring, digits: Int) -> Int64? {
        guard text.utf8.count == digits, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int64(text)
    }
}
