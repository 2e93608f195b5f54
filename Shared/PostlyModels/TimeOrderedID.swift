import Foundation

extension UUID {
    /// A version 7 UUID (RFC 9562) as every id is stored and sent: lower-case text. The first 48
    /// bits are the time in milliseconds, the other 74 random, so ids made one after another sort
    /// together and the index entries of new rows (a post's in every service that keeps it, and in
    /// each consumer's `consumed_sequences`) land on an index's last pages instead of a random page
    /// of it: fewer pages read, dirtied and written. Foundation makes only version 4.
    public static func timeOrderedString(at date: Date = Date()) -> String {
        var uuid = UUID().uuid  // random, with RFC 9562's variant bits already set
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * index)) }
            bytes[6] = 0x70 | (bytes[6] & 0x0F)
        }
        return UUID(uuid: uuid).uuidString.lowercased()
    }
}
