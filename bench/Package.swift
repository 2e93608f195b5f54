// swift-tools-version:6.1
// The libpq layer against postgres-nio (`bench/run.sh`) and the comments service under load
// (`bench/comments.sh`), run on demand. A package of its own so that the main build and CI
// never build postgres-nio.
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
    ],
    targets: [
        .executableTarget(
            name: "postgres-bench",
            dependencies: [
                .product(name: "PostlyPostgres", package: postly),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The comments service under HTTP load; run by `bench/comments.sh`.
        .executableTarget(
            name: "comments-bench",
            dependencies: [
                .product(name: "PostlyCurl", package: postly),
                .product(name: "PostlyModels", package: postly),
                .product(name: "PostlyPostgres", package: postly),
            ]
        ),
    ]
)
