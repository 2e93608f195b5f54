import Foundation
import Testing

@testable import PostlyService

/// HTTP dates: an IMF-fixdate round trip, and any other text, however hostile, is no date.
@Suite struct HTTPDateTests {
    @Test func imfFixdatesRoundTrip() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1_033_563_600), zone: "+0000") == "Wed, 02 Oct 2002 13:00:00 +0000")
        for seconds: TimeInterval in [0, 1_700_000_000, 253_402_300_799] {
            #expect(HTTPDate.parse(HTTPDate.format(Date(timeIntervalSince1970: seconds))) == Date(timeIntervalSince1970: seconds))
        }
    }

    /// Headers anyone may send (`If-Modified-Since`, a signed request's `Date`, a peer's
    /// `Retry-After`): a year of twelve digits once overflowed the seconds and stopped the process.
    @Test(arguments: [
        "Sun, 06 Nov 999999999999 08:49:37 GMT", "Sun, 06 Nov -2147483648 08:49:37 GMT", "Sun, 06 Nov 9223372036854775807 08:49:37 GMT",
        "Sun, 06 Nov +994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:99999999999999999999 GMT", "Any, 06 Nov 1994 08:49:37 GMT", "", "yesterday",
    ])
    func anythingElseIsNoDate(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
