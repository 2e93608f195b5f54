import Foundation

/// An email as it is stored and compared everywhere (the auth service's accounts, the
/// importer's merging of users): trimmed, NFKC-normalized and case-folded, so spellings that
/// look alike (composed or not, full-width, another case) are one address.
public enum EmailAddress {
    public static func normalized(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCompatibilityMapping
            .folding(options: .caseInsensitive, locale: nil)
            .precomposedStringWithCompatibilityMapping
    }
}
