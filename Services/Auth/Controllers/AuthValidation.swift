import Foundation
import PostlyModels
import PostlyService

/// The contract's rules for names, emails and passwords.
enum AuthValidation {
    /// At most 100 characters and 400 bytes: the name rides in every access token, which must
    /// stay far below the gateway's 8 KiB header limit.
    static let nameLimit = TextLimit(characters: 100)
    static let minimumPasswordLength = 8
    /// Far above any real password; every byte counts (`PasswordHasher` pre-hashes).
    static let maximumPasswordLength = 1000

    /// Characters nobody sees or that reorder what is shown (zero-width, bidirectional
    /// controls, other format characters): the tools of a look-alike address.
    static func hasInvisibleCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let properties = scalar.properties
            return properties.isDefaultIgnorableCodePoint || properties.isBidiControl
                || properties.generalCategory == .format || properties.generalCategory == .control
        }
    }

    static let invisibleCharacters = "must not contain invisible or bidirectional control characters"

    /// One `@`, a non-empty local part, a dotted domain, no white space, at most 254 bytes
    /// (RFC 5321 counts octets; a count of characters let one carry thousands of combining
    /// marks, past what the unique index can hold).
    static func isValidEmail(_ email: String) -> Bool {
        guard email.utf8.count <= 254, !email.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            && (labels.last?.count ?? 0) >= 2
    }

    static func validateRegistration(name: String?, email: String?, password: String?) throws -> (name: String, email: String, password: String) {
        var errors: [String: String] = [:]
        let name = name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if TextLimit.isBlank(name) {
            errors["name"] = "must not be empty"
        } else if let problem = nameLimit.problem(with: name) {
            errors["name"] = problem
        }
        let written = email ?? ""
        let email = EmailAddress.normalized(written)
        if email.isEmpty {
            errors["email"] = "must not be empty"
        } else if hasInvisibleCharacters(written) {
            errors["email"] = invisibleCharacters
        } else if !isValidEmail(email) {
            errors["email"] = "must be a valid email address"
        }
        let password = password ?? ""
        // bcrypt stops at a NUL: "\u{0}abcdefg" would sign in as "\u{0}".
        if password.contains("\u{0}") {
            errors["password"] = TextLimit.nulCharacters
        } else if password.count < minimumPasswordLength {
            errors["password"] = "must be at least \(minimumPasswordLength) characters"
        } else if password.count > maximumPasswordLength {
            errors["password"] = "must be at most \(maximumPasswordLength) characters"
        }
        guard errors.isEmpty else { throw APIError.invalidFields(errors) }
        return (name, email, password)
    }
}
