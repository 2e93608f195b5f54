/// What will verify a stored Werkzeug or bcrypt hash at login (the auth service's
/// `PasswordHasher`); the importer only counts them, the hash travels verbatim.
public enum PasswordKind: Equatable, Sendable {
    case scrypt, pbkdf2, bcrypt, unverifiable

    /// scrypt's bounds: above them one verification could take too much memory.
    static let maximumScryptN = 1 << 20, maximumScryptR = 16, maximumScryptP = 4

    public init(hash: String) {
        if ["$2a$", "$2b$", "$2y$", "$bcrypt-sha256$"].contains(where: hash.hasPrefix) {
            self = .bcrypt
            return
        }
        let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[1].isEmpty, !parts[2].isEmpty, parts[2].allSatisfy(\.isHexDigit) else {
            self = .unverifiable
            return
        }
        let method = parts[0].split(separator: ":").map(String.init)
        switch method.first {
        case "scrypt":
            guard method.count == 4, let n = Int(method[1]), let r = Int(method[2]), let p = Int(method[3]),
                n > 1, n & (n - 1) == 0, n <= Self.maximumScryptN, (1...Self.maximumScryptR).contains(r), (1...Self.maximumScryptP).contains(p)
            else {
                self = .unverifiable
                return
            }
            self = .scrypt
        case "pbkdf2":
            guard method.count == 3, ["sha256", "sha512"].contains(method[1]), let rounds = Int(method[2]), rounds > 0 else {
                self = .unverifiable
                return
            }
            self = .pbkdf2
        default:
            self = .unverifiable
        }
    }
}
