import Foundation
import Hummingbird
import PostlyEvents
import PostlyModels
import PostlyService

/// `POST /internal/import/users` (`postly-import`; only with `POSTLY_IMPORT_TOKEN`, behind
/// `ImportGate`): users of an earlier deployment, insert-only by id, each with an imported
/// `user.registered`, the whole batch in one transaction.
struct UsersImportController {
    let accounts: any AccountRepository
    let writes: WriteUnit

    struct Batch: Decodable {
        var users: [ImportedUser]
    }

    /// Far longer than any hash Werkzeug or bcrypt write.
    static let maximumHashLength = 1024
    /// Bytes of an id, which an index holds (Google's subjects are 21 digits).
    static let maximumIdBytes = 255

    func addRoutes(to imports: RouterGroup<PostlyRequestContext>?) {
        imports?.post("users", use: importUsers)
    }

    @Sendable func importUsers(_ request: Request, context: PostlyRequestContext) async throws -> ImportOutcome {
        let batch = try await request.decodeImportBatch(as: Batch.self, context: context) { $0.users.count }
        return try await writes.write { transaction in
            var outcome = ImportOutcome()
            for var user in batch.users {
                user.email = EmailAddress.normalized(user.email)
                if let problem = Self.problem(with: user) {
                    outcome.reject(user.userId, problem)
                    continue
                }
                outcome.count(try await accounts.importUser(user, in: transaction), id: user.userId)
            }
            return outcome
        }
    }

    /// Why the user cannot be stored at all; nil when it can. Each is this user's rejection,
    /// never the batch's failure (PostgreSQL refuses a NUL, and an index an id of kilobytes).
    static func problem(with user: ImportedUser) -> String? {
        if user.userId.isEmpty { return "userId is empty" }
        for (field, id) in [("userId", user.userId), ("googleSubject", user.googleSubject ?? "")] where id.utf8.count > maximumIdBytes {
            return "\(field) is longer than \(maximumIdBytes) bytes"
        }
        let texts = [
            ("userId", user.userId), ("name", user.name), ("passwordHash", user.passwordHash ?? ""), ("googleSubject", user.googleSubject ?? ""),
            ("profilePicture", user.profilePicture ?? ""),
        ]
        for (field, text) in texts where text.contains("\u{0}") { return "\(field) contains a NUL character" }
        if user.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "name is empty" }
        if !AuthValidation.isValidEmail(user.email) { return "email is not a valid email address" }
        if (user.passwordHash?.count ?? 0) > maximumHashLength { return "passwordHash is longer than \(maximumHashLength) characters" }
        if user.googleSubject?.isEmpty == true { return "googleSubject is empty" }
        return nil
    }
}
