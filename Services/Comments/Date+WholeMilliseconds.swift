import Foundation

extension Date {
    /// What the clients see (milliseconds), so an answer, the stored row and the event agree.
    /// Half a microsecond absorbs the binary error of a parsed `.002` (0.00199999...), as
    /// `PostlyJSON` writes times: cut down, an imported time lost a millisecond.
    var inWholeMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000 + 0.0005).rounded(.down) / 1000)
    }

    /// A whole millisecond's next one.
    var oneMillisecondLater: Date {
        Date(timeIntervalSince1970: ((timeIntervalSince1970 * 1000).rounded() + 1) / 1000)
    }
}
