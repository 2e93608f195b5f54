// swift-tools-version:6.1
// Benchmarks, run on demand: the libpq layer against postgres-nio and the outbox through
// Kafka to a consumer (`bench/run.sh`), and the services under HTTP load (`bench/auth.sh`,
// `bench/posts.sh`, `bench/comments.sh`). A package of its own so that the main build and
// CI never build postgres-nio.
import Foundation
import PackageDescription

// A path dependency is named after its folder, which differs between checkouts.
let postly = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "postly-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
    ],
    targets: [
        .executableTarget(
            name: "postgres-bench",
            dependencies: [
                .product(name: "PostlyPostgres", package: postly),
                .product(name: "PostlyService", package: postly),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .executableTarget(
            name: "outbox-bench",
            dependencies: [
                .product(name: "PostlyEvents", package: postly),
                .product(name: "PostlyKafka", package: postly),
                .product(name: "PostlyModels", package: postly),
                .product(name: "PostlyPostgres", package: postly),
                .product(name: "PostlyService", package: postly),
            ]
        ),
        // The comments service under HTTP load; run by `bench/comments.sh`.
        .executableTarget(
            name: "comments-bench",
            dependencies: [
                .product(name: "PostlyCurl", package: postly),
                .product(name: "PostlyModels", package: postly),
                .product(name: "PostlyPostgres", package: postly),
                .product(name: "PostlyService", package: postly),
            ]
        ),
            // What a span costs when nothing traces (no tracer bootstrapped: the no-op tracer), as
        // the services make them; `swift run -c release --package-path bench tracing-off-bench`.
        .executableTarget(
            name: "tracing-off-bench",
            dependencies: [.product(name: "Tracing", package: "swift-distributed-tracing")]
        ),
    ]
)
