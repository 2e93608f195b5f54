import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostlyPostgres
import PostlyService

/// A service's routing table held against its OpenAPI document: the one routing test of every
/// service builds its router (without a database) and asks this what disagrees.
public enum RouteTable {
    /// The disagreements between `router` and `document`, empty when there are none: a route
    /// that is not documented or the other way round; an operation documented as needing a
    /// token (`security` without `{}`) that answers a request without one with anything but
    /// 401; one documented without `security` that answers 401.
    public static func disagreements(_ router: Router<PostlyRequestContext>, document: OpenAPIDocument) async throws -> [String] {
        let documented = try operations(in: document)
        let routed = Set(router.routes.map { "\($0.method.rawValue) \(openAPIPath($0.path.description))" })
        var found: [String] = []
        found += routed.subtracting(documented.keys).sorted().map { "\($0) is routed but not documented" }
        found += Set(documented.keys).subtracting(routed).sorted().map { "\($0) is documented but not routed" }
        found += try await Application(router: router).test(.router) { client in
            var found: [String] = []
            for (operation, security) in documented.sorted(by: { $0.key < $1.key }) where routed.contains(operation) && security != .optional {
                let parts = operation.split(separator: " ", maxSplits: 1)
                let method = HTTPRequest.Method(String(parts[0]))!
                let uri = String(parts[1]).replacingOccurrences(of: #"\{[^}]+\}"#, with: "x", options: .regularExpression)
                let status = try await client.execute(uri: uri, method: method) { $0.status }
                switch security {
                case .required where status != .unauthorized:
                    found.append("\(operation) needs a token but answered \(status.code) without one")
                case .notNeeded where status == .unauthorized:
                    found.append("\(operation) needs no token but answered 401 without one")
                default:
                    break
                }
            }
            return found
        }
        return found
    }

    /// A kit whose database and broker cannot be reached: routers build on it, and a route
    /// that reaches for them fails at once. With an import token, so the internal import routes
    /// are routed and held to the document too.
    public static func offlineKit(_ name: String) throws -> ServiceKit {
        var configuration = ServiceConfiguration(name: name, defaultPort: 0, environment: ["POSTLY_IMPORT_TOKEN": "routing-test"])
        configuration.postgres.port = 1
        configuration.kafka = try testConfiguration(brokers: "127.0.0.1:1")
        var logger = Logger(label: "postly.routing-test")
        logger.logLevel = .critical
        return try ServiceKit(configuration, schema: Migrations([]), logger: logger)
    }

    enum Security { case required, optional, notNeeded }

    /// "METHOD /path/{parameter}" of every documented operation, with what it asks of a caller.
    static func operations(in document: OpenAPIDocument) throws -> [String: Security] {
        let object = try JSONSerialization.jsonObject(with: Data(document.json.utf8)) as? [String: Any]
        let paths = object?["paths"] as? [String: [String: Any]] ?? [:]
        var operations: [String: Security] = [:]
        for (path, item) in paths {
            for (method, operation) in item where ["get", "head", "put", "post", "delete", "patch"].contains(method) {
                let security = (operation as? [String: Any])?["security"] as? [[String: Any]]
                operations["\(method.uppercased()) \(path)"] = security.map { $0.contains(where: \.isEmpty) ? .optional : .required } ?? .notNeeded
            }
        }
        return operations
    }

    /// `/api/posts/:id` as OpenAPI writes it: `/api/posts/{id}`.
    static func openAPIPath(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : "/" + path
        return absolute.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }
}
