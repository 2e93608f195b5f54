import Dispatch
import Foundation
import Testing

@testable import SearchService

/// The lock around the index: searches read it at the same time, and the follower's change is
/// not held off by searches that come after it.
@Suite struct ReadWriteLockTests {
    @Test func twoReadersReadAtOnce() {
        let lock = ReadWriteLock(0)
        let firstIsReading = DispatchSemaphore(value: 0), secondIsReading = DispatchSemaphore(value: 0)
        let bothRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            lock.read { _ in
                firstIsReading.signal()
                // Returns in time only if the second reader got in while this one reads.
                if secondIsReading.wait(timeout: .now() + 5) == .success { bothRead.signal() }
            }
        }
        firstIsReading.wait()
        Thread.detachNewThread {
            lock.read { (_: Int) -> Void in secondIsReading.signal() }
        }
        #expect(bothRead.wait(timeout: .now() + 10) == .success, "the second reader waited for the first")
    }

    @Test func aWaitingWriterGoesBeforeReadersThatCameAfterIt() {
        let lock = ReadWriteLock("before")
        let firstIsReading = DispatchSemaphore(value: 0), releaseFirst = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let seenByLaterReader = Seen()
        Thread.detachNewThread {
            lock.read { _ in
                firstIsReading.signal()
                releaseFirst.wait()
            }
            done.signal()
        }
        firstIsReading.wait()
        Thread.detachNewThread {
            lock.write { $0 = "after" }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.2)  // the writer now waits for the first reader
        Thread.detachNewThread {
            lock.read { (value: String) -> Void in seenByLaterReader.value = value }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.2)
        releaseFirst.signal()
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(seenByLaterReader.value == "after")
    }

    /// Written by one thread, read after `done` says it finished.
    final class Seen: @unchecked Sendable {
        var value: String?
    }
}
