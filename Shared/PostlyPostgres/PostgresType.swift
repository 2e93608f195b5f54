/// A PostgreSQL type, by its OID in `pg_type`.
public struct PostgresType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Lets the server infer the type from the context, as for a quoted literal.
    public static let unknown = PostgresType(rawValue: 0)
    public static let bool = PostgresType(rawValue: 16)
    public static let bytea = PostgresType(rawValue: 17)
    public static let int8 = PostgresType(rawValue: 20)
    public static let int2 = PostgresType(rawValue: 21)
    public static let int4 = PostgresType(rawValue: 23)
    public static let text = PostgresType(rawValue: 25)
    public static let float4 = PostgresType(rawValue: 700)
    public static let float8 = PostgresType(rawValue: 701)
    public static let textArray = PostgresType(rawValue: 1009)
    public static let int8Array = PostgresType(rawValue: 1016)
    public static let uuidArray = PostgresType(rawValue: 2951)
    public static let varchar = PostgresType(rawValue: 1043)
    public static let date = PostgresType(rawValue: 1082)
    public static let timestamp = PostgresType(rawValue: 1114)
    public static let timestamptz = PostgresType(rawValue: 1184)
    public static let numeric = PostgresType(rawValue: 1700)
    public static let uuid = PostgresType(rawValue: 2950)
    public static let jsonb = PostgresType(rawValue: 3802)
}
