import HTTPTypes
import Hummingbird

extension Router {
    /// A known method on a routed path that does not take it answers 405 with `Allow` naming
    /// the methods it does take (RFC 9110 §15.5.6), not Hummingbird's 404, which would say
    /// the path does not exist. Call once every route is on the router.
    func answerMethodNotAllowed() {
        for (_, routes) in Dictionary(grouping: routes, by: \.path.description) {
            let routed = Set(routes.map(\.method))
            let allow = routes.map(\.method.rawValue).sorted().joined(separator: ", ")
            for method in Self.knownMethods where !routed.contains(method) {
                on(routes[0].path, method: method, responder: CallbackResponder { _, _ in
                    throw HTTPError(.methodNotAllowed, headers: [.allow: allow])
                })
            }
        }
    }

    /// RFC 9110's methods that name an action on a resource, PATCH (RFC 5789) and QUERY
    /// (the HTTP working group's safe method with a body). Anything else stays a 404.
    static var knownMethods: [HTTPRequest.Method] {
        [.get, .head, .post, .put, .patch, .delete, .options, .trace, HTTPRequest.Method("QUERY")!]
    }
}
