import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A Server-Sent Events client over a real socket, for watching a stream as a browser would:
/// what arrived (events with their arrival time, comment lines) and whether the server ended it.
final class EventStreamClient: Sendable {
    struct Event: Sendable, Hashable {
        var event: String?
        var id: String?
        var data: String
        var receivedAt: ContinuousClock.Instant
    }

    struct Received: Sendable {
        var status: Int?
        var headers: [String: String] = [:]
        var events: [Event] = []
        var comments: [String] = []
        /// The id a client that follows the SSE specification comes back with (Chromium's
        /// `EventSource`): the last one the stream set, by an event with data or without.
        var lastEventId: String?
        /// The server finished the response (or closed the connection).
        var ended = false
    }

    let channel: any Channel
    private let handler: Handler

    private init(channel: any Channel, handler: Handler) {
        self.channel = channel
        self.handler = handler
    }

    var status: Int? { handler.received.withLock { $0.status } }
    var headers: [String: String] { handler.received.withLock { $0.headers } }
    var events: [Event] { handler.received.withLock { $0.events } }
    var comments: [String] { handler.received.withLock { $0.comments } }
    var lastEventId: String? { handler.received.withLock { $0.lastEventId } }
    var ended: Bool { handler.received.withLock { $0.ended } }

    /// Sends `GET path` to localhost:port and returns once the response head arrived; throws
    /// when the connection is refused or ends before the head. `localhost`, as the test server
    /// binds it: where it resolves to `::1` first, that is where the server listens.
    static func open(port: Int, path: String = "/api/notifications/stream", headers: [String: String] = [:]) async throws -> EventStreamClient {
        let head = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        let handler = Handler(head: head)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: "localhost", port: port).get()
        } catch {
            // The handler may never have been added: the promise must not outlive us unfulfilled.
            handler.completeHead(error)
            throw error
        }
        var requestHeaders = HTTPHeaders([("Host", "localhost:\(port)"), ("Accept", "text/event-stream")])
        for (name, value) in headers { requestHeaders.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: requestHeaders)), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        try await head.futureResult.get()
        return EventStreamClient(channel: channel, handler: handler)
    }

    /// Leaves, as a client that closes its tab.
    func close() async {
        try? await channel.close().get()
    }

    /// Parses the body as it arrives (lines, events at blank lines).
    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart

        // Touched on the channel's event loop only, apart from `received` and `headCompleted`
        // behind their locks.
        let received = Mutex(Received())
        private let head: EventLoopPromise<Void>
        private let headCompleted = Atomic(false)
        private var pending: [UInt8] = []
        private var event: String?
        private var id: String?
        private var data: [String] = []

        init(head: EventLoopPromise<Void>) {
            self.head = head
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let response):
                received.withLock { received in
                    received.status = Int(response.status.code)
                    for (name, value) in response.headers { received.headers[name.lowercased()] = value }
                }
                completeHead(nil)
            case .body(let buffer):
                pending += buffer.readableBytesView
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    take(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            case .end:
                finish()
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            completeHead(ChannelError.eof)
            finish()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            completeHead(error)
            context.close(promise: nil)
        }

        /// A channel closed before it was ever active delivers no `channelInactive`, only this.
        func handlerRemoved(context: ChannelHandlerContext) {
            completeHead(ChannelError.eof)
        }

        /// Completes the head once, from whichever path gets there first.
        func completeHead(_ error: (any Error)?) {
            guard headCompleted.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
            if let error { head.fail(error) } else { head.succeed() }
        }

        private func take(_ line: String) {
            if line.isEmpty {
                if let id { received.withLock { $0.lastEventId = id } }
                if !data.isEmpty {
                    let event = Event(event: event, id: id, data: data.joined(separator: "\n"), receivedAt: .now)
                    received.withLock { $0.events.append(event) }
                }
                (event, id, data) = (nil, nil, [])
            } else if line.hasPrefix(":") {
                received.withLock { $0.comments.append(String(line.dropFirst())) }
            } else if line.hasPrefix("event: ") {
                event = String(line.dropFirst(7))
            } else if line.hasPrefix("id: ") {
                id = String(line.dropFirst(4))
            } else if line.hasPrefix("data: ") {
                data.append(String(line.dropFirst(6)))
            }
        }

        private func finish() {
            received.withLock { $0.ended = true }
        }
    }
}
