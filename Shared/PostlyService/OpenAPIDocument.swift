import Foundation

/// A service's OpenAPI 3.1 document, served at `/openapi.json`: the service's own paths and
/// components, completed with what every service shares (`sharedOpenAPIComponents`: problem
/// documents, authors, comments, posts, paging) as far as it refers to them, and the
/// operations routes. A component the service declares itself wins over the shared one.
public struct OpenAPIDocument: Sendable {
    /// The whole document, as served.
    public let json: String

    /// `serviceDocument` is the service's own part; it must be a JSON object (a test reads
    /// every service's document).
    public init(_ serviceDocument: String) {
        guard var document = Self.object(serviceDocument), let shared = Self.object(sharedOpenAPIComponents) else {
            preconditionFailure("an OpenAPI document is not a JSON object")
        }
        var paths = document["paths"] as? [String: Any] ?? [:]
        paths.merge(shared["paths"] as? [String: Any] ?? [:]) { own, _ in own }
        document["paths"] = paths
        var components = document["components"] as? [String: Any] ?? [:]
        let sharedComponents = shared["components"] as? [String: Any] ?? [:]
        // Named by `security`, which is no `$ref`: every document has them.
        var schemes = components["securitySchemes"] as? [String: Any] ?? [:]
        schemes.merge(sharedComponents["securitySchemes"] as? [String: Any] ?? [:]) { own, _ in own }
        components["securitySchemes"] = schemes
        // Add each shared component the document refers to, until nothing new is referred to.
        var added = true
        while added {
            added = false
            for reference in Self.references(in: [paths, components]) {
                let parts = reference.split(separator: "/").map(String.init)
                guard parts.count == 4, parts[0] == "#", parts[1] == "components" else { continue }
                let (kind, name) = (parts[2], parts[3])
                var ofKind = components[kind] as? [String: Any] ?? [:]
                guard ofKind[name] == nil, let component = (sharedComponents[kind] as? [String: Any])?[name] else { continue }
                ofKind[name] = component
                components[kind] = ofKind
                added = true
            }
        }
        document["components"] = components
        let data = try! JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        json = String(decoding: data, as: UTF8.self)
    }

    private static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// Every `$ref` value inside `value`.
    private static func references(in value: Any) -> Set<String> {
        switch value {
        case let object as [String: Any]:
            var found = Set(object["$ref"].flatMap { $0 as? String }.map { [$0] } ?? [])
            for child in object.values { found.formUnion(references(in: child)) }
            return found
        case let array as [Any]:
            return array.reduce(into: Set<String>()) { $0.formUnion(references(in: $1)) }
        default:
            return []
        }
    }
}
