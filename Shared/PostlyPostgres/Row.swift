/// One row of a result. Rows of one result share a single copy of the result's bytes.
public struct Row: Sendable {
    let result: QueryResultStorage
    let index: Int

    /// The value of the named column, as `type`. `Optional` decodes NULL as nil.
    public func decode<Value: PostgresDecodable>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        guard let columnIndex = result.columns.firstIndex(of: column) else {
            throw DatabaseError.decoding(column: column, reason: "no such column in the result")
        }
        return try decode(columnIndex, as: type)
    }

    /// The value of the column at `columnIndex` (from 0), as `type`.
    public func decode<Value: PostgresDecodable>(_ columnIndex: Int, as type: Value.Type = Value.self) throws -> Value {
        guard result.columns.indices.contains(columnIndex) else {
            throw DatabaseError.decoding(column: "#\(columnIndex)", reason: "no such column in the result")
        }
        return try Value.decode(from: cell(columnIndex))
    }

    /// Whether the named column is NULL.
    public func isNull(_ column: String) -> Bool {
        guard let columnIndex = result.columns.firstIndex(of: column) else { return true }
        return cell(columnIndex).bytes == nil
    }

    func cell(_ columnIndex: Int) -> PostgresCell {
        let range = result.ranges[index * result.columns.count + columnIndex]
        return PostgresCell(
            type: result.types[columnIndex],
            bytes: range.start < 0 ? nil : result.bytes[range.start..<(range.start + range.count)],
            column: result.columns[columnIndex]
        )
    }
}

/// A result copied out of libpq's `PGresult`: every value's bytes in one array.
final class QueryResultStorage: Sendable {
    struct ValueRange {
        /// -1 for NULL.
        var start: Int
        var count: Int
    }

    let columns: [String]
    let types: [PostgresType]
    let bytes: [UInt8]
    /// Row-major: row `r`, column `c` at `r * columns.count + c`.
    let ranges: [ValueRange]

    init(columns: [String], types: [PostgresType], bytes: [UInt8], ranges: [ValueRange]) {
        self.columns = columns
        self.types = types
        self.bytes = bytes
        self.ranges = ranges
    }

    var rowCount: Int { columns.isEmpty ? 0 : ranges.count / columns.count }

    var rows: [Row] { (0..<rowCount).map { Row(result: self, index: $0) } }
}
