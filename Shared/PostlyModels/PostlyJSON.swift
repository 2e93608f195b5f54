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

    /// `value` as JSON: through its own writer when it is `JSONWritable` (the hot objects),
    /// else through `encoder()`. Posts, comments, authors and pages come out byte for byte as
    /// the encoder writes them (`JSONWriterTests`); a search result puts `highlights` after
    /// the post's keys instead of sorting it in: the same object in other bytes.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        if let writable = value as? any JSONWritable {
            var json = JSONWriter()
            writable.write(to: &json)
            return json.bytes
        }
        return Array(try sharedEncoder.encode(value))
    }

    private static let sharedEncoder = encoder()

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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        write(date, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `format(date)` to `bytes`: every answer writes several, so no formatter runs.
    public static func write(_ date: Date, into bytes: inout [UInt8]) {
        // Half a microsecond absorbs the binary error of a parsed `.123` (0.12299999...).
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down))
        let (seconds, millisecond) = CivilDate.floorDivision(milliseconds, 1000)
        let (days, secondOfDay) = CivilDate.floorDivision(seconds, 86_400)
        let (year, month, day) = CivilDate.date(fromDays: days)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(millisecond, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The years 0001-9999, RFC 3339's four digits. A date outside is refused where it comes in
    /// (`parse`, the import's dates), so that nothing made of it overflows or writes a year of
    /// other than four digits.
    public static let range = Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799.999)

    public static func parse(_ text: String) -> Date? {
        // Other fraction lengths (`.5Z`, `.123456Z`) and offsets other than Z by the last.
        let date = (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text)) ?? (try? Date(text, strategy: .iso8601))
        return date.flatMap { range.contains($0) ? $0 : nil }
    }
}
