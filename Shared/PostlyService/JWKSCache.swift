import ExtrasBase64
import Foundation
import JWTKit
import Synchronization

/// A JSON Web Key Set fetched from one issuer and kept: both the access-token verifier and
/// the Google ID-token verifier look keys up here.
///
/// A token naming a key the set does not know (the issuer rotated its keys) makes it fetch
/// again, at most once per `unknownKeyRefetchInterval` so garbage tokens cannot hammer the
/// issuer; callers that arrive while a fetch is in flight wait for that one fetch. Keys older
/// than `lifetime` still answer at once while they are fetched again behind (a stalled issuer
/// must not hold every sign-in), and are kept when that fails.
public final class JWKSCache: Sendable {
    /// The key set cannot be fetched, and no key that the token names is known.
    public struct Unavailable: Error {
        public init() {}
    }

    /// Returns the keys to use, already checked and completed (an issuer's own rules).
    public typealias Fetch = @Sendable () async throws -> [JWK]

    struct State: Sendable {
        var keys = JWTKeyCollection()
        var keyIds: Set<String> = []
        var fetchedAt: ContinuousClock.Instant?
        var lastAttempt: ContinuousClock.Instant?
        var lastAttemptFailed = false
        /// Callers waiting for the fetch in flight; `nil` while none is.
        var waiters: [CheckedContinuation<Void, Never>]?
    }

    private let lifetime: Duration?
    private let unknownKeyRefetchInterval: Duration
    private let fetch: Fetch
    private let state = Mutex(State())

    /// - Parameter lifetime: how long fetched keys are used before they are fetched again;
    ///   `nil` when the owner refreshes them itself.
    public init(lifetime: Duration?, unknownKeyRefetchInterval: Duration, fetch: @escaping Fetch) {
        self.lifetime = lifetime
        self.unknownKeyRefetchInterval = unknownKeyRefetchInterval
        self.fetch = fetch
    }

    /// Whether any key is known.
    public var hasKeys: Bool { state.withLock { !$0.keyIds.isEmpty } }

    /// Keys that know `kid`, or `nil` when the issuer does not have it; throws `Unavailable`
    /// when the set cannot be fetched and `kid` is not among the keys already known.
    public func keys(for kid: String) async throws -> JWTKeyCollection? {
        enum Decision { case use(JWTKeyCollection?), useAndFetchBehind(JWTKeyCollection), fetch, wait, unavailable }
        let (lifetime, refetchInterval) = (self.lifetime, unknownKeyRefetchInterval)
        let decision = state.withLock { state -> Decision in
            let known = state.keyIds.contains(kid)
            let fresh = state.fetchedAt.map { at in lifetime.map { at.duration(to: .now) < $0 } ?? true } ?? false
            if known, fresh { return .use(state.keys) }
            if known {
                // Stale: fetched again behind, once per interval, whatever the fetch does.
                let due = state.waiters == nil && state.lastAttempt.map { $0.duration(to: .now) >= refetchInterval } ?? true
                if due { state.lastAttempt = .now }
                return due ? .useAndFetchBehind(state.keys) : .use(state.keys)
            }
            if state.waiters != nil { return .wait }
            if let last = state.lastAttempt, last.duration(to: .now) < refetchInterval {
                // Asked a moment ago: an unknown kid now is not the issuer's.
                return state.lastAttemptFailed ? .unavailable : .use(nil)
            }
            return .fetch
        }
        switch decision {
        case .use(let keys): return keys
        case .useAndFetchBehind(let keys):
            Task { await self.refresh() }
            return keys
        case .unavailable: throw Unavailable()
        case .fetch: await refresh()
        case .wait: await waitForFetchInFlight()
        }
        return try state.withLock { state in
            if state.keyIds.contains(kid) { return state.keys }
            if state.lastAttemptFailed { throw Unavailable() }
            return nil
        }
    }

    /// Fetches the set now, or waits for the fetch already in flight. A failed fetch keeps
    /// the keys known so far; `refreshOrThrow()` says whether it failed.
    public func refresh() async {
        _ = await refreshReportingError()
    }

    /// As `refresh()`, throwing what made the fetch fail.
    public func refreshOrThrow() async throws {
        if let error = await refreshReportingError() { throw error }
    }

    private func refreshReportingError() async -> (any Error)? {
        let startsFetch = state.withLock { state -> Bool in
            guard state.waiters == nil else { return false }
            state.waiters = []
            state.lastAttempt = .now
            return true
        }
        guard startsFetch else {
            await waitForFetchInFlight()
            return state.withLock { $0.lastAttemptFailed } ? Unavailable() : nil
        }
        var failure: (any Error)?
        var fetched: (keys: JWTKeyCollection, ids: Set<String>)?
        do {
            let jwks = try await fetch()
            let keys = JWTKeyCollection()
            for jwk in jwks { try await keys.add(jwk: jwk) }
            fetched = (keys, Set(jwks.compactMap { $0.keyIdentifier?.string }))
        } catch {
            failure = error
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if let fetched {
                state.keys = fetched.keys
                state.keyIds = fetched.ids
                state.fetchedAt = .now
            }
            state.lastAttemptFailed = failure != nil
            // The interval counts from the answer: a fetch that hung for it is not tried again at once.
            state.lastAttempt = .now
            defer { state.waiters = nil }
            return state.waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
        return failure
    }

    private func waitForFetchInFlight() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state -> Bool in
                guard state.waiters != nil else { return false }
                state.waiters?.append(continuation)
                return true
            }
            // The fetch finished between the caller's look and now.
            if !waiting { continuation.resume() }
        }
    }
}

/// The header of a compact JWS, read before its signature is checked to pick the key.
public struct JWTHeader: Decodable, Sendable {
    public var alg: String
    public var kid: String?

    /// `nil` unless `token` has three parts and its first is base64url JSON with an `alg`.
    public init?(of token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = try? Base64.decode(bytes: parts[0].utf8, options: [.base64UrlAlphabet, .omitPaddingCharacter]),
            let header = try? JSONDecoder().decode(JWTHeader.self, from: Data(bytes))
        else { return nil }
        self = header
    }
}
