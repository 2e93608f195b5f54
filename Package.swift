// swift-tools-version:6.1
import PackageDescription

let log = Target.Dependency.product(name: "Logging", package: "swift-log")
let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
let nio = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let lifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
let hummingbirdTesting = Target.Dependency.product(name: "HummingbirdTesting", package: "hummingbird")
let base64 = Target.Dependency.product(name: "ExtrasBase64", package: "swift-extras-base64")
let bitCollections = Target.Dependency.product(name: "BitCollections", package: "swift-collections")
let tracing = Target.Dependency.product(name: "Tracing", package: "swift-distributed-tracing")

/// A module every service uses, under `Shared/<name>`.
func shared(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .target(name: name, dependencies: dependencies, path: "Shared/\(name)")
}

/// A C library from the system, visible only to its Swift wrapper.
func cLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Shared/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// The services, each declared the same way: its library (routes, storage, consumers) in
/// `Services/<Name>`, its thin executable `postly-<name>` in `Services/<Name>/main`, and
/// its contract tests in `Tests/<Name>Tests`. Services are added here as their issues land.
let services: [String] = ["Auth", "Posts", "Comments", "Search", "Images", "Notifications", "Federation"]

/// What a service uses beyond the scaffold, for its library and its tests.
let serviceDependencies: [String: [Target.Dependency]] = [
    "Auth": [
        nio, base64, metrics, .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"), .product(name: "CryptoExtras", package: "swift-crypto"),
    ],
    "Posts": ["PostlyMarkdown", metrics, .product(name: "Crypto", package: "swift-crypto")],
    "Search": ["PostlyMarkdown", metrics, bitCollections],
    "Images": [.product(name: "NIOCore", package: "swift-nio")],
    "Federation": ["PostlyMarkdown", nio, metrics, .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto")],
]

func serviceTargets(_ name: String) -> [Target] {
    let library = "\(name)Service"
    return [
        .target(name: library, dependencies: ["PostlyService"] + serviceDependencies[name, default: []], path: "Services/\(name)", exclude: ["main"]),
        .executableTarget(name: "postly-\(name.lowercased())", dependencies: [.target(name: library)], path: "Services/\(name)/main"),
        .testTarget(
            name: "\(name)Tests",
            dependencies: [.target(name: library), "TestSupport", hummingbirdTesting] + serviceDependencies[name, default: []]
                + serviceTestDependencies[name, default: []]),
    ]
}

/// What a service's tests use beyond its own dependencies.
let serviceTestDependencies: [String: [Target.Dependency]] = [
    "Auth": [.product(name: "MetricsTestKit", package: "swift-metrics")],
]

let package = Package(
    name: "Postly",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PostlyModels", targets: ["PostlyModels"]),
        .library(name: "PostlyPostgres", targets: ["PostlyPostgres"]),
        .library(name: "PostlyKafka", targets: ["PostlyKafka"]),
        .library(name: "PostlyCurl", targets: ["PostlyCurl"]),
        .library(name: "PostlyMarkdown", targets: ["PostlyMarkdown"]),
        .library(name: "PostlyEvents", targets: ["PostlyEvents"]),
        .library(name: "PostlyService", targets: ["PostlyService"]),
    ] + services.map { .executable(name: "postly-\($0.lowercased())", targets: ["postly-\($0.lowercased())"]) },
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // OTLP over HTTP only: its gRPC exporter would bring gRPC into every service.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        cLibrary("CLibPQ", pkgConfig: "libpq", apt: "libpq-dev"),
        cLibrary("CRdKafka", pkgConfig: "rdkafka", apt: "librdkafka-dev"),
        cLibrary("CCurl", pkgConfig: "libcurl", apt: "libcurl4-openssl-dev"),
        cLibrary("CCmark", pkgConfig: "libcmark-gfm", apt: "libcmark-gfm-extensions-dev"),

        shared("PostlyModels", []),
        shared("PostlyPostgres", ["CLibPQ", "PostlyModels", log, nio, lifecycle, tracing, .product(name: "Crypto", package: "swift-crypto")]),
        shared("PostlyKafka", ["CRdKafka", log, nio, lifecycle]),
        shared("PostlyCurl", ["CCurl", log, nio, lifecycle]),
        shared("PostlyMarkdown", ["CCmark"]),
        shared("PostlyEvents", ["PostlyModels", "PostlyPostgres", "PostlyKafka", log, metrics, lifecycle, tracing]),
        shared("PostlyService", [
            "PostlyModels", "PostlyPostgres", "PostlyKafka", "PostlyCurl", "PostlyEvents",
            hummingbird, nio, .product(name: "NIOCore", package: "swift-nio"),
            log, metrics, lifecycle, base64, tracing, .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "OTel", package: "swift-otel"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),

        // Tests: one target per module, and the harness they share.
        .target(
            name: "TestSupport",
            dependencies: ["PostlyModels", "PostlyPostgres", "PostlyKafka", "PostlyService", hummingbird, hummingbirdTesting, base64, .product(name: "JWTKit", package: "jwt-kit")],
            path: "Tests/TestSupport"),
        .testTarget(name: "PostlyModelsTests", dependencies: ["PostlyModels", "TestSupport"]),
        .testTarget(name: "PostlyPostgresTests", dependencies: ["PostlyPostgres", "TestSupport"]),
        .testTarget(name: "PostlyKafkaTests", dependencies: ["PostlyKafka", "TestSupport"]),
        .testTarget(name: "PostlyCurlTests", dependencies: ["PostlyCurl", "TestSupport", hummingbird]),
        .testTarget(name: "PostlyMarkdownTests", dependencies: ["PostlyMarkdown"]),
        .testTarget(
            name: "PostlyEventsTests",
            dependencies: ["PostlyEvents", "TestSupport", .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle")]),
        .testTarget(name: "PostlyServiceTests", dependencies: ["PostlyService", "TestSupport", hummingbirdTesting, base64]),

        // Tools: run once beside the suite, not served. `postly-import` moves a Flask/MongoDB
        // deployment in (its library is `PostlyImport`, so the tests reach its parsing). No
        // product is declared for it: deploy/ starts every declared `postly-*` product as a service.
        .target(
            name: "PostlyImport",
            dependencies: ["PostlyModels", "PostlyCurl", log, .product(name: "Crypto", package: "swift-crypto")],
            path: "Tools/Import", exclude: ["main"]),
        .executableTarget(
            name: "postly-import",
            dependencies: ["PostlyImport", "PostlyModels", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/Import/main"),
        .testTarget(name: "PostlyImportTests", dependencies: ["PostlyImport", "PostlyModels"]),
    ] + services.flatMap(serviceTargets)
)

