@testable import ImagesService
import Testing
import TestSupport

/// Migrations of the images service that were released are never edited: their texts keep
/// the checksums recorded in `Tests/Fixtures/migrations.sha256`.
@Suite struct MigrationChecksumTests {
    @Test func releasedMigrationsKeepTheirRecordedChecksums() throws {
        let problems = try MigrationChecksums.problems(service: "images", migrations: schema)
        #expect(problems.isEmpty, Testing.Comment(rawValue: problems.joined(separator: "\n")))
    }
}
