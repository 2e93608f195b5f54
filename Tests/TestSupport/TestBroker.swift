import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A tansu broker of a test's own, on a free port, for tests that stop and restart the
/// broker. tansu keeps everything in memory: a restart loses topics, records and
/// committed offsets.
public final class TestBroker: Sendable {
    public let port: Int
    private let process = Mutex<Process?>(nil)

    /// `127.0.0.1:PORT`, for `KafkaConfiguration.brokers`.
    public var brokers: String { "127.0.0.1:\(port)" }

    private init(port: Int) {
        self.port = port
    }

    /// Starts a broker and returns once it accepts connections.
    public static func start() async throws -> TestBroker {
        let broker = TestBroker(port: try freePort())
        try await broker.start()
        return broker
    }

    /// Starts the broker again on the same port (empty: tansu's storage is memory only).
    public func start() async throws {
        let binary = try TestEnvironment.tansuBinary
        let listener = "tcp://127.0.0.1:\(port)"
        try process.withLock { running in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["broker", "--listener-url", listener, "--advertised-listener-url", listener]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            running = process
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.accepts(port: port) {
            guard ContinuousClock.now < deadline else { throw BrokerDidNotStart(port: port) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Kills the broker (SIGKILL, as a crash would; tansu's SIGTERM waits for its
    /// clients to disconnect) and waits until it is gone.
    public func stop() {
        process.withLock { running in
            guard let process = running else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            running = nil
        }
    }

    deinit {
        stop()
    }

    public struct BrokerDidNotStart: Error, CustomStringConvertible {
        public let port: Int
        public var description: String { "tansu did not accept connections on port \(port)" }
    }

    /// A port nothing listens on now (the kernel's pick for port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
