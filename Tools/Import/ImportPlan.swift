/// The whole input read and normalized: the documents each service receives, in order, and
/// the report's counts, fixes and rejections so far. The same input always gives the same
/// plan, so a resumed run finds its batches where the first run left them.
public struct ImportPlan: Sendable {
    /// A record with where it came from: its line, and the file offset after it.
    public struct Planned<Record: Codable & Sendable>: Sendable {
        public var record: Record
        public var line: Int
        public var endOffset: Int
    }

    public var users: [Planned<ImportRecords.User>] = []
    public var posts: [Planned<ImportRecords.Post>] = []
    /// Users merged into another (one email): their old ids keep answering.
    public var aliases: [ImportRecords.Alias] = []
    public var comments: [Planned<ImportRecords.Comment>] = []
    public var likes: [Planned<ImportRecords.Like>] = []
    /// The report before any service answered: `read`, `merged`, `orphan`, `duplicate`,
    /// `rejected` counted here, every fix, every document refused here.
    public var report: ImportReport
    /// Lines that are not Extended JSON (`posts.json: line 17: invalid Extended JSON: ...`),
    /// which `--max-errors` bounds.
    public var badLines: [String] = []
}
