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

    /// Why the user cannot be stored at all; nil when it can.
    static func problem(with user: ImportedUser) -> String? {
        let stored = ImportCheck.problem(
            ids: ["userId": user.userId, "googleSubject": user.googleSubject],
            texts: ["name": user.name, "email": user.email, "passwordHash": user.passwordHash, "profilePicture": user.profilePicture])
        if let stored { return stored }
        if user.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "name is empty" }
        if !AuthValidation.isValidEmail(user.email) { return "email is not a valid email address" }
        if (user.passwordHash?.count ?? 0) > maximumHashLength { return "passwordHash is longer than \(maximumHashLength) characters" }
        return nil
    }
}
