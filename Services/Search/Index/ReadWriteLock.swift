import Glibc

/// A value that many threads read at once and one changes at a time: the index, which every
/// search reads for the whole of its ranking and only the follower changes. Under a `Mutex`
/// searches took turns, so more cores could not have made search much faster (the ranking is up
/// to a quarter of an answer's work; at 100,000 posts on two cores prefix queries waited in the
/// kernel for about 7 % of search's CPU, and answered 4-8 % more a second with this lock). A copy
/// taken under a short lock would instead make the follower's next change copy the index's
/// arrays. Writers go first when both wait, so a stream of searches cannot hold the follower
/// off. Swift's `Synchronization` has no such lock.
final class ReadWriteLock<Value: Sendable>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Reads the value, while other readers may too.
    func read<Result>(_ body: (Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Changes the value, alone.
    func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
