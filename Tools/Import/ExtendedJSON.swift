import Foundation
import PostlyModels

/// A value of a `mongoexport` document, Extended JSON v2's wrappers resolved: `{"$oid"}`,
/// `{"$numberInt"|"$numberLong"|"$numberDouble"}` and `{"$date"}` in its relaxed (ISO string)
/// and canonical (`{"$numberLong": ms}`) forms. Other wrappers stay plain documents: the
/// earlier backend stores none.
public indirect enum ExtendedJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case objectId(String)
    /// Milliseconds since 1970 (BSON dates have no finer precision).
    case date(milliseconds: Int64)
    case array([ExtendedJSON])
    case document([String: ExtendedJSON])

    /// One document of a file: `bytes` is a JSON object.
    public static func document(from bytes: some Collection<UInt8>) throws -> [String: ExtendedJSON] {
        let value = try JSONDecoder().decode(ExtendedJSON.self, from: Data(bytes))
        guard case .document(let fields) = value else { throw ExtendedJSONError("a document must be a JSON object") }
        return fields
    }

    public subscript(key: String) -> ExtendedJSON? {
        guard case .document(let fields) = self else { return nil }
        return fields[key]
    }

    /// A string, or an ObjectId as its 24 hex digits (ids are stored both ways).
    public var string: String? {
        switch self {
        case .string(let text), .objectId(let text): text
        default: nil
        }
    }
}

/// Why a line is not Extended JSON, for `line 17: invalid Extended JSON: <message>`.
public struct ExtendedJSONError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension ExtendedJSON: Decodable {
    public init(from decoder: any Decoder) throws {
        if let fields = try? decoder.container(keyedBy: Key.self) {
            var document: [String: ExtendedJSON] = [:]
            for key in fields.allKeys { document[key.stringValue] = try fields.decode(ExtendedJSON.self, forKey: key) }
            self = try Self.resolving(document)
            return
        }
        if var items = try? decoder.unkeyedContainer() {
            var array: [ExtendedJSON] = []
            while !items.isAtEnd { array.append(try items.decode(ExtendedJSON.self)) }
            self = .array(array)
            return
        }
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? value.decode(Int64.self) {
            self = .int(int)
        } else if let double = try? value.decode(Double.self) {
            self = .double(double)
        } else {
            self = .string(try value.decode(String.self))
        }
    }

    /// The value a one-key `$` wrapper stands for, or the document itself.
    private static func resolving(_ document: [String: ExtendedJSON]) throws -> ExtendedJSON {
        guard document.count == 1, let (key, value) = document.first, key.hasPrefix("$") else { return .document(document) }
        switch (key, value) {
        case ("$oid", .string(let hex)):
            guard hex.count == 24, hex.allSatisfy(\.isHexDigit) else { throw ExtendedJSONError("$oid \(hex.prefix(40)) is not 24 hex digits") }
            return .objectId(hex.lowercased())
        case ("$numberInt", .string(let text)), ("$numberLong", .string(let text)):
            guard let int = Int64(text) else { throw ExtendedJSONError("\(key) \(text.prefix(40)) is not an integer") }
            return .int(int)
        case ("$numberDouble", .string(let text)):
            let special: [String: Double] = ["Infinity": .infinity, "-Infinity": -.infinity, "NaN": .nan]
            guard let double = special[text] ?? Double(text) else { throw ExtendedJSONError("$numberDouble \(text.prefix(40)) is not a number") }
            return .double(double)
        case ("$date", .string(let text)):
            guard let date = LegacyTimestamp(text) else { throw ExtendedJSONError("$date \(text.prefix(40)) is not an ISO 8601 date") }
            return .date(milliseconds: date.milliseconds)
        case ("$date", .int(let milliseconds)):
            guard Timestamp.range.contains(Date(timeIntervalSince1970: Double(milliseconds) / 1000)) else {
                throw ExtendedJSONError("$date \(milliseconds) is not in the years 1-9999")
            }
            return .date(milliseconds: milliseconds)
        case ("$oid", _), ("$numberInt", _), ("$numberLong", _), ("$numberDouble", _), ("$date", _):
            throw ExtendedJSONError("\(key) has a value of the wrong type")
        default:
            return .document(document)
        }
    }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

extension ExtendedJSON: Encodable {
    /// As plain JSON, for the report's `from` and `to`: an id as its hex, a date as the contract writes it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .int(let int): try container.encode(int)
        case .double(let double): try container.encode(double.isFinite ? double : 0)
        case .string(let text), .objectId(let text): try container.encode(text)
        case .date(let milliseconds): try container.encode(LegacyTimestamp(milliseconds: milliseconds).text)
        case .array(let items): try container.encode(items)
        case .document(let fields): try container.encode(fields)
        }
    }
}

extension ExtendedJSON {
    /// This value with U+0000 taken out of its strings, and where it was taken from (`title`,
    /// `comments[2].content`): PostgreSQL's text refuses it, so one such character would stop
    /// a whole batch, on every resume.
    func removingNULs(at path: String = "") -> (value: ExtendedJSON, fields: [String]) {
        switch self {
        case .string(let text) where text.unicodeScalars.contains("\0"):
            return (.string(String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\0" }))), [path])
        case .array(let values):
            var cleaned: [ExtendedJSON] = [], fields: [String] = []
            for (index, value) in values.enumerated() {
                let (clean, found) = value.removingNULs(at: "\(path)[\(index)]")
                cleaned.append(clean)
                fields += found
            }
            return (.array(cleaned), fields)
        case .document(let values):
            var cleaned: [String: ExtendedJSON] = [:], fields: [String] = []
            for (key, value) in values {
                let (clean, found) = value.removingNULs(at: path.isEmpty ? key : "\(path).\(key)")
                cleaned[key] = clean
                fields += found
            }
            return (.document(cleaned), fields.sorted())
        default:
            return (self, [])
        }
    }
}
