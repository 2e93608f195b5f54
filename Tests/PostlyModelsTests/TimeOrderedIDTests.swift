import Foundation
import PostlyModels
import Testing

/// New posts', comments' and notifications' ids: version 7 UUIDs that sort by when they were made.
@Suite struct TimeOrderedIDTests {
    @Test func theIdStartsWithItsMillisecondAndIsAVersion7UUID() throws {
        let made = Date(timeIntervalSince1970: 1_795_000_000.5)
        let id = UUID.timeOrderedString(at: made)
        // 1,795,000,000,500 ms is 0x01a1ee565ff4: the first 48 bits, in the text's first 12 digits.
        #expect(id.hasPrefix("01a1ee56-5ff4-7"), "\(id)")
        #expect(UUID(uuidString: id) != nil)
        #expect(id == id.lowercased())
        let variant = try #require(id.split(separator: "-")[3].first)
        #expect("89ab".contains(variant), "RFC 9562's variant: \(id)")
    }

    @Test func idsMadeLaterSortAfterAndTheSameMillisecondStillDiffers() {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let ids = (0..<1_000).map { UUID.timeOrderedString(at: start.addingTimeInterval(Double($0) * 0.002)) }
        #expect(ids == ids.sorted())
        #expect(Set((0..<1_000).map { _ in UUID.timeOrderedString(at: start) }).count == 1_000)
    }
}
