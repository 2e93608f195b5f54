import Foundation

/// The one JSON configuration of Postly, for HTTP bodies and events alike.
///
/// Timestamps are RFC 3339 UTC with exactly three fractional digits
/// (`2026-11-21T06:44:12.123Z`): the iOS client rejects a timestamp without a fraction.
/// Reading also accepts timestamps without a fraction or with other precisions.
public enum PostlyJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an RFC 3339 timestamp, got \(text.prefix(40))")
            }
            return date
        }
        return decoder
    }
}

/// RFC 3339 timestamps as the contract writes them.
public enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    private static let withoutFraction = Date.ISO8601FormatStyle(timeZone: .gmt)

    /// `2026-11-21T06:44:12.123Z`: UTC, exactly three fractional digits, truncated (never
    /// rounded up into the next second).
    public static func format(_ date: Date) -> String {
        // Half a microsecond absorbs the binary error of a parsed `.123` (0.12299999...).
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down))
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, millisecond) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let text = withoutFraction.format(Date(timeIntervalSince1970: TimeInterval(wholeSeconds)))
        let digits = String(millisecond)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    public static func parse(_ text: String) -> Date? {
        if let date = try? withFraction.parse(text) { return date }
        if let date = try? withoutFraction.parse(text) { return date }
        // Other fraction lengths (`.5Z`, `.123456Z`) and offsets other than Z.
        return try? Date(text, strategy: .iso8601)
    }
}
