extension Database {
    /// The payloads of `NOTIFY channel` as they arrive, on a connection of their own.
    ///
    /// When the connection is lost (a server restart), it is opened again and `LISTEN`ed
    /// again; notifications sent in between are lost, so a consumer should also look for
    /// work it missed now and then, or start over from `onStartingOver`, which runs each
    /// time `LISTEN` took effect (the first time too), and when a notification was dropped
    /// because the reader fell 10,000 behind. The sequence ends when the iterating task is
    /// cancelled.
    public func listen(channel: String, onStartingOver: @escaping @Sendable () -> Void = {}) -> AsyncStream<String> {
        let listener = NotificationListener(channel: channel, configuration: configuration, logger: logger)
        return AsyncStream(bufferingPolicy: .bufferingNewest(10_000)) { continuation in
            continuation.onTermination = { _ in listener.stop() }
            listener.start(onListening: onStartingOver) { payload in
                if case .dropped = continuation.yield(payload) { onStartingOver() }
            }
        }
    }
}

