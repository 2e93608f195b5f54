import Foundation
import NIOPosix
import Synchronization

/// Host names looked up through the system's resolver, which blocks, and hangs as long as a
/// name server that does not answer: on threads of its own (not NIO's pool, where the Kafka
/// commits and key generation wait their turn), an answer within `timeout`, one lookup of a
/// name at a time (those who ask while it runs share its answer), and at most `pendingLimit`
/// names queued or running. Past either, a name has no addresses, and its request is refused
/// as unresolvable (a delivery is tried again later).
final class HostResolver: Sendable {
    static let shared = HostResolver()

    /// One caller waiting for a lookup: its answer, and the timer that gives it none.
    private struct Waiter: Sendable {
        let answer: FirstAnswer
        let timer: Task<Void, Never>
    }

    private let threads: NIOThreadPool
    private let timeout: Duration
    private let pendingLimit: Int
    /// The names being looked up, queued or running, with who waits for each.
    private let lookups = Mutex<[String: [Waiter]]>([:])
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
    /// `pendingLimit` other names. The deliveries to one host whose name server is slow once
    /// held every thread, and every other host's lookup timed out behind them.
    func addresses(of host: String, within limit: Duration? = nil) async -> [String] {
        await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            let waiter = Waiter(answer: answer, timer: Task { [timeout] in
                // Cancelled when the lookup answered: that answer stands.
                guard (try? await Task.sleep(for: min(timeout, limit ?? timeout))) != nil else { return }
                answer.give([])
            })
            enum Turn { case joined, first, refused }
            let turn = lookups.withLock { lookups -> Turn in
                if lookups[host] != nil {
                    lookups[host]!.append(waiter)
                    return .joined
                }
                guard lookups.count < pendingLimit else { return .refused }
                lookups[host] = [waiter]
                return .first
            }
            switch turn {
            case .joined: break
            case .refused:
                answer.give([])
                waiter.timer.cancel()
            case .first:
                threads.submit { [self] state in
                    let addresses = if case .active = state { lookup(host) } else { [String]() }
                    for waiter in lookups.withLock({ $0.removeValue(forKey: host) ?? [] }) {
                        waiter.answer.give(addresses)
                        waiter.timer.cancel()
                    }
                }
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
