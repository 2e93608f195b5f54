import Foundation
import NIOPosix
import Synchronization

/// Host names looked up through the system's resolver, which blocks, and hangs as long as a
/// name server that does not answer: on threads of its own (not NIO's pool, where the Kafka
/// commits and key generation wait their turn), an answer within `timeout`, and at most
/// `pendingLimit` lookups queued or running. Past either, a name has no addresses, and its
/// request is refused as unresolvable (a delivery is tried again later).
final class HostResolver: Sendable {
    static let shared = HostResolver()

    private let threads: NIOThreadPool
    private let timeout: Duration
    private let pendingLimit: Int
    private let pending = Atomic(0)
    private let lookup: @Sendable (String) -> [String]

    init(
        threads: Int = 4, timeout: Duration = .seconds(5), pendingLimit: Int = 64,
        lookup: @escaping @Sendable (String) -> [String] = HostResolver.systemLookup
    ) {
        self.threads = NIOThreadPool(numberOfThreads: threads)
        self.threads.start()
        self.timeout = timeout
        self.pendingLimit = pendingLimit
        self.lookup = lookup
    }

    /// The addresses of `host` (an address literal is its own); none when the lookup failed,
    /// took longer than `timeout` (or `limit`, when shorter), or had to wait behind
    /// `pendingLimit` others.
    func addresses(of host: String, within limit: Duration? = nil) async -> [String] {
        guard pending.add(1, ordering: .relaxed).newValue <= pendingLimit else {
            pending.subtract(1, ordering: .relaxed)
            return []
        }
        return await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            let deadline = Task { [timeout] in
                try? await Task.sleep(for: min(timeout, limit ?? timeout))
                answer.give([])
            }
            threads.submit { [self] state in
                defer {
                    pending.subtract(1, ordering: .relaxed)
                    deadline.cancel()
                }
                guard case .active = state else { return answer.give([]) }
                answer.give(lookup(host))
            }
        }
    }

    /// The lookup's answer or the deadline's, whichever comes first.
    private final class FirstAnswer: Sendable {
        private let continuation: Mutex<CheckedContinuation<[String], Never>?>

        init(_ continuation: CheckedContinuation<[String], Never>) {
            self.continuation = Mutex(continuation)
        }

        func give(_ addresses: [String]) {
            continuation.withLock { $0.take() }?.resume(returning: addresses)
        }
    }

    /// `getaddrinfo` and the numeric form of each address.
    @Sendable static func systemLookup(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}
