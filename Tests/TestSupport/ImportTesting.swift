import Foundation
import HTTPTypes
import PostlyModels
import PostlyPostgres

/// What the tests of the internal import routes share: the token they configure, a batch sent
/// as `postly-import` sends it, and the events a service wrote into its outbox.
public enum ImportTesting {
    /// The `POSTLY_IMPORT_TOKEN` of the tests that turn the import routes on.
    public static let token = "import-token-for-tests"

    /// The events in the service's outbox, in the order they were written.
    public static func outboxEvents(in database: Database) async throws -> [Event] {
        try await database.query("SELECT payload FROM outbox ORDER BY id").map {
            try PostlyJSON.decoder().decode(Event.self, from: Data(try $0.decode("payload", as: [UInt8].self)))
        }
    }

    /// A JSON text of `object`.
    public static func json(_ object: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}

extension ServiceTestHarness {
    /// `POST path` with `json`, the import token as bearer unless `token` says otherwise (nil: none).
    public func importBatch(_ path: String, json: String, token: String? = ImportTesting.token) async throws -> TestAnswer {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await request(.post, path, json: json, headers: headers)
    }
}

extension TestAnswer {
    /// The answer of an import route.
    public func importOutcome() throws -> ImportOutcome {
        try PostlyJSON.decoder().decode(ImportOutcome.self, from: body)
    }
}
