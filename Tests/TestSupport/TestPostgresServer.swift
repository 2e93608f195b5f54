import Foundation
import PostlyPostgres

/// A PostgreSQL cluster of a test's own, in a temporary folder on a free port, that the test
/// can stop and start (the shared one from `deploy/test.sh` must stay up for everyone else).
///
/// As root, `initdb` and `pg_ctl` run as the `postgres` user, which owns the folder.
public final class TestPostgresServer: Sendable {
    public struct CommandFailed: Error, CustomStringConvertible {
        public let command: String
        public let status: Int32
        public var description: String { "\(command) exited with \(status)" }
    }

    public let port: Int
    public let directory: URL
    private let binaries: URL

    private init(port: Int, directory: URL, binaries: URL) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
    }

    /// Creates the cluster (`initdb`, about a second) and starts it.
    public static func start() async throws -> TestPostgresServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postly-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = TestPostgresServer(
            port: try freePort(), directory: directory, binaries: URL(fileURLWithPath: try TestEnvironment.postgresBinaries))
        if getuid() == 0 {
            try await run("/bin/chown", ["postgres", directory.path])
        }
        try await server.runAsPostgres(
            "initdb", ["-D", server.dataDirectory, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        try await server.start()
        return server
    }

    public func configuration(poolSize: Int = 4, connectTimeout: Int = 2) -> PostgresConfiguration {
        PostgresConfiguration(
            host: "127.0.0.1", port: port, user: "postgres", database: "postgres", poolSize: poolSize,
            connectTimeout: connectTimeout, applicationName: "postly-tests")
    }

    public func start() async throws {
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        try await runAsPostgres("pg_ctl", ["-D", dataDirectory, "-l", directory.appendingPathComponent("postgres.log").path, "-w", "-o", options, "start"])
    }

    /// Stops the server at once (`-m fast`: clients are disconnected).
    public func stop() async throws {
        try await runAsPostgres("pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"])
    }

    /// Stops the server if it runs and deletes its folder.
    public func destroy() async {
        try? await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private var dataDirectory: String { directory.appendingPathComponent("data").path }

    private func runAsPostgres(_ tool: String, _ arguments: [String]) async throws {
        let executable = binaries.appendingPathComponent(tool).path
        if getuid() == 0 {
            try await Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        } else {
            try await Self.run(executable, arguments)
        }
    }

    /// Runs a command to its end, its output discarded. posix_spawn and waitpid rather than
    /// Foundation's Process, whose exit notification got lost when tests started clusters at once.
    private static func run(_ executable: String, _ arguments: [String]) async throws {
        let command = ([executable] + arguments).joined(separator: " ")
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CommandFailed(command: command, status: spawned) }
        let child = pid
        let status = await withCheckedContinuation { continuation in
            // waitpid blocks: not on the cooperative pool.
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1, errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        // Exited normally (no signal) with code 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else { throw CommandFailed(command: command, status: status) }
    }

    /// A port the kernel just handed out, hence free (for a moment).
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
