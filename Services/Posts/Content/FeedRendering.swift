import Foundation
import PostlyModels
import PostlyService

/// Where the RSS and Atom feeds live and what they call themselves (`PostsConfiguration`).
public struct FeedSite: Sendable {
    /// Where each post is read; its base URL is the base of every other absolute link.
    public var permalink: Permalink
    public var title: String
    public var description: String
    /// The date of the tag URIs (RFC 4151): part of every entry's id for good.
    public var tagDate: String

    /// Absolute, without a trailing slash.
    var baseURL: String { permalink.baseURL }

    func postURL(_ post: Post) -> String { permalink.url(of: post) }

    /// `tag:{host},{date}:{specific}`: an id that survives slug changes.
    func tag(_ specific: String) -> String {
        "tag:\(URL(string: baseURL)?.host ?? "localhost"),\(tagDate):\(specific)"
    }

    /// When an empty feed was last updated: it has no posts to say.
    var epoch: Date { Timestamp.parse(tagDate + "T00:00:00Z") ?? Date(timeIntervalSince1970: 0) }
}

/// What a feed shows: the latest published posts, newest first, of everyone or of one author.
public struct FeedContent: Sendable {
    /// The author of a per-author feed; nil for the site's.
    public var author: Author?
    public var posts: [Post]
    /// The latest change the feed shows (a post's update, an author's new name) or that took a
    /// post out of it.
    public var lastModified: Date
    /// Whether every write stamped in `lastModified`'s second or before had committed when the
    /// feed was read. Until then a reader's `If-Modified-Since` cannot stand for it: a write
    /// stamped earlier (a long transaction's) that commits later leaves `lastModified` unmoved.
    public var isSettled: Bool

    /// How many posts a feed shows.
    static let size = 20
}

enum FeedFormat: String, Sendable, CaseIterable {
    case rss, atom

    var contentType: String {
        switch self {
        case .rss: "application/rss+xml; charset=utf-8"
        case .atom: "application/atom+xml; charset=utf-8"
        }
    }
}

/// RSS 2.0 (as WordPress writes it: `content:encoded`, `dc:creator`, a `guid` that is no
/// permalink) and Atom (RFC 4287). Every text is escaped, characters XML 1.0 forbids are
/// dropped, and a post's HTML (already sanitized) goes whole, its cover image first.
enum FeedRendering {
    static func render(_ format: FeedFormat, _ content: FeedContent, site: FeedSite, selfURL: String) -> [UInt8] {
        Array((format == .rss ? rss(content, site: site, selfURL: selfURL) : atom(content, site: site, selfURL: selfURL)).utf8)
    }

    static func rss(_ content: FeedContent, site: FeedSite, selfURL: String) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/" \
            xmlns:atom="http://www.w3.org/2005/Atom">
            <channel>

            """
        xml += element("title", title(of: content, site: site))
        xml += element("link", site.baseURL)
        xml += element("description", content.author.map { "Posts by \($0.name) on \(site.title)" } ?? site.description)
        xml += element("lastBuildDate", rfc822(content.lastModified))
        xml += #"<atom:link href="\#(escaped(selfURL))" rel="self" type="application/rss+xml"/>"# + "\n"
        xml += element("generator", "Postly")
        for post in content.posts {
            xml += "<item>\n"
            xml += element("title", post.title)
            xml += element("link", site.postURL(post))
            xml += #"<guid isPermaLink="false">\#(escaped(site.tag("posts/\(post.id)")))</guid>"# + "\n"
            xml += element("pubDate", rfc822(post.publishedAt ?? post.createdAt))
            xml += element("dc:creator", post.author.name)
            xml += element("description", post.excerpt)
            xml += "<content:encoded>" + cdata(html(of: post)) + "</content:encoded>\n"
            xml += "</item>\n"
        }
        return xml + "</channel>\n</rss>\n"
    }

    static func atom(_ content: FeedContent, site: FeedSite, selfURL: String) -> String {
        var xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">

            """
        xml += element("id", site.tag(content.author.map { "users/\($0.userId)" } ?? "posts"))
        xml += element("title", title(of: content, site: site), attributes: #" type="text""#)
        xml += element("updated", Timestamp.format(content.lastModified))
        xml += #"<link rel="self" type="application/atom+xml" href="\#(escaped(selfURL))"/>"# + "\n"
        xml += #"<link rel="alternate" type="text/html" href="\#(escaped(site.baseURL))"/>"# + "\n"
        // A feed-level author, so an entry never lacks one and an empty feed is still valid.
        xml += "<author>" + element("name", content.author?.name ?? site.title) + "</author>\n"
        xml += element("generator", "Postly")
        for post in content.posts {
            xml += "<entry>\n"
            xml += element("id", site.tag("posts/\(post.id)"))
            xml += element("title", post.title, attributes: #" type="text""#)
            xml += #"<link rel="alternate" type="text/html" href="\#(escaped(site.postURL(post)))"/>"# + "\n"
            xml += element("published", Timestamp.format(post.publishedAt ?? post.createdAt))
            xml += element("updated", Timestamp.format(post.updatedAt))
            xml += "<author>" + element("name", post.author.name) + "</author>\n"
            xml += element("summary", post.excerpt, attributes: #" type="text""#)
            xml += element("content", html(of: post), attributes: #" type="html""#)
            xml += "</entry>\n"
        }
        return xml + "</feed>\n"
    }

    static func title(of content: FeedContent, site: FeedSite) -> String {
        content.author.map { "\($0.name) on \(site.title)" } ?? site.title
    }

    /// The post's HTML with its cover image first.
    static func html(of post: Post) -> String {
        let body = post.contentHtml ?? ""
        guard let cover = post.coverImage else { return body }
        return #"<p><img src="\#(escaped(cover))" alt=""/></p>"# + "\n" + body
    }

    static func element(_ name: String, _ text: String, attributes: String = "") -> String {
        "<\(name)\(attributes)>\(escaped(text))</\(name)>\n"
    }

    /// Text or an attribute's value: markup escaped, characters XML 1.0 forbids dropped.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars where isAllowed(scalar) {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A CDATA section; `]]>` inside is split across two, and forbidden characters dropped.
    static func cdata(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: text.unicodeScalars.filter(isAllowed))
        return "<![CDATA[" + String(kept).replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>") + "]]>"
    }

    /// XML 1.0's `Char`: tab, line feed, carriage return and the rest but U+FFFE and U+FFFF
    /// (Swift strings hold no lone surrogates).
    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// `Wed, 02 Oct 2002 13:00:00 +0000` (RSS's RFC 822 dates, four-digit years).
    static func rfc822(_ date: Date) -> String { HTTPDate.format(date, zone: "+0000") }
}
