import Crypto
import Foundation

/// One `mongoexport` file, read whole: one document a line (its default) or one JSON array
/// (`--jsonArray`), told apart by the first byte that is not white space.
public struct DumpFile: Sendable {
    /// One document as the file holds it, or why it is not one.
    public struct Entry: Sendable {
        /// 1-based: the line for line files, the element for arrays.
        public var line: Int
        /// Where the next entry starts in the file (the state's `byteOffset`).
        public var endOffset: Int
        public var size: Int
        public var document: Result<[String: ExtendedJSON], ExtendedJSONError>
    }

    /// The largest document accepted: MongoDB's own limit is 16 MiB, a service's body 1 MiB.
    public static let maximumDocumentSize = 1 << 20

    public let path: String
    public let sha256: String
    public let entries: [Entry]
    /// The lines of a line file, the elements of an array.
    public var lines: Int { entries.count }

    /// Reads `path`; throws ``ImportFailure/badInput(_:)`` for a missing file, a BSON dump or an
    /// array that is not JSON.
    public init(path: String) throws(ImportFailure) {
        let name = (path as NSString).lastPathComponent
        if name.lowercased().hasSuffix(".bson") {
            let json = (name as NSString).deletingPathExtension + ".json"
            throw .badInput("\(name): BSON dumps are not read; convert first: bsondump --outFile \(json) \(name)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .badInput("\(name): \(FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")")
        }
        try self.init(path: path, bytes: [UInt8](data))
    }

    public init(path: String, bytes: [UInt8]) throws(ImportFailure) {
        self.path = path
        sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let first = bytes.first { ![UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains($0) }
        entries = first == UInt8(ascii: "[") ? try Self.arrayEntries(bytes, of: path) : Self.lineEntries(bytes)
    }

    private static func lineEntries(_ bytes: [UInt8]) -> [Entry] {
        var entries: [Entry] = []
        var start = 0
        var number = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            number += 1
            let line = bytes[start..<end]
            if !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) {
                entries.append(Entry(line: number, endOffset: min(end + 1, bytes.count), size: line.count, document: parse(line)))
            }
            start = end + 1
        }
        return entries
    }

    /// Each element of an array is decoded on its own, so a bad element is that element's
    /// problem only. An array that is no JSON at all (cut short by a copy, one bad byte) is bad
    /// input: as one bad entry, under `--max-errors`, it went through as a collection with nothing in it.
    private static func arrayEntries(_ bytes: [UInt8], of path: String) throws(ImportFailure) -> [Entry] {
        let items: [ArrayElement]
        do {
            items = try JSONDecoder().decode([ArrayElement].self, from: Data(bytes))
        } catch {
            throw .badInput("\((path as NSString).lastPathComponent): not a JSON array: \(describe(error))")
        }
        let encoder = JSONEncoder()
        return items.enumerated().map { index, item in
            let document: Result<[String: ExtendedJSON], ExtendedJSONError>
            let size: Int
            switch item.value {
            case .success(.document(let fields)):
                size = (try? encoder.encode(ExtendedJSON.document(fields)).count) ?? 0
                document = size > maximumDocumentSize ? .failure(tooLarge) : .success(fields)
            case .success:
                (size, document) = (0, .failure(ExtendedJSONError("a document must be a JSON object")))
            case .failure(let error):
                (size, document) = (0, .failure(error))
            }
            return Entry(line: index + 1, endOffset: bytes.count, size: size, document: document)
        }
    }

    /// One element of an array, or why it is no Extended JSON.
    private struct ArrayElement: Decodable {
        var value: Result<ExtendedJSON, ExtendedJSONError>

        init(from decoder: any Decoder) {
            do {
                value = .success(try ExtendedJSON(from: decoder))
            } catch {
                value = .failure(ExtendedJSONError(DumpFile.describe(error)))
            }
        }
    }

    /// A document over ``maximumDocumentSize``: rejected, not counted as a bad line.
    public static let tooLarge = ExtendedJSONError("document larger than 1 MiB")

    private static func parse(_ line: ArraySlice<UInt8>) -> Result<[String: ExtendedJSON], ExtendedJSONError> {
        guard line.count <= maximumDocumentSize else { return .failure(tooLarge) }
        do {
            return .success(try ExtendedJSON.document(from: line))
        } catch let error as ExtendedJSONError {
            return .failure(error)
        } catch {
            return .failure(ExtendedJSONError(describe(error)))
        }
    }

    /// A decoding error in a line: what the decoder found wrong, not its Swift dump.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as ExtendedJSONError: error.description
        case DecodingError.dataCorrupted(let context): context.underlyingError.map { "\($0.localizedDescription)" } ?? context.debugDescription
        case let error as DecodingError: "\(error)"
        default: error.localizedDescription
        }
    }
}
