import ArgumentParser
import Foundation
import PostlyImport
import PostlyModels

/// `postly-import`: moves a Flask/MongoDB Postly's users, posts, comments and likes into
/// the suite through each service's import route. The token comes from the environment.
@main
struct PostlyImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postly-import",
        abstract: "Import a Flask/MongoDB Postly from mongoexport files (Extended JSON, one document a line or --jsonArray).",
        discussion: "POSTLY_IMPORT_TOKEN (environment) must be the services' import token. Exit codes: 0 done, 1 done with rejected documents, "
            + "2 bad input, 3 a service unreachable or refusing the token after 5 retries (run again to resume).")

    @Option(help: "mongoexport of the users collection") var users: String
    @Option(help: "mongoexport of the posts collection (comments embedded)") var posts: String
    @Option(help: "mongoexport of the post_likes collection") var likes: String
    @Option(help: "base URL of the auth service (its own port, not the gateway)") var auth: String
    @Option(name: .customLong("posts-url"), help: "base URL of the posts service") var postsURL: String
    @Option(name: .customLong("comments-url"), help: "base URL of the comments service") var commentsURL: String
    @Option(help: "where the run records its progress, to resume") var state: String
    @Option(help: "where the JSON report is written") var report: String
    @Flag(name: .customLong("dry-run"), help: "read and normalize, write the report, send nothing") var dryRun = false
    @Option(name: .customLong("max-errors"), help: "bad lines tolerated before the input counts as bad") var maxErrors = 100

    /// As ArgumentParser's, but a usage error exits 2 (bad input), the specification's code,
    /// rather than 64; `--help` still exits 0.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if let importCommand = command as? PostlyImportCommand {
                try await importCommand.run()
            } else {
                try command.run()  // --help
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let usage = exitCode(for: error) != .success
            let message = fullMessage(for: error) + "\n"
            (usage ? FileHandle.standardError : FileHandle.standardOutput).write(Data(message.utf8))
            Foundation.exit(usage ? 2 : 0)
        }
    }

    func run() async throws {
        let token = Secret(ProcessInfo.processInfo.environment["POSTLY_IMPORT_TOKEN"] ?? "")
        var run = ImportRun(
            usersPath: users, postsPath: posts, likesPath: likes,
            targets: .init(auth: auth, posts: postsURL, comments: commentsURL, token: token), statePath: state, reportPath: report)
        run.dryRun = dryRun
        run.maxErrors = maxErrors
        let code = await run.run()
        if code != 0 { throw ExitCode(code) }
    }
}
