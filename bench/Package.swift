// swift-tools-version:6.1
// The libpq layer against postgres-nio, run on demand by `bench/run.sh`. A package of its own
// so that the main build and CI never build postgres-nio.
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
        )
    ]
)
