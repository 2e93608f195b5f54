import Foundation

extension Date {
    /// What the clients see (milliseconds), so an answer, the stored row and the event agree.
    var inWholeMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// A whole millisecond's next one.
    var oneMillisecondLater: Date {
        Date(timeIntervalSince1970: ((timeIntervalSince1970 * 1000).rounded() + 1) / 1000)
    }
}
