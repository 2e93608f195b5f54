import Foundation
import Logging
import PostlyCurl

/// A whole `postly-import` run from its options: read and normalize, send (unless a dry
/// run), write the report, print the summary; returns the exit code (0 done, 1 done with
/// rejected documents, 2 bad input, 3 a service unreachable or refusing the token).
public struct ImportRun: Sendable {
    public var usersPath: String
    public var postsPath: String
    public var likesPath: String
    public var targets: Importer.Targets
    public var statePath: String
    public var reportPath: String
    public var dryRun = false
    /// More bad lines than this over the three files is bad input (exit 2).
    public var maxErrors = 100
    public var retry = Importer.RetryPolicy()

    public init(usersPath: String, postsPath: String, likesPath: String, targets: Importer.Targets, statePath: String, reportPath: String) {
        (self.usersPath, self.postsPath, self.likesPath) = (usersPath, postsPath, likesPath)
        (self.targets, self.statePath, self.reportPath) = (targets, statePath, reportPath)
    }

    /// Reads and normalizes the input; bad input throws.
    public func plan() throws(ImportFailure) -> ImportPlan {
        let users = try DumpFile(path: usersPath), posts = try DumpFile(path: postsPath), likes = try DumpFile(path: likesPath)
        let plan = ImportPlanner.plan(users: users, posts: posts, likes: likes, runId: UUID().uuidString.lowercased())
        if plan.badLines.count > maxErrors {
            throw .badInput("\(plan.badLines.count) bad lines, more than --max-errors \(maxErrors); the first: \(plan.badLines[0])")
        }
        return plan
    }

    /// Runs through `transport`, or a libcurl client of its own when none is given.
    public func run(transport: (any ImportTransport)? = nil) async -> Int32 {
        if let transport { return await run(through: transport) }
        let client = CurlHTTPClient(logger: Logger(label: "postly-import"))
        let code = await run(through: CurlImportTransport(client: client))
        await client.shutdown()
        return code
    }

    private func run(through transport: any ImportTransport) async -> Int32 {
        do {
            let plan = try plan()
            var report = plan.report
            // Before anything is sent: found after a whole import, the run ended with its
            // state done and its counts unwritten, and a rerun found nothing left to count.
            let folder = (reportPath as NSString).deletingLastPathComponent
            guard FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder) else {
                throw ImportFailure.badInput("\(reportPath): its folder cannot be written")
            }
            if !dryRun {
                guard !targets.token.value.isEmpty else { throw ImportFailure.badInput("POSTLY_IMPORT_TOKEN is not set") }
                var importer = Importer(plan: plan, targets: targets, transport: transport, statePath: statePath)
                importer.retry = retry
                importer.progress = { line in FileHandle.standardError.write(Data("postly-import: \(line)\n".utf8)) }
                report = try await importer.run()
            }
            try write(report)
            print(report.summary)
            return report.exitCode
        } catch let failure as ImportFailure {
            FileHandle.standardError.write(Data("\(failure)\n".utf8))
            return failure.exitCode
        } catch {
            FileHandle.standardError.write(Data("postly-import: \(error)\n".utf8))
            return 2
        }
    }

    private func write(_ report: ImportReport) throws(ImportFailure) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try encoder.encode(report).write(to: URL(fileURLWithPath: reportPath), options: .atomic)
        } catch {
            throw .badInput("\((reportPath as NSString).lastPathComponent): cannot be written: \(error.localizedDescription)")
        }
    }
}
