import Foundation
import Logging
import PostlyEvents
import PostlyMarkdown
import PostlyModels
@testable import PostsService
import Testing
import TestSupport

/// Posts stored by the earlier renderer are rendered again once, with an event only for the
/// posts whose result changed.
@Suite struct ContentRerenderTests {
    @Test func postsRenderedBeforeAreRenderedAgainWithAnEventOnlyWhenTheyChange() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            let broken = try await api.create("Broken", content: "Intro paragraph.\n\n<script>alert(1)</script>\n\nOutro **bold**.", as: ada)
            let fine = try await api.create("Fine", content: "Just *words*.", as: ada)
            // What the earlier renderer stored: nothing after the raw HTML in the first post, and
            // no renderer's name in either (the column came after it).
            try await api.database.execute(
                "UPDATE posts SET content_html = '<p>Intro paragraph.</p>', excerpt = 'Intro paragraph.' WHERE id = \(broken.id)")
            try await api.database.execute("UPDATE posts SET rendered_by = NULL")
            let eventsBefore = try await Self.outboxEvents(api)
            // The running service holds the broken post in its read model.
            #expect(try await api.request(.get, "/api/posts/\(broken.id)").post().contentHtml == "<p>Intro paragraph.</p>")
            let rerender = ContentRerender(
                writes: WriteUnit(database: api.database, producer: "posts", logger: Logger(label: "test")), database: api.database)

            #expect(try await rerender.run() == 1)

            // The command is another process: the service hears of it and reads the post again.
            let shown = try await eventually(within: .seconds(1)) {
                try await api.request(.get, "/api/posts/\(broken.id)").post().contentHtml != "<p>Intro paragraph.</p>"
            }
            #expect(shown)
            let repaired = try await api.request(.get, "/api/posts/\(broken.id)").post()
            #expect(repaired.contentHtml?.hasSuffix("<p>Outro <strong>bold</strong>.</p>\n") == true)
            #expect(repaired.excerpt == "Intro paragraph. Outro bold.")
            #expect(repaired.version == broken.version && repaired.updatedAt == broken.updatedAt)
            let untouched = try await api.request(.get, "/api/posts/\(fine.id)").post()
            #expect(untouched.contentHtml == fine.contentHtml)

            let newEvents = try await Self.outboxEvents(api).dropFirst(eventsBefore.count)
            #expect(newEvents.map(\.type) == [.postUpdated])
            #expect(newEvents.first?.key == broken.id)
            #expect(newEvents.first?.sequence == 2)
            guard case .postUpdated(let snapshot)? = newEvents.first?.data else { Issue.record("not a post.updated"); return }
            #expect(snapshot.post.excerpt == "Intro paragraph. Outro bold.")

            // Once: a second run finds nothing to change.
            #expect(try await rerender.run() == 0)
            #expect(try await Self.outboxEvents(api).count == eventsBefore.count + 1)
        }
    }

    @Test func postsTheCurrentRendererMadeAreNotReadAgain() async throws {
        try await withPostsService { api in
            let ada = try await api.user("Ada Lovelace")
            let post = try await api.create("Current", content: "Made *now*.", as: ada)
            // Different HTML, but stored by the current renderer: a rerender must not even look.
            try await api.database.execute("UPDATE posts SET content_html = '<p>kept</p>' WHERE id = \(post.id)")
            let rerender = ContentRerender(
                writes: WriteUnit(database: api.database, producer: "posts", logger: Logger(label: "test")), database: api.database)
            #expect(try await rerender.run() == 0)
            #expect(try await api.database.query("SELECT content_html FROM posts WHERE id = \(post.id)")[0].decode("content_html", as: String.self) == "<p>kept</p>")
            // An edit of the content renders it with the current renderer, and says so.
            try await api.database.execute("UPDATE posts SET rendered_by = 'an older renderer' WHERE id = \(post.id)")
            try await api.request(.put, "/api/posts/\(post.id)", as: ada, json: #"{"content":"Made *again*."}"#)
            let rendered = try await api.database.query("SELECT rendered_by FROM posts WHERE id = \(post.id)")[0].decode("rendered_by", as: String?.self)
            #expect(rendered == Markdown.renderer)
        }
    }

    static func outboxEvents(_ api: PostsClient) async throws -> [Event] {
        try await api.database.query("SELECT payload FROM outbox ORDER BY id").map {
            try PostlyJSON.decoder().decode(Event.self, from: Data(try $0.decode("payload", as: [UInt8].self)))
        }
    }
}
