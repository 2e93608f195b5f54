import Foundation
import Logging
import PostlyCurl
import PostlyModels

/// Calls the image provider (Pexels or anything answering like it) with the key, and turns
/// its answer into what the service may pass on: a page in Pexels' shape with the key
/// removed wherever the upstream echoed it, and what its rate-limit headers said.
struct PexelsClient: Sendable {
    let baseURL: String
    let apiKey: Secret
    let timeout: Duration
    let httpClient: CurlHTTPClient
    let logger: Logger

    /// What `X-Ratelimit-*` said on a successful answer (a 429 carries none of them).
    struct RateLimit: Sendable, Equatable {
        var limit: Int?
        var remaining: Int?
        /// When the upstream's period rolls over.
        var reset: Date?
    }

    enum Outcome: Sendable {
        /// The page to answer, as JSON, and the rate-limit headers that came with it.
        case answered(body: [UInt8], rateLimit: RateLimit)
        case rateLimited
        case failed(UpstreamFailure)
        /// No connection was made: the provider never saw the request, and did not count it.
        case notSent(UpstreamFailure)
    }

    /// The largest answer accepted: 80 photos are about 100 KB.
    static let maxResponseBytes = 2 << 20

    func fetch(_ query: ImageQuery) async -> Outcome {
        let request = CurlHTTPClient.Request(
            method: "GET", url: baseURL + query.upstreamPathAndQuery,
            headers: [("Authorization", apiKey.value), ("Accept", "application/json"), ("User-Agent", "postly-images")],
            timeout: timeout, connectTimeout: min(timeout, .seconds(1)), maxResponseBytes: Self.maxResponseBytes)
        let response: CurlHTTPClient.Response
        do {
            response = try await httpClient.execute(request)
        } catch CurlError.connectTimeout {
            logger.warning("the image provider took no connection in time")
            return .notSent(.timeout)
        } catch CurlError.connectFailed(let reason) {
            logger.warning("the image provider is unreachable", metadata: ["error": "\(redacted(reason))"])
            return .notSent(.unreachable)
        } catch CurlError.timeout {
            logger.warning("the image provider did not answer in time")
            return .failed(.timeout)
        } catch CurlError.responseTooLarge {
            logger.warning("the image provider answered more than a page of photos can be")
            return .failed(.malformedAnswer)
        } catch {
            logger.warning("the image provider is unreachable", metadata: ["error": "\(redacted(String(describing: error)))"])
            return .failed(.unreachable)
        }
        switch response.status {
        case 200:
            do {
                var page = try Self.decoder.decode(PhotoPage.self, from: Data(response.body))
                page.nextPage = page.nextPage.flatMap { Self.ownLink($0, kind: query.kind) }
                page.prevPage = page.prevPage.flatMap { Self.ownLink($0, kind: query.kind) }
                let body = redacted(String(decoding: try Self.encoder.encode(page), as: UTF8.self))
                return .answered(body: Array(body.utf8), rateLimit: Self.rateLimit(of: response))
            } catch {
                logger.warning("the image provider answered a page that does not decode")
                return .failed(.malformedAnswer)
            }
        case 429:
            logger.warning("the image provider is rate limiting this service")
            return .rateLimited
        default:
            logger.warning("the image provider answered an unexpected status", metadata: ["status": "\(response.status)"])
            return .failed(.status(response.status))
        }
    }

    /// `text` with every occurrence of the key, raw or as JSON escapes it, replaced.
    func redacted(_ text: String) -> String {
        var text = text
        for form in [apiKey.value, Self.jsonEscaped(apiKey.value)] where text.contains(form) {
            text = text.replacingOccurrences(of: form, with: "[redacted]")
        }
        return text
    }

    static func jsonEscaped(_ text: String) -> String {
        guard let data = try? encoder.encode(text) else { return text }
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    /// The upstream's link to another page, pointed at this service's route instead (the
    /// upstream's would reach Pexels without a key): `/api/images/search?page=2&...`.
    static func ownLink(_ upstream: String, kind: ImageQuery.Kind) -> String? {
        guard let questionMark = upstream.firstIndex(of: "?") else { return nil }
        return "/api/images/\(kind.rawValue)" + upstream[questionMark...]
    }

    static func rateLimit(of response: CurlHTTPClient.Response) -> RateLimit {
        func integer(_ name: String) -> Int? {
            response.header(name).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        return RateLimit(
            limit: integer("X-Ratelimit-Limit"), remaining: integer("X-Ratelimit-Remaining"),
            reset: integer("X-Ratelimit-Reset").map { Date(timeIntervalSince1970: TimeInterval($0)) })
    }

    static let decoder = JSONDecoder()
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()
}

/// Why the upstream gave no page.
enum UpstreamFailure: Sendable, Equatable {
    case timeout
    case unreachable
    case status(Int)
    case malformedAnswer
}
