import NIOPosix

extension NIOThreadPool {
    /// Runs blocking work on the pool. Unlike `runIfActive`, work already submitted is not
    /// skipped when the task is cancelled: a ROLLBACK must still reach the server.
    func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { state in
                guard case .active = state else {
                    continuation.resume(throwing: DatabaseError.closed)
                    return
                }
                continuation.resume(with: Result(catching: body))
            }
        }
    }
}
