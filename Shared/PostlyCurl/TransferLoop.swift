import CCurl
import Foundation
import Logging
import Synchronization

/// Drives every transfer of one client through one curl multi handle, on a thread of its own
/// that sleeps in `curl_multi_poll` until a socket is ready, a timeout is due, or
/// `curl_multi_wakeup` announces a new transfer or a cancellation.
final class TransferLoop: Sendable {
    /// The multi handle. Only the loop thread calls into it, except `curl_multi_wakeup`, which
    /// libcurl allows from any thread; that is called with `state` locked and only while
    /// `exited` is false, so never after the loop thread has cleaned the handle up.
    private struct MultiHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private struct Submission: Sendable {
        let transfer: PreparedTransfer
        let continuation: CheckedContinuation<CurlHTTPClient.Response, any Error>
    }

    /// What callers hand to the loop thread.
    private struct State: ~Copyable {
        /// Submitted, not yet picked up by the loop thread.
        var incoming: [Submission] = []
        /// Picked up by the loop thread and not yet reported finished.
        var active: Set<TransferID> = []
        /// Active transfers to abort.
        var cancellations: [TransferID] = []
        /// No new transfers; the thread exits when the active ones are done.
        var stopping = false
        var exited = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let multi: MultiHandle
    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        precondition(LibCurl.initialized, "curl_global_init failed")
        guard let pointer = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        multi = MultiHandle(pointer: pointer)
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "postly-curl"
        thread.start()
    }

    func submit(_ transfer: PreparedTransfer, continuation: CheckedContinuation<CurlHTTPClient.Response, any Error>) {
        let accepted = state.withLock { state in
            guard !state.stopping else { return false }
            state.incoming.append(Submission(transfer: transfer, continuation: continuation))
            curl_multi_wakeup(multi.pointer)
            return true
        }
        if !accepted {
            transfer.easy.cleanup()
            continuation.resume(throwing: CurlError.shutdown)
        }
    }

    /// Aborts the transfer `id` if it is still waiting or running; does nothing otherwise.
    func cancel(_ id: TransferID) {
        let waiting: Submission? = state.withLock { state in
            if let index = state.incoming.firstIndex(where: { $0.transfer.id == id }) {
                return state.incoming.remove(at: index)
            }
            // Once the thread has exited, the multi handle is freed: nothing runs to cancel.
            if !state.exited, state.active.contains(id) {
                state.cancellations.append(id)
                curl_multi_wakeup(multi.pointer)
            }
            return nil
        }
        if let waiting {
            waiting.transfer.easy.cleanup()
            waiting.continuation.resume(throwing: CancellationError())
        }
    }

    /// Asks the thread to exit once the transfers in flight are done, without waiting for it.
    func stop() {
        state.withLock { state in
            guard !state.stopping, !state.exited else { return }
            state.stopping = true
            curl_multi_wakeup(multi.pointer)
        }
    }

    /// Asks the thread to exit once the transfers in flight are done, and waits for it.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = state.withLock { state in
                guard !state.exited else { return true }
                state.shutdownWaiters.append(continuation)
                state.stopping = true
                curl_multi_wakeup(multi.pointer)
                return false
            }
            if exited { continuation.resume() }
        }
    }

    // MARK: The loop thread

    private func run() {
        // The transfers in the multi handle, by easy handle. Only this thread sees it.
        var running: [UnsafeMutableRawPointer: RunningTransfer] = [:]
        var finished: [TransferID] = []
        while true {
            let (incoming, cancellations, stopping) = state.withLock { state in
                state.active.subtract(finished)
                let incoming = state.incoming
                state.incoming.removeAll()
                state.active.formUnion(incoming.map(\.transfer.id))
                let cancellations = state.cancellations
                state.cancellations.removeAll()
                return (incoming, cancellations, state.stopping)
            }
            finished.removeAll()

            for submission in incoming {
                let transfer = RunningTransfer(submission.transfer, continuation: submission.continuation)
                let attached = transfer.attach()
                let added = attached == CURLE_OK ? curl_multi_add_handle(multi.pointer, transfer.transfer.easy.pointer) : CURLM_OK
                if attached != CURLE_OK || added != CURLM_OK {
                    let code = attached != CURLE_OK ? Int(attached.rawValue) : Int(added.rawValue)
                    finish(transfer, with: .failure(CurlError.transport(code: code, message: "could not start the transfer")))
                    finished.append(transfer.transfer.id)
                } else {
                    running[transfer.transfer.easy.pointer] = transfer
                }
            }

            for id in cancellations {
                guard let (easy, transfer) = running.first(where: { $0.value.transfer.id == id }) else { continue }
                running[easy] = nil
                curl_multi_remove_handle(multi.pointer, easy)
                finish(transfer, with: .failure(CancellationError()))
                finished.append(id)
            }

            var stillRunning: Int32 = 0
            curl_multi_perform(multi.pointer, &stillRunning)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi.pointer, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                // The message does not outlive curl_multi_remove_handle: read it first.
                let code = message.pointee.data.result
                guard let transfer = running.removeValue(forKey: easy) else { continue }
                curl_multi_remove_handle(multi.pointer, easy)
                finish(transfer, with: transfer.outcome(code).mapError { $0 as any Error })
                finished.append(transfer.transfer.id)
            }

            if stopping && running.isEmpty { break }
            curl_multi_poll(multi.pointer, nil, 0, 1000, nil)
        }

        let waiters = state.withLock { state in
            state.exited = true
            state.active.removeAll()
            let waiters = state.shutdownWaiters
            state.shutdownWaiters.removeAll()
            return waiters
        }
        curl_multi_cleanup(multi.pointer)
        for waiter in waiters { waiter.resume() }
    }

    /// Frees the transfer's handle and resumes its caller. Runs with no lock held.
    private func finish(_ transfer: RunningTransfer, with outcome: Result<CurlHTTPClient.Response, any Error>) {
        transfer.transfer.easy.cleanup()
        switch outcome {
        case .success(let response):
            logger.debug("HTTP request done", metadata: [
                "http.request": "\(transfer.transfer.summary)", "http.status": "\(response.status)",
            ])
        case .failure(let error):
            logger.debug("HTTP request failed", metadata: [
                "http.request": "\(transfer.transfer.summary)", "error": "\(error)",
            ])
        }
        transfer.continuation.resume(with: outcome)
    }
}
