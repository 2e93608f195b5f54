import Foundation
import PostlyModels
import Testing

@Suite struct TimestampTests {
    @Test func writesUTCWithExactlyThreeFractionalDigits() throws {
        let date = try #require(Timestamp.parse("2026-11-21T06:44:12.123Z"))
        #expect(Timestamp.format(date) == "2026-11-21T06:44:12.123Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_795_000_000)) == "2026-11-18T11:06:40.000Z")
    }

    @Test func writesDatesBefore1970() {
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
    }

    @Test func neverRoundsIntoTheNextSecond() {
        let almostNextSecond = Date(timeIntervalSince1970: 1_795_000_000.9996)
        #expect(Timestamp.format(almostNextSecond) == "2026-11-18T11:06:40.999Z")
    }

    /// The formatter this one replaced: Foundation's calendar for the whole seconds, the
    /// milliseconds by hand (Foundation's own fraction would print the binary error of `.471`
    /// as `.470`).
    static func previousFormat(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down))
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, millisecond) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let text = Date.ISO8601FormatStyle(timeZone: .gmt).format(Date(timeIntervalSince1970: TimeInterval(wholeSeconds)))
        let digits = String(millisecond)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// The calendar arithmetic against Foundation's, over three centuries of random instants.
    @Test func writesWhatTheFoundationBasedFormatterWrote() {
        var generator = SystemRandomNumberGenerator()
        let range = -2_208_988_800_000...7_258_118_400_000 as ClosedRange<Int64> // 1900...2200, in ms
        for _ in 0..<20_000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: range, using: &generator)) / 1000)
            #expect(Timestamp.format(date) == Self.previousFormat(date), "\(date.timeIntervalSince1970)")
        }
    }

    @Test func readsTimestampsWithoutFractionOrWithOtherPrecisionOrOffset() throws {
        let expected = try #require(Timestamp.parse("2026-11-21T06:44:12.000Z"))
        #expect(Timestamp.parse("2026-11-21T06:44:12Z") == expected)
        #expect(Timestamp.parse("2026-11-21T07:44:12+01:00") == expected)
        let micro = try #require(Timestamp.parse("2026-11-21T06:44:12.123456Z"))
        #expect(Timestamp.format(micro) == "2026-11-21T06:44:12.123Z")
        #expect(Timestamp.parse("yesterday") == nil)
    }

    /// Outside them a date once stopped a service: the year 0 wrote a negative digit, the year
    /// 300000 overflowed PostgreSQL's microseconds.
    @Test func onlyTheYearsOneToNineThousandNineHundredNinetyNineAreTimestamps() throws {
        for text in ["0000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "300000-01-01T00:00:00Z", "+300000-01-01T00:00:00Z", "10000-01-01T00:00:00Z"] {
            #expect(Timestamp.parse(text) == nil, "\(text)")
        }
        for text in ["1600-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"] {
            #expect(Timestamp.parse(text).map(Timestamp.format) == text)
        }
    }

    @Test func jsonCoderRoundTripsDatesAtMillisecondPrecision() throws {
        struct Stamped: Codable { var at: Date }
        let json = Data(#"{"at":"2026-11-21T06:44:12.123Z"}"#.utf8)
        let decoded = try PostlyJSON.decoder().decode(Stamped.self, from: json)
        #expect(String(decoding: try PostlyJSON.encoder().encode(decoded), as: UTF8.self) == #"{"at":"2026-11-21T06:44:12.123Z"}"#)
    }

    @Test func jsonCoderRejectsAGarbledTimestamp() {
        struct Stamped: Codable { var at: Date }
        #expect(throws: DecodingError.self) {
            try PostlyJSON.decoder().decode(Stamped.self, from: Data(#"{"at":"21/11/2026"}"#.utf8))
        }
    }
}
