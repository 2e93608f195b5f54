#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raw loopback sockets for the failures a well-behaved server cannot produce.
enum LoopbackSockets {
    struct SocketError: Error {
        let call: String
        let errno: Int32
    }

    /// A listener on 127.0.0.1 whose accept queue is full and never drained. Linux drops
    /// further SYNs to it, so a connection attempt hangs until the client gives up: a
    /// connect timeout without leaving loopback.
    final class FullBacklogListener {
        let port: Int
        private var descriptors: [Int32] = []

        init() throws {
            let listener = try LoopbackSockets.tcpSocket()
            descriptors.append(listener)
            try LoopbackSockets.bindToAnyPort(listener)
            guard listen(listener, 0) == 0 else { throw SocketError(call: "listen", errno: errno) }
            port = try LoopbackSockets.port(of: listener)
            // Backlog 0 holds one established connection; a few more make sure it is full.
            for _ in 0..<3 {
                let filler = try LoopbackSockets.tcpSocket()
                descriptors.append(filler)
                _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
                var address = LoopbackSockets.loopback(port: port)
                let result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard result == 0 || errno == EINPROGRESS else { throw SocketError(call: "connect", errno: errno) }
            }
            usleep(100_000)
        }

        deinit {
            for descriptor in descriptors { close(descriptor) }
        }
    }

    /// A listener on 127.0.0.1 that never accepts or reads: the kernel completes a client's
    /// TCP connection, and nothing answers what the client sends (a TLS handshake that stalls).
    final class SilentListener {
        let port: Int
        private let descriptor: Int32

        init() throws {
            descriptor = try LoopbackSockets.tcpSocket()
            try LoopbackSockets.bindToAnyPort(descriptor)
            guard listen(descriptor, 16) == 0 else { throw SocketError(call: "listen", errno: errno) }
            port = try LoopbackSockets.port(of: descriptor)
        }

        deinit { close(descriptor) }
    }

    /// A loopback port nothing listens on: connecting to it is refused at once.
    static func closedPort() throws -> Int {
        let descriptor = try tcpSocket()
        defer { close(descriptor) }
        try bindToAnyPort(descriptor)
        return try port(of: descriptor)
    }

    private static func tcpSocket() throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SocketError(call: "socket", errno: errno) }
        return descriptor
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        return address
    }

    private static func bindToAnyPort(_ descriptor: Int32) throws {
        var address = loopback(port: 0)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw SocketError(call: "bind", errno: errno) }
    }

    private static func port(of descriptor: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw SocketError(call: "getsockname", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
