import Foundation
import PostlyPostgres

/// The checksum of every released migration, by service and version, in
/// `Tests/Fixtures/migrations.sha256`. A released migration is never edited (a database that
/// applied it would not apply the edit, and `Migrations.apply` refuses to start): each
/// service's tests hold its schema to this record.
public enum MigrationChecksums {
    public static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/migrations.sha256")

    /// One line of the record: `<service> <version> <checksum> <name>`.
    public static func line(service: String, _ migration: Migration) -> String {
        "\(service) \(migration.version) \(migration.checksum) \(migration.name)"
    }

    /// What is wrong with `migrations` of `service` against the record (`record`, the file's
    /// text unless given), one sentence each: a recorded migration whose text changed or that
    /// is gone, a migration not recorded yet.
    public static func problems(service: String, migrations schema: Migrations, record: String? = nil) throws -> [String] {
        var recorded: [Int: String] = [:]
        for line in try (record ?? String(contentsOf: file, encoding: .utf8)).split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count >= 3, fields[0] == service, let version = Int(fields[1]) else { continue }
            recorded[version] = String(fields[2])
        }
        var problems: [String] = []
        for migration in schema.migrations {
            guard let checksum = recorded.removeValue(forKey: migration.version) else {
                problems.append("migration \(migration.version) of \(service) has no recorded checksum: record it in \(file.lastPathComponent): \(line(service: service, migration))")
                continue
            }
            if checksum != migration.checksum {
                problems.append("migration \(migration.version) of \(service) was edited after release: restore its text and add a new migration instead")
            }
        }
        for version in recorded.keys.sorted() {
            problems.append("migration \(version) of \(service) was released and is gone: restore it")
        }
        return problems
    }
}
