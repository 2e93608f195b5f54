import PostlyModels
import Testing

/// The cover image rule the API and the importer share.
@Suite struct CoverImageTests {
    @Test func anAbsoluteHTTPURLAsRFC3986WritesItIsACoverImage() {
        for url in [
            "https://images.pexels.com/photos/1/pexels-photo-1.jpeg?auto=compress&cs=tinysrgb&h=350", "http://img.test/caf%C3%A9.png",
            "https://[::1]:8443/a.png", "HTTPS://img.test/a.png",
        ] {
            #expect(CoverImage.problem(with: url) == nil, "\(url)")
        }
    }

    @Test func anythingElseIsRefusedWithWhy() {
        for url in [
            "https://img.test/x\n<script>", "https://img.test/x\"onerror=\"alert(1)", "https://img.test/a b.png", "https://img.test/café.png",
            "https://img.test/%zz", "javascript:alert(1)", "ftp://img.test/a.png", "/relative.png", "https://", "",
            "https://img.test/" + String(repeating: "a", count: 2_048),
        ] {
            #expect(CoverImage.problem(with: url) != nil, "\(url)")
        }
    }
}
