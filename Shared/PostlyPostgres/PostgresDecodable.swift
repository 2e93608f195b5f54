import Foundation

/// One value of a result row, as the server sent it (text format).
public struct PostgresCell: Sendable {
    public let type: PostgresType
    /// The value's text representation; nil for NULL.
    public let bytes: ArraySlice<UInt8>?
    public let column: String

    public init(type: PostgresType, bytes: ArraySlice<UInt8>?, column: String) {
        self.type = type
        self.bytes = bytes
        self.column = column
    }

    /// The bytes, or a decoding error for NULL.
    public func requireBytes() throws(DatabaseError) -> ArraySlice<UInt8> {
        guard let bytes else { throw failure("NULL where a value was expected (decode an Optional)") }
        return bytes
    }

    public var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// A decoding error for this column. The reason must not quote the value.
    public func failure(_ reason: String) -> DatabaseError {
        .decoding(column: column, reason: reason)
    }
}

/// A Swift type a column can be decoded as with `row.decode("column", as: T.self)`.
public protocol PostgresDecodable: Sendable {
    static func decode(from cell: PostgresCell) throws -> Self
}

extension PostgresDecodable where Self: RawRepresentable, RawValue: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Self {
        guard let value = Self(rawValue: try RawValue.decode(from: cell)) else {
            throw cell.failure("not a valid \(Self.self)")
        }
        return value
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Wrapped? {
        cell.bytes == nil ? nil : try Wrapped.decode(from: cell)
    }
}

extension String: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> String {
        String(decoding: try cell.requireBytes(), as: UTF8.self)
    }
}

extension Substring: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Substring {
        Substring(try String.decode(from: cell))
    }
}

extension PostgresCell {
    /// Parses a decimal integer without going through `String`.
    func integer(min: Int64, max: Int64) throws(DatabaseError) -> Int64 {
        let bytes = try requireBytes()
        var index = bytes.startIndex
        var negative = false
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        guard index < bytes.endIndex else { throw failure("not an integer") }
        var value: Int64 = 0
        while index < bytes.endIndex {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw failure("not an integer") }
            let (scaled, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative
                ? scaled.subtractingReportingOverflow(Int64(digit)) : scaled.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { throw failure("the integer is out of range") }
            value = next
            index += 1
        }
        guard value >= min, value <= max else { throw failure("the integer is out of range") }
        return value
    }
}

extension Int: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int {
        Int(try cell.integer(min: Int64(Int.min), max: Int64(Int.max)))
    }
}

extension Int64: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int64 {
        try cell.integer(min: .min, max: .max)
    }
}

extension Int32: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int32 {
        Int32(try cell.integer(min: Int64(Int32.min), max: Int64(Int32.max)))
    }
}

extension Double: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Double {
        guard let value = Double(String(decoding: try cell.requireBytes(), as: UTF8.self)) else {
            throw cell.failure("not a number")
        }
        return value
    }
}

extension Bool: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Bool {
        switch String(decoding: try cell.requireBytes(), as: UTF8.self) {
        case "t", "true": true
        case "f", "false": false
        default: throw cell.failure("not a boolean")
        }
    }
}

extension UUID: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> UUID {
        guard let value = UUID(uuidString: String(decoding: try cell.requireBytes(), as: UTF8.self)) else {
            throw cell.failure("not a UUID")
        }
        return value
    }
}

extension Date: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Date {
        guard let value = PostgresTimestamp.parse(try cell.requireBytes()) else {
            throw cell.failure("not a timestamp")
        }
        return value
    }
}

extension Data: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Data {
        Data(try [UInt8].decode(from: cell))
    }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public static func decode(from cell: PostgresCell) throws -> [Element] {
        try Element.decodeArray(from: cell)
    }
}

extension UInt8 {
    /// `bytea` arrives in hex (`\x0a1b`); any other column as its raw text bytes.
    public static func decodeArray(from cell: PostgresCell) throws -> [UInt8] {
        let bytes = try cell.requireBytes()
        guard cell.type == .bytea else { return Array(bytes) }
        guard bytes.count >= 2, bytes.count % 2 == 0, bytes.first == UInt8(ascii: "\\"),
            bytes[bytes.startIndex + 1] == UInt8(ascii: "x")
        else { throw cell.failure("not hex-encoded bytea") }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var result = [UInt8]()
        result.reserveCapacity(bytes.count / 2 - 1)
        var index = bytes.startIndex + 2
        while index < bytes.endIndex {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else {
                throw cell.failure("not hex-encoded bytea")
            }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }
}
