import CCurl
import Logging
import ServiceLifecycle

/// An async HTTP client over libcurl.
///
/// One thread of its own drives every transfer through one curl multi handle, so a request
/// never blocks the cooperative pool or an event loop, and many run at once. Cancelling the
/// awaiting task aborts its transfer.
///
/// Add it to the `ServiceGroup` before the services that use it (a group stops its services
/// in reverse order, so it stops after them), or call ``shutdown()`` when done. Both let
/// transfers in flight finish; later requests fail with ``CurlError/shutdown``.
public final class CurlHTTPClient: Service, Sendable {
    public let configuration: Configuration
    private let logger: Logger
    private let loop: TransferLoop

    public init(configuration: Configuration = .init(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.loop = TransferLoop(logger: logger)
        loop.start()
    }

    deinit {
        loop.stop()
    }

    /// Sends `request` and returns the final response, whatever its status.
    ///
    /// Throws ``CurlError`` when no response arrives within the limits, or
    /// `CancellationError` when the calling task is cancelled.
    public func execute(_ request: Request) async throws -> Response {
        let transfer = try PreparedTransfer(request, configuration: configuration)
        let id = transfer.id
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                loop.submit(transfer, continuation: continuation)
                // A cancellation that came before the submission found nothing to cancel.
                if Task.isCancelled { loop.cancel(id) }
            }
        } onCancel: {
            loop.cancel(id)
        }
    }

    /// Runs until graceful shutdown, then shuts the client down.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Refuses new requests, waits for the transfers in flight, and stops the client's thread.
    public func shutdown() async {
        await loop.shutdown()
    }
}
