import Foundation
import Logging
import PostlyModels

/// One JSON object per line on standard output: time, level, service, message, and the
/// metadata (the request id among it). Secrets never reach it: nothing logs them.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    /// The trace's ids inside a span, when tracing is on.
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    let label: String
    let output: FileHandle

    public init(label: String, level: Logger.Level, output: FileHandle = .standardOutput) {
        self.label = label
        self.logLevel = level
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [:]
        let provided = metadataProvider?.get() ?? [:]
        for (key, value) in provided.merging(metadata, uniquingKeysWith: { $1 }).merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = "\(value)"
        }
        object["time"] = Timestamp.format(Date())
        object["level"] = event.level.rawValue
        object["logger"] = label
        object["message"] = "\(event.message)"
        guard var line = try? Self.encoder.encode(object) else { return }
        line.append(0x0A)
        // A line that cannot be written (a full disk, a closed pipe) is lost, not the process:
        // `write(_:)` traps on any error.
        try? output.write(contentsOf: line)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
