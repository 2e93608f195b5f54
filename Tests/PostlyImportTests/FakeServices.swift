import Foundation
import PostlyImport
import Synchronization

/// The services' import routes as a unit test needs them: each natural id created once, then
/// `existing`, the ids in `refusing` rejected; optionally failing from a given request on. A fake only for the CLI's logic:
/// the system test (deploy/system_test.py) runs the real services.
final class FakeServices: ImportTransport {
    struct State {
        var seen: Set<String> = []
        var requests: [(url: String, count: Int, bytes: Int)] = []
        /// From this request on (0-based), every request fails with `failure`.
        var failFrom: Int?
    }

    enum Failure { case unreachable, status(Int) }

    let state = Mutex(State())
    let failure: Failure
    let refusing: Set<String>

    init(failFrom: Int? = nil, failure: Failure = .unreachable, refusing: Set<String> = []) {
        self.failure = failure
        self.refusing = refusing
        state.withLock { $0.failFrom = failFrom }
    }

    var requests: [(url: String, count: Int, bytes: Int)] { state.withLock { $0.requests } }

    func post(_ url: String, token: String, body: [UInt8]) async throws -> (status: Int, body: [UInt8]) {
        let object = try JSONSerialization.jsonObject(with: Data(body)) as! [String: Any]
        let key = String(url.split(separator: "/").last!)
        let documents = object[key] as! [[String: Any]]
        // As the services name them: a like by its post and user.
        let ids = documents.map { key == "likes" ? "\($0["postId"]!) \($0["userId"]!)" : "\(($0["userId"] ?? $0["_id"])!)" }
        let fails = state.withLock { state -> Bool in
            if let from = state.failFrom, state.requests.count >= from {
                state.requests.append((url, 0, body.count))
                return true
            }
            state.requests.append((url, documents.count, body.count))
            return false
        }
        if fails {
            switch failure {
            case .unreachable: throw URLError(.cannotConnectToHost)
            case .status(let status): return (status, Array(#"{"title":"no"}"#.utf8))
            }
        }
        let refused = ids.filter(refusing.contains), accepted = ids.filter { !refusing.contains($0) }
        let created = state.withLock { state in accepted.filter { state.seen.insert("\(key)/\($0)").inserted }.count }
        let answer = ImportRecords.Answer(
            created: created, existing: accepted.count - created, rejected: refused.map { .init(id: $0, reason: "refused") })
        return (200, Array(try JSONEncoder().encode(answer)))
    }
}
