import Foundation
import NIOPosix
import Synchronization

/// Host names looked up through the system's resolver, which blocks, and hangs as long as a
/// name server that does not answer: on threads of its own (not NIO's pool, where the Kafka
/// commits and key generation wait their turn), an answer within `timeout`, one lookup of a
/// name at a time (those who ask while it runs share its answer), and at most `pendingLimit`
/// names queued or running. A lookup that ran a second (or half the wait, when shorter) without
/// an answer found no addresses: its name server is slow. One that ran less, or never, is
/// `busy`, which says nothing of the name.
final class HostResolver: Sendable {
    static let shared = HostResolver()

    enum Answer: Equatable, Sendable {
        /// What the lookup found: none when the name does not resolve, or when its lookup ran
        /// a second (or half the wait, when shorter) without an answer.
        case addresses([String])
        /// Not looked up in time: other names held the threads for (nearly) the whole wait, or
        /// too many waited. Slow name servers of other hosts made these count as the name's
        /// failures.
        case busy
    }

    /// How long a lookup must have run without an answer to be the name's fault.
    static let fairTry: Duration = .seconds(1)

    /// One caller waiting for a lookup: its answer, and the timer that gives it none.
    private struct Waiter: Sendable {
        let answer: FirstAnswer
        let timer: Task<Void, Never>
    }

    /// One name's lookup, queued or running, with who waits for it.
    private struct Pending: Sendable {
        let started = Started()
        var waiters: [Waiter] = []
    }

    /// When a thread took the lookup up.
    private final class Started: Sendable {
        private let instant = Mutex<ContinuousClock.Instant?>(nil)

        func mark() { instant.withLock { $0 = .now } }

        /// Whether the lookup has run `duration` by now.
        func hasRun(_ duration: Duration) -> Bool {
            instant.withLock { $0.map { $0.duration(to: .now) >= duration } ?? false }
        }
    }

    private let threads: NIOThreadPool
    private let timeout: Duration
    private let pendingLimit: Int
    /// The names being looked up, queued or running.
    private let lookups = Mutex<[String: Pending]>([:])
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

    /// The addresses of `host` (an address literal is its own), waiting no longer than
    /// `timeout` (or `limit`, when shorter). The deliveries to one host whose name server is
    /// slow once held every thread, and every other host's lookup timed out behind them.
    func addresses(of host: String, within limit: Duration? = nil) async -> Answer {
        await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            let wait = min(timeout, limit ?? timeout)
            enum Turn { case joined, first, refused }
            let turn = lookups.withLock { lookups -> Turn in
                let isFirst = lookups[host] == nil
                guard !isFirst || lookups.count < pendingLimit else { return .refused }
                var pending = lookups[host] ?? Pending()
                let started = pending.started
                pending.waiters.append(Waiter(answer: answer, timer: Task {
                    // Cancelled when the lookup answered: that answer stands.
                    guard (try? await Task.sleep(for: wait)) != nil else { return }
                    answer.give(started.hasRun(min(wait / 2, Self.fairTry)) ? .addresses([]) : .busy)
                }))
                lookups[host] = pending
                return isFirst ? .first : .joined
            }
            switch turn {
            case .joined: break
            case .refused: answer.give(.busy)
            case .first:
                threads.submit { [self] state in
                    var addresses: [String] = []
                    if case .active = state {
                        lookups.withLock { $0[host]?.started }?.mark()
                        addresses = lookup(host)
                    }
                    for waiter in lookups.withLock({ $0.removeValue(forKey: host)?.waiters ?? [] }) {
                        waiter.answer.give(.addresses(addresses))
                        waiter.timer.cancel()
                    }
                }
            }
        }
    }

    /// The lookup's answer or the wait's end, whichever comes first.
    private final class FirstAnswer: Sendable {
        private let continuation: Mutex<CheckedContinuation<Answer, Never>?>

        init(_ continuation: CheckedContinuation<Answer, Never>) {
            self.continuation = Mutex(continuation)
        }

        func give(_ answer: Answer) {
            continuation.withLock { $0.take() }?.resume(returning: answer)
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
