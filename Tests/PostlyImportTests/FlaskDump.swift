import Foundation
import PostlyImport

/// The committed Flask/MongoDB fixture (`Tests/Fixtures/flask-dump`, made by its make_dump.py)
/// and what the import must make of it (`expected.json`, written by the same script).
enum FlaskDump {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/flask-dump")

    /// `relaxed`, `canonical` or `array` (`--jsonArray`).
    static func plan(_ form: String) throws -> ImportPlan {
        let path = { (name: String) in folder.appendingPathComponent("\(form)/\(name).json").path }
        return ImportPlanner.plan(
            users: try DumpFile(path: path("users")), posts: try DumpFile(path: path("posts")), likes: try DumpFile(path: path("post_likes")),
            runId: "test")
    }

    struct Expected: Decodable {
        struct Login: Decodable {
            var email: String
            var kind: String
            var userId: String
        }
        struct Post: Decodable {
            var _id: String
            var slug: String
            var status: String
            var views: Int64
            var likes: Int
            var createdAt: String
            var authorId: String
            var coverImage: String?
            var comments: [String]
        }
        struct Likes: Decodable {
            var read: Int
            var imported: Int
            var duplicate: Int
            var orphan: Int
        }
        var logins: [Login]
        var aliases: [ImportRecords.Alias]
        var users: Int
        var posts: [Post]
        var comments: Int
        var orphanComments: Int
        var likes: Likes
    }

    static func expected() throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: folder.appendingPathComponent("expected.json")))
    }
}

/// A scratch folder of files for one test, removed when it is released.
final class ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("postly-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let path = url.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
