import Foundation

/// A position in the change feed: after the change at (`txid`, `seq`) of the log of `epoch`,
/// given out when the log had been purged `purges` times (nil in tokens given out before that
/// was counted). Clients see it as an opaque token, base64url of
/// `{"e":epoch,"p":purges,"s":seq,"t":txid,"v":1}`.
struct ChangeCursor: Hashable, Sendable, Codable {
    var epoch: String
    /// A PostgreSQL `xid8`.
    var txid: UInt64
    var seq: Int64
    var purges: Int64?

    enum CodingKeys: String, CodingKey {
        case version = "v", epoch = "e", txid = "t", seq = "s", purges = "p"
    }

    init(epoch: String, txid: UInt64, seq: Int64, purges: Int64? = nil) {
        self.epoch = epoch
        self.txid = txid
        self.seq = seq
        self.purges = purges
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(Int.self, forKey: .version) == 1 else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container, debugDescription: "unknown cursor version")
        }
        epoch = try container.decode(String.self, forKey: .epoch)
        txid = try container.decode(UInt64.self, forKey: .txid)
        seq = try container.decode(Int64.self, forKey: .seq)
        purges = try container.decodeIfPresent(Int64.self, forKey: .purges)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(1, forKey: .version)
        try container.encode(epoch, forKey: .epoch)
        try container.encode(txid, forKey: .txid)
        try container.encode(seq, forKey: .seq)
        try container.encodeIfPresent(purges, forKey: .purges)
    }

    /// The token; nil when `token` is not one this server issues.
    init?(token: String) {
        guard token.utf8.count <= 512 else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let cursor = try? JSONDecoder().decode(Self.self, from: data) else { return nil }
        self = cursor
    }

    var token: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(self)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether this position comes before `other`'s (same epoch assumed).
    func precedes(_ other: ChangeCursor) -> Bool {
        (txid, seq) < (other.txid, other.seq)
    }
}
