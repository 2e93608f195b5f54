import Foundation

/// A value as it is sent to the server for one `$n` parameter.
public enum PostgresValue: Sendable, Hashable {
    case null
    /// PostgreSQL's text representation of the value.
    case text(String)
    /// The binary representation (used for `bytea`).
    case binary([UInt8])
}

/// A Swift value that can be bound to a query parameter with `\(value)` in `SQL`.
///
/// For an enum with a raw value, declaring the conformance is enough:
/// `extension PostStatus: PostgresBindable {}`.
public protocol PostgresBindable: Sendable {
    /// The parameter's type, also for a NULL of this Swift type.
    static var postgresType: PostgresType { get }
    var postgresValue: PostgresValue { get }
}

extension PostgresBindable where Self: RawRepresentable, RawValue: PostgresBindable {
    public static var postgresType: PostgresType { RawValue.postgresType }
    public var postgresValue: PostgresValue { rawValue.postgresValue }
}

extension String: PostgresBindable {
    /// Untyped, so a string fits a `text`, `varchar`, `uuid`, `jsonb` or enum column alike.
    public static var postgresType: PostgresType { .unknown }
    public var postgresValue: PostgresValue { .text(self) }
}

extension Substring: PostgresBindable {
    public static var postgresType: PostgresType { .unknown }
    public var postgresValue: PostgresValue { .text(String(self)) }
}

extension Int: PostgresBindable {
    public static var postgresType: PostgresType { .int8 }
    public var postgresValue: PostgresValue { .text(String(self)) }
}

extension Int64: PostgresBindable {
    public static var postgresType: PostgresType { .int8 }
    public var postgresValue: PostgresValue { .text(String(self)) }
}

extension Int32: PostgresBindable {
    public static var postgresType: PostgresType { .int4 }
    public var postgresValue: PostgresValue { .text(String(self)) }
}

extension Double: PostgresBindable {
    public static var postgresType: PostgresType { .float8 }
    public var postgresValue: PostgresValue {
        if isNaN { return .text("NaN") }
        if isInfinite { return .text(self < 0 ? "-Infinity" : "Infinity") }
        return .text("\(self)")
    }
}

extension Bool: PostgresBindable {
    public static var postgresType: PostgresType { .bool }
    public var postgresValue: PostgresValue { .text(self ? "t" : "f") }
}

extension UUID: PostgresBindable {
    public static var postgresType: PostgresType { .uuid }
    public var postgresValue: PostgresValue { .text(uuidString) }
}

extension Date: PostgresBindable {
    /// `timestamptz` in UTC with microseconds.
    public static var postgresType: PostgresType { .timestamptz }
    public var postgresValue: PostgresValue { .text(PostgresTimestamp.format(self)) }
}

extension Data: PostgresBindable {
    public static var postgresType: PostgresType { .bytea }
    public var postgresValue: PostgresValue { .binary([UInt8](self)) }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public static var postgresType: PostgresType { Wrapped.postgresType }
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}

/// What an `Array` of it binds and decodes as: `[UInt8]` is `bytea`, `[String]` is
/// `text[]`, `[Int]` is `int8[]`, `[UUID]` is `uuid[]`.
public protocol PostgresArrayElement: Sendable {
    static var arrayType: PostgresType { get }
    static func arrayValue(_ elements: [Self]) -> PostgresValue
    static func decodeArray(from cell: PostgresCell) throws -> [Self]
}

extension Array: PostgresBindable where Element: PostgresArrayElement {
    public static var postgresType: PostgresType { Element.arrayType }
    public var postgresValue: PostgresValue { Element.arrayValue(self) }
}

extension UInt8: PostgresArrayElement {
    public static var arrayType: PostgresType { .bytea }
    public static func arrayValue(_ elements: [UInt8]) -> PostgresValue { .binary(elements) }
}

/// Elements written in PostgreSQL's array literal syntax, `{"a","b"}`.
public protocol PostgresTextArrayElement: PostgresArrayElement, PostgresBindable, PostgresDecodable {}

extension PostgresTextArrayElement {
    public static func arrayValue(_ elements: [Self]) -> PostgresValue {
        .text(PostgresArrayText.format(elements.map { element in
            if case .text(let text) = element.postgresValue { text } else { "" }
        }))
    }

    public static func decodeArray(from cell: PostgresCell) throws -> [Self] {
        try PostgresArrayText.elements(of: cell).map { element in
            try Self.decode(from: PostgresCell(type: .text, bytes: ArraySlice(element.utf8), column: cell.column))
        }
    }
}

extension String: PostgresTextArrayElement {
    public static var arrayType: PostgresType { .textArray }

    /// The elements as parsed, without decoding each again (search results carry thousands).
    public static func decodeArray(from cell: PostgresCell) throws -> [String] {
        try PostgresArrayText.elements(of: cell)
    }
}

extension Int: PostgresTextArrayElement {
    public static var arrayType: PostgresType { .int8Array }
}

extension UUID: PostgresTextArrayElement {
    public static var arrayType: PostgresType { .uuidArray }
}
