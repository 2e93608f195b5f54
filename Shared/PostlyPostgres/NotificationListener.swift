import Foundation
import Logging
import NIOPosix
import Synchronization

/// Waits for notifications on a thread of its own (`poll` on the connection's socket blocks).
final class NotificationListener: Sendable {
    private let channel: String
    private let connection: PostgresConnection
    private let logger: Logger
    private let thread = NIOThreadPool(numberOfThreads: 1)
    private let stopped = Atomic(false)

    init(channel: String, configuration: PostgresConfiguration, logger: Logger) {
        self.channel = channel
        var configuration = configuration
        configuration.applicationName += " listener"
        self.connection = PostgresConnection(configuration: configuration)
        self.logger = logger
    }

    func start(onListening: @escaping @Sendable () -> Void, _ deliver: @escaping @Sendable (String) -> Void) {
        thread.start()
        thread.submit { [self] state in
            guard case .active = state else { return }
            listen(onListening: onListening, deliver)
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        // The loop notices within one poll interval; the thread is joined asynchronously.
        thread.shutdownGracefully { _ in }
    }

    private func listen(onListening: @Sendable () -> Void, _ deliver: @Sendable (String) -> Void) {
        // A quoted identifier: the channel name is text, never SQL.
        let statement = "LISTEN \"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        var listening = false
        var backoff = 50
        var loggedOutage = false
        while !stopped.load(ordering: .relaxed) {
            do {
                if !listening {
                    guard !channel.utf8.contains(0) else {
                        logger.error("cannot listen to a channel whose name contains a NUL byte")
                        return
                    }
                    try connection.runScript(statement)
                    listening = true
                    onListening()
                    backoff = 50
                    if loggedOutage { logger.info("listening again", metadata: ["channel": "\(channel)"]) }
                    loggedOutage = false
                }
                for payload in try connection.waitForNotifications(timeout: 100) { deliver(payload) }
            } catch {
                listening = false
                connection.close()
                if !loggedOutage {
                    logger.warning("lost the listening connection, reconnecting", metadata: ["channel": "\(channel)", "error": "\(error)"])
                    loggedOutage = true
                }
                // Back off, but keep noticing a stop request.
                var waited = 0
                while waited < backoff, !stopped.load(ordering: .relaxed) {
                    usleep(20_000)
                    waited += 20
                }
                backoff = min(backoff * 2, 1000)
            }
        }
        connection.close()
    }
}
