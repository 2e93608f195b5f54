import Foundation

/// Whether an IP address is one the public internet routes to us: not loopback, private,
/// link-local, shared, multicast, reserved or unspecified (IPv4 and IPv6, IPv4-mapped
/// included). Outbound fetches and deliveries go only to these, unless the tests allow
/// private networks: a remote actor must not make us call our own services.
enum PublicAddress {
    static func isPublic(_ address: String) -> Bool {
        if let v4 = ipv4(address) { return isPublic(v4: v4) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        // IPv4-mapped (::ffff:a.b.c.d) and the NAT64 prefix (64:ff9b::/96) carry an IPv4 address.
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return isPublic(v4: Array(bytes[12...])) }
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return isPublic(v4: Array(bytes[12...])) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return false }  // :: and ::1
        if bytes[0] & 0xFE == 0xFC { return false }  // fc00::/7, unique local
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return false }  // fe80::/10, link-local
        if bytes[0] == 0xFF { return false }  // multicast
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0D, bytes[3] == 0xB8 { return false }  // documentation
        return true
    }

    private static func ipv4(_ address: String) -> [UInt8]? {
        var v4 = in_addr()
        guard inet_pton(AF_INET, address, &v4) == 1 else { return nil }
        return withUnsafeBytes(of: v4) { Array($0) }
    }

    private static func isPublic(v4 bytes: [UInt8]) -> Bool {
        let (a, b) = (bytes[0], bytes[1])
        switch a {
        case 0, 10, 127: return false
        case 100 where b & 0xC0 == 64: return false  // 100.64.0.0/10, shared address space
        case 169 where b == 254: return false
        case 172 where b & 0xF0 == 16: return false
        case 192 where b == 168, 192 where b == 0 && bytes[2] == 0: return false
        case 198 where b & 0xFE == 18: return false  // benchmarking
        case 224...255: return false  // multicast, reserved, broadcast
        default: return true
        }
    }
}
