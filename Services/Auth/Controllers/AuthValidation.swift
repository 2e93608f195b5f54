import Foundation
import PostlyService

/// The contract's rules for names, emails and passwords.
enum AuthValidation {
    static let nameLength = 1...100
    static let minimumPasswordLength = 8
    /// Far above any real password; bcrypt reads only the first 72 bytes anyway.
    static let maximumPasswordLength = 1024

    /// Emails are trimmed and compared case-insensitively: stored lower-cased.
    static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// One `@`, a non-empty local part, a dotted domain, no white space, at most 254 characters.
    static func isValidEmail(_ email: String) -> Bool {
        guard email.count <= 254, !email.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            && (labels.last?.count ?? 0) >= 2
    }

    static func validateRegistration(name: String?, email: String?, password: String?) throws -> (name: String, email: String, password: String) {
        var errors: [String: String] = [:]
        let name = name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if name.isEmpty {
            errors["name"] = "must not be empty"
        } else if !nameLength.contains(name.count) {
            errors["name"] = "must be at most \(nameLength.upperBound) characters"
        }
        let email = normalizedEmail(email ?? "")
        if email.isEmpty {
            errors["email"] = "must not be empty"
        } else if !isValidEmail(email) {
            errors["email"] = "must be a valid email address"
        }
        let password = password ?? ""
        if password.count < minimumPasswordLength {
            errors["password"] = "must be at least \(minimumPasswordLength) characters"
        } else if password.count > maximumPasswordLength {
            errors["password"] = "must be at most \(maximumPasswordLength) characters"
        }
        guard errors.isEmpty else { throw APIError.invalidFields(errors) }
        return (name, email, password)
    }
}
