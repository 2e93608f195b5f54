/// What a run did, written to `--report` and summarized on stdout: counts per collection,
/// every normalization applied (`fixes`) and every document not imported, with its reason.
/// A resumed run's counts cover the whole import.
public struct ImportReport: Codable, Equatable, Sendable {
    /// The collections in the order they are imported.
    public enum Collection: String, Codable, CaseIterable, Sendable {
        case users, posts, comments, likes
    }

    public struct Counts: Codable, Equatable, Sendable {
        public var read = 0
        public var created = 0
        public var existing = 0
        public var merged = 0
        public var rejected = 0
        public var orphan = 0
        public var duplicate = 0
    }

    public struct CountsByCollection: Codable, Equatable, Sendable {
        public var users = Counts()
        public var posts = Counts()
        public var comments = Counts()
        public var likes = Counts()

        public subscript(collection: Collection) -> Counts {
            get {
                switch collection {
                case .users: users
                case .posts: posts
                case .comments: comments
                case .likes: likes
                }
            }
            set {
                switch collection {
                case .users: users = newValue
                case .posts: posts = newValue
                case .comments: comments = newValue
                case .likes: likes = newValue
                }
            }
        }
    }

    /// One input file: comments come inside the posts file, so there are three.
    public struct Source: Codable, Equatable, Sendable {
        public var file: String
        public var sha256: String
        public var lines: Int
    }

    public struct Sources: Codable, Equatable, Sendable {
        public var users: Source
        public var posts: Source
        public var likes: Source
    }

    /// The password hashes of the imported users, by what will verify them at login.
    public struct Passwords: Codable, Equatable, Sendable {
        public var scrypt = 0
        public var pbkdf2 = 0
        public var bcrypt = 0
        /// `plain`, salted md5/sha1, scrypt over the bounds, anything unparsable: login answers 401.
        public var unverifiable = 0
    }

    /// One application of a normalization rule.
    public struct Fix: Codable, Equatable, Sendable {
        public var collection: Collection
        public var id: String
        public var field: String
        public var rule: String
        public var from: ExtendedJSON
        public var to: ExtendedJSON
    }

    /// A document not imported: refused here (`line` set) or by its service.
    public struct Rejection: Codable, Equatable, Sendable {
        public var collection: Collection
        public var line: Int?
        public var id: String?
        public var reason: String
    }

    public var runId: String
    public var source: Sources
    public var counts = CountsByCollection()
    public var passwords = Passwords()
    public var fixes: [Fix] = []
    public var rejected: [Rejection] = []

    /// Exit 1 when any document was rejected, else 0.
    public var exitCode: Int32 { rejected.isEmpty ? 0 : 1 }

    /// The printed summary: a line per collection, then the passwords and the totals.
    public var summary: String {
        var lines = ["postly-import run \(runId)"]
        for collection in Collection.allCases {
            let c = counts[collection]
            lines.append(
                "  \(collection.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) read \(c.read), created \(c.created), existing \(c.existing), "
                    + "merged \(c.merged), rejected \(c.rejected), orphan \(c.orphan), duplicate \(c.duplicate)")
        }
        lines.append(
            "  passwords scrypt \(passwords.scrypt), pbkdf2 \(passwords.pbkdf2), bcrypt \(passwords.bcrypt), unverifiable \(passwords.unverifiable)")
        lines.append("  \(fixes.count) fixes, \(rejected.count) rejected documents")
        return lines.joined(separator: "\n")
    }
}
