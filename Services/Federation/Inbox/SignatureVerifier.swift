import Foundation

/// Who signed an inbound request: the `Signature` checked the way Mastodon checks it, by the
/// key its `keyId` names, fetched again once when it does not verify (the actor may have
/// rotated its key). Throws `SignatureError`, whose reason the 401 names.
struct SignatureVerifier: Sendable {
    let actors: RemoteActors
    let window: ClosedRange<TimeInterval>
    /// How long one check's key fetches may take together: a hostile `keyId` can chain four
    /// fetches and a refetch of four, each up to the request timeout.
    let keyFetchTime: Duration
    let clock: @Sendable () -> Date

    /// Throws `SignatureError` (401; 503 for a key fetch deferred), or the database's errors (503).
    func signer(of request: SignedRequest, body: [UInt8]) async throws -> RemoteActor {
        guard let header = request.header("signature") else { throw SignatureError.missing }
        let signature = try HTTPSignature(header: header)
        let signingString = try signature.checkedSigningString(of: request, body: body, now: clock(), window: window)
        let deadline = ContinuousClock.now + keyFetchTime
        var actor = try await actors.actor(keyId: signature.keyId, by: deadline)
        if try !verifies(signature, signingString, with: actor) {
            actor = try await actors.actor(keyId: signature.keyId, refresh: true, by: deadline)
            guard try verifies(signature, signingString, with: actor) else { throw SignatureError.badSignature }
        }
        return actor
    }

    private func verifies(_ signature: HTTPSignature, _ signingString: String, with actor: RemoteActor) throws(SignatureError) -> Bool {
        guard let key = try? PublicKey(pem: actor.publicKeyPEM) else { throw .keyUnavailable("the published key is not an RSA key of 2048 bits or more") }
        return signature.isValid(signingString: signingString, key: key)
    }
}
