import CLibPQ
import Foundation

/// A statement's parameters as libpq takes them: NUL-terminated copies in one buffer, owned
/// for the duration of the call (`deallocate()` afterwards).
struct Parameters {
    let buffer: UnsafeMutablePointer<CChar>?
    let values: [UnsafePointer<CChar>?]
    let lengths: [Int32]
    let formats: [Int32]
    let types: [Oid]

    /// Fails, before anything is sent, for a string with a NUL byte (libpq would cut it there).
    init(_ sql: SQL) throws(DatabaseError) {
        types = sql.types.map(\.rawValue)
        var total = 0
        for binding in sql.bindings {
            switch binding {
            case .null: break
            case .text(let text): total += text.utf8.count + 1
            case .binary(let bytes): total += bytes.count + 1
            }
        }
        guard total > 0 else {
            buffer = nil
            values = Array(repeating: nil, count: sql.bindings.count)
            lengths = Array(repeating: 0, count: sql.bindings.count)
            formats = Array(repeating: 0, count: sql.bindings.count)
            return
        }
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: total)
        var pointers: [UnsafePointer<CChar>?] = []
        var byteCounts: [Int32] = []
        var textOrBinary: [Int32] = []
        pointers.reserveCapacity(sql.bindings.count)
        byteCounts.reserveCapacity(sql.bindings.count)
        textOrBinary.reserveCapacity(sql.bindings.count)
        var position = 0
        for (index, binding) in sql.bindings.enumerated() {
            let target = storage + position
            switch binding {
            case .null:
                pointers.append(nil)
                byteCounts.append(0)
                textOrBinary.append(0)
            case .text(let text):
                guard Self.copy(text, to: target) else {
                    storage.deallocate()
                    throw .invalidParameter("parameter $\(index + 1) contains a NUL byte")
                }
                let count = text.utf8.count
                target[count] = 0
                pointers.append(UnsafePointer(target))
                byteCounts.append(Int32(count))
                textOrBinary.append(0)
                position += count + 1
            case .binary(let bytes):
                bytes.withUnsafeBytes { source in
                    if let base = source.baseAddress { UnsafeMutableRawPointer(target).copyMemory(from: base, byteCount: bytes.count) }
                }
                target[bytes.count] = 0
                pointers.append(UnsafePointer(target))
                byteCounts.append(Int32(bytes.count))
                textOrBinary.append(1)
                position += bytes.count + 1
            }
        }
        buffer = storage
        values = pointers
        lengths = byteCounts
        formats = textOrBinary
    }

    /// Copies the UTF-8 bytes; false if one of them is NUL.
    private static func copy(_ text: String, to target: UnsafeMutablePointer<CChar>) -> Bool {
        let copied = text.utf8.withContiguousStorageIfAvailable { source -> Bool in
            guard let base = source.baseAddress else { return true }
            guard memchr(base, 0, source.count) == nil else { return false }
            UnsafeMutableRawPointer(target).copyMemory(from: base, byteCount: source.count)
            return true
        }
        if let copied { return copied }
        for (offset, byte) in text.utf8.enumerated() {
            guard byte != 0 else { return false }
            target[offset] = CChar(bitPattern: byte)
        }
        return true
    }

    func deallocate() {
        buffer?.deallocate()
    }
}
