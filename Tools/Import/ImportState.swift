import Foundation

/// Where a run is, rewritten and fsynced after every acknowledged batch (`--state`): the
/// collection, its last acknowledged batch and the file offset after it, and what the services
/// answered so far. A run started again with it skips what was acknowledged; a batch
/// acknowledged but not yet recorded is sent again and answers `existing`.
public struct ImportState: Codable, Equatable, Sendable {
    public var runId: String
    /// The SHA-256 of the users, posts and likes files: a state is only resumed on its input.
    public var sources: [String]
    public var collection: ImportReport.Collection
    public var byteOffset: Int
    public var batchNo: Int
    /// `created`, `existing` and `rejected` as the services answered them, every collection.
    public var counts: ImportReport.CountsByCollection
    /// The documents the services refused so far.
    public var rejected: [ImportReport.Rejection]
    /// The import finished: a later run starts over (and finds everything `existing`).
    public var done: Bool

    public static func load(from path: String) throws(ImportFailure) -> ImportState? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(ImportState.self, from: data)
        } catch {
            throw .badInput("\((path as NSString).lastPathComponent): not a state file of postly-import (\(error.localizedDescription)); remove it to start over")
        }
    }

    /// Replaces the file at `path` atomically and durably: a temporary file fsynced, renamed
    /// over it, and the folder fsynced so the rename survives a crash.
    public func save(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let file = FileHandle(forWritingAtPath: temporary) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        try file.write(contentsOf: encoder.encode(self))
        try file.synchronize()
        try file.close()
        guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let folder = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}
