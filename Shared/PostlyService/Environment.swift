import Foundation
import PostlyModels

/// The process's environment variables, read the one way every Postly configuration reads
/// them: a variable that is unset or empty takes its default; a number that does not parse
/// takes its default too, and is clamped to its allowed range.
public struct Environment: Sendable, ExpressibleByDictionaryLiteral {
    private let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements) { _, last in last })
    }

    /// The value, or nil when unset or empty.
    public func string(_ name: String) -> String? {
        values[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A secret's value, or nil when unset or empty: printed, it shows `<redacted>`.
    public func secret(_ name: String) -> Secret? {
        string(name).map(Secret.init)
    }

    public func string(_ name: String, default fallback: String) -> String {
        string(name) ?? fallback
    }

    public func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int> = Int.min...Int.max) -> Int {
        min(max(string(name).flatMap { Int($0) } ?? fallback, range.lowerBound), range.upperBound)
    }

    /// A duration given in milliseconds (variables named `..._MS`).
    public func milliseconds(_ name: String, default fallback: Int, minimum: Int = 0) -> Duration {
        .milliseconds(integer(name, default: fallback, in: minimum...Int.max))
    }

    /// A comma-separated list, trimmed, without empty items.
    public func list(_ name: String) -> [String] {
        (string(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Adds or replaces variables (tests, and defaults that depend on the service).
    public func setting(_ name: String, to value: String) -> Environment {
        var values = self.values
        values[name] = value
        return Environment(values)
    }
}
