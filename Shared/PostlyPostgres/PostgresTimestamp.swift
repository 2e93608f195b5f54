import Foundation
import PostlyModels

/// `timestamptz` text in ISO style, as the connection asks for it (`DateStyle=ISO`, `TimeZone=UTC`).
enum PostgresTimestamp {
    /// `2026-11-21 06:44:12.123456+00`: microseconds, PostgreSQL's own precision.
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let (seconds, fraction) = CivilDate.floorDivision(micros, 1_000_000)
        let (days, secondOfDay) = CivilDate.floorDivision(seconds, 86_400)
        let (year, month, day) = CivilDate.date(fromDays: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))+00"
    }

    /// Reads `timestamptz`, `timestamp` (taken as UTC) and `date` text.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Date? {
        var reader = Reader(bytes: bytes)
        if bytes.elementsEqual("infinity".utf8) { return .distantFuture }
        if bytes.elementsEqual("-infinity".utf8) { return .distantPast }
        guard let year = reader.number(), reader.skip("-"), let month = reader.number(digits: 2), reader.skip("-"),
            let day = reader.number(digits: 2)
        else { return nil }
        var seconds = CivilDate.days(year: year, month: month, day: day) * 86_400
        var micros: Int64 = 0
        if reader.skip(" ") || reader.skip("T") {
            guard let hour = reader.number(digits: 2), reader.skip(":"), let minute = reader.number(digits: 2),
                reader.skip(":"), let second = reader.number(digits: 2)
            else { return nil }
            seconds += hour * 3600 + minute * 60 + second
            if reader.skip(".") {
                var scale: Int64 = 100_000
                while let digit = reader.digit() {
                    micros += digit * scale
                    scale /= 10
                }
            }
            if let sign = reader.sign() {
                guard let hours = reader.number(digits: 2) else { return nil }
                var offset = hours * 3600
                if reader.skip(":") {
                    guard let minutes = reader.number(digits: 2) else { return nil }
                    offset += minutes * 60
                    if reader.skip(":") {
                        guard let extra = reader.number(digits: 2) else { return nil }
                        offset += extra
                    }
                }
                seconds -= sign * offset
            } else if reader.skip("Z") {}
        }
        guard reader.atEnd else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int
        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }
        var atEnd: Bool { index == bytes.endIndex }
        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }
        mutating func digit() -> Int64? {
            guard index < bytes.endIndex, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 else { return nil }
            index += 1
            return Int64(digit)
        }
        mutating func number(digits: Int? = nil) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < (digits ?? 9), let digit = digit() {
                value = value * 10 + digit
                count += 1
            }
            return count == 0 || (digits != nil && count != digits) ? nil : value
        }
        mutating func sign() -> Int64? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}

