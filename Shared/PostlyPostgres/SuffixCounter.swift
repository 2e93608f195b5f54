/// The suffixes handed out for the bases of names that must be unique (a post's slug `-2`, an
/// actor's handle `_3`), in a table `(base text PRIMARY KEY, last integer NOT NULL)`: a taken
/// base costs one statement however many names share it, where trying each suffix in turn cost
/// two per taken name. The counter's row lock orders concurrent takers of one base.
public struct SuffixCounter: Sendable {
    private let table: String

    /// - Parameter table: a name written in the code, never text from outside.
    public init(table: StaticString) {
        self.table = "\(table)"
    }

    /// The next suffix of `base`: 2 the first time, then one more each time.
    public func next(of base: String, in connection: DatabaseConnection) async throws -> Int {
        try await connection.query(
            """
            INSERT INTO \(unescaped: table) (base, last) VALUES (\(base), 2)
            ON CONFLICT (base) DO UPDATE SET last = \(unescaped: table).last + 1 RETURNING last
            """
        ).first?.decode("last", as: Int.self) ?? 2
    }
}
