/// A statement whose interpolated values are bound as parameters, never spliced into the text:
/// `"SELECT * FROM posts WHERE id = \(id)"` is sent as `... WHERE id = $1` with `id` bound.
/// Raw text goes in only through `\(unescaped:)`, for identifiers the code itself chooses.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// The statement text with `$1`, `$2`, ... placeholders.
    public private(set) var text: String
    public private(set) var bindings: [PostgresValue]
    public private(set) var types: [PostgresType]

    public init(stringLiteral text: String) {
        self.text = text
        self.bindings = []
        self.types = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self.text = stringInterpolation.text
        self.bindings = stringInterpolation.bindings
        self.types = stringInterpolation.types
    }

    /// Text taken as it is: the explicit escape hatch, never for values from outside.
    public init(unescaped text: String) {
        self.init(stringLiteral: text)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text: String
        var bindings: [PostgresValue] = []
        var types: [PostgresType] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text = ""
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
            bindings.reserveCapacity(interpolationCount)
            types.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds the value as the next `$n`.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value) {
            bindings.append(value.postgresValue)
            types.append(Value.postgresType)
            text += "$\(bindings.count)"
        }

        /// Binds the value, or NULL for nil, as the next `$n`.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            bindings.append(value.postgresValue)
            types.append(Value.postgresType)
            text += "$\(bindings.count)"
        }

        /// Raw SQL text (an identifier the code chose): the one way around binding.
        public mutating func appendInterpolation(unescaped raw: String) {
            text += raw
        }
    }
}

extension SQL: CustomStringConvertible {
    /// The text and the number of bound values, never the values: safe for logs.
    public var description: String {
        bindings.isEmpty ? text : "\(text) [\(bindings.count) bound value\(bindings.count == 1 ? "" : "s") redacted]"
    }
}
