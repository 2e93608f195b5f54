import Foundation
import Logging
import PostlyCurl
import PostlyModels
import PostlyPostgres
import PostlyService

// The comments service under load, as the clients use it: GET of a post's 100 comments and
// POST of a comment, each at BENCH_CONNECTIONS (64) concurrent connections for BENCH_SECONDS.
// `bench/comments.sh` starts PostgreSQL, the broker, the token keys and the release
// `postly-comments`, and passes their addresses and an access token; this program seeds a
// post and its comments in the service's database and measures.

let environment = ProcessInfo.processInfo.environment
let seconds = Double(environment["BENCH_SECONDS"] ?? "") ?? 10
let connections = Int(environment["BENCH_CONNECTIONS"] ?? "") ?? 64
let base = environment["COMMENTS_URL"] ?? "http://127.0.0.1:8083"
guard let accessToken = environment["BENCH_TOKEN"] else { fatalError("BENCH_TOKEN (an access token the service accepts) is not set") }

// MARK: - Measuring

struct Measurement {
    var requests = 0
    var failures = 0
    var latencies: [Duration] = []
}

func percentile(_ sorted: [Duration], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    let (s, atto) = sorted[max(0, index)].components
    return Double(s) * 1000 + Double(atto) / 1e15
}

/// Runs `request` from `connections` concurrent callers for `seconds` and prints the rate and latencies.
func measure(
    _ name: String, client: CurlHTTPClient, expecting status: Int, connections: Int, seconds: Double,
    _ request: @escaping @Sendable () -> CurlHTTPClient.Request
) async {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int(seconds * 1000))
    let started = clock.now
    let results = await withTaskGroup(of: Measurement.self) { group in
        for _ in 0..<connections {
            group.addTask {
                var measurement = Measurement()
                while clock.now < deadline {
                    let start = clock.now
                    let response = try? await client.execute(request())
                    measurement.latencies.append(start.duration(to: clock.now))
                    measurement.requests += 1
                    if response?.status != status { measurement.failures += 1 }
                }
                return measurement
            }
        }
        var total = Measurement()
        for await part in group {
            total.requests += part.requests
            total.failures += part.failures
            total.latencies += part.latencies
        }
        return total
    }
    let elapsed = started.duration(to: clock.now)
    let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let sorted = results.latencies.sorted()
    print(String(
        format: "%@: %.0f requests/s, p50 %.2f ms, p99 %.2f ms (%d requests, %d failed, %d connections, %.0f s)",
        name, Double(results.requests) / elapsedSeconds, percentile(sorted, 0.5), percentile(sorted, 0.99),
        results.requests, results.failures, connections, elapsedSeconds))
}

// MARK: - The run

/// Seeds the service and measures both routes.
func runBenchmark(base: String, accessToken: String, connections: Int, seconds: Double) async throws {
    var logger = Logger(label: "comments-bench")
    logger.logLevel = .warning
    let client = CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), timeout: .seconds(10)), logger: logger)
    var ready = false
    for _ in 0..<300 where !ready {
        ready = (try? await client.execute(.get("\(base)/health/ready")))?.status == 200
        if !ready { try await Task.sleep(for: .milliseconds(100)) }
    }
    guard ready else { fatalError("postly-comments did not become ready") }

    // Two published posts in the projection, as post.created events would leave them.
    // The service's database (POSTGRES_*, `postly_comments` by default), read as the service reads it.
    let database = Database(configuration: ServiceConfiguration(name: "comments", defaultPort: 8083).postgres, logger: logger)
    let postAuthorId = UUID().uuidString.lowercased()
    let postId = UUID().uuidString.lowercased()
    let emptyPostId = UUID().uuidString.lowercased()
    for id in [postId, emptyPostId] {
        try await database.execute(
            "INSERT INTO posts (id, author_id, title, status, deleted, sequence) VALUES (\(id), \(postAuthorId), 'Benchmarked', 'published', false, 1)")
    }
    await database.close()

    let json = [("Content-Type", "application/json"), ("Authorization", "Bearer \(accessToken)")]
    for index in 0..<100 {
        let body = Array(#"{"content": "Comment number \#(index), with a sentence or two of text in it like real ones have."}"#.utf8)
        let response = try await client.execute(.post("\(base)/api/posts/\(postId)/comments", headers: json, body: body))
        guard response.status == 201 else { fatalError("seeding answered \(response.status)") }
    }
    let listed = try await client.execute(.get("\(base)/api/posts/\(postId)/comments"))
    let count = (try? PostlyJSON.decoder().decode([Comment].self, from: Data(listed.body)).count) ?? -1
    guard count == 100 else { fatalError("expected 100 comments, got \(count)") }

    let listURL = "\(base)/api/posts/\(postId)/comments"
    let postURL = "\(base)/api/posts/\(emptyPostId)/comments"
    let postBody = Array(#"{"content": "A comment of ordinary length, written during the benchmark."}"#.utf8)
    await measure("GET a post's 100 comments", client: client, expecting: 200, connections: connections, seconds: seconds) { .get(listURL) }
    await measure("POST a comment", client: client, expecting: 201, connections: connections, seconds: seconds) { .post(postURL, headers: json, body: postBody) }
    await client.shutdown()
}

try await runBenchmark(base: base, accessToken: accessToken, connections: connections, seconds: seconds)
