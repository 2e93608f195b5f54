import Foundation
import PostlyModels

/// A date of the earlier backend, at the contract's precision: UTC, milliseconds.
///
/// Flask wrote `datetime.now(UTC).isoformat()`: `2026-02-14T10:20:30.123456+00:00`, with no
/// fraction when the microseconds are 0. The fraction is **truncated** to milliseconds (so two
/// dates keep their order), an offset is applied, and a date without one is UTC.
public struct LegacyTimestamp: Equatable, Comparable, Sendable {
    public let milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// Parses an ISO 8601 date and time, with or without fraction and offset, in the years
    /// `Timestamp.range` holds.
    public init?(_ text: String) {
        let pattern = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:[.,](\d+))?(Z|z|[+-]\d{2}:?\d{2})?$/
        guard let match = text.trimmingCharacters(in: .whitespaces).wholeMatch(of: pattern) else { return nil }
        var offset = match.4.map { $0 == "z" ? "Z" : String($0) } ?? "Z"
        if offset.count == 5 { offset.insert(":", at: offset.index(offset.startIndex, offsetBy: 3)) }
        guard let whole = try? Date("\(match.1)T\(match.2)\(offset)", strategy: Date.ISO8601FormatStyle()) else { return nil }
        let digits = (match.3.map(String.init) ?? "").prefix(3)
        let millisecond = Int64(digits.padding(toLength: 3, withPad: "0", startingAt: 0)) ?? 0
        guard Timestamp.range.contains(whole) else { return nil }
        milliseconds = Int64(whole.timeIntervalSince1970.rounded()) * 1000 + millisecond
    }

    /// The creation time an ObjectId carries in its first four bytes (whole seconds).
    public init?(objectId: String) {
        guard objectId.count == 24, let seconds = UInt32(objectId.prefix(8), radix: 16) else { return nil }
        milliseconds = Int64(seconds) * 1000
    }

    /// As the contract writes it: `2026-02-14T10:20:30.123Z`.
    public var text: String { Timestamp.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000)) }

    public static func < (a: Self, b: Self) -> Bool { a.milliseconds < b.milliseconds }
}
