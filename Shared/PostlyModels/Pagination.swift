/// Which page of a list to show: `page` from 1, `limit` items each. Parsed from a query in
/// the service scaffold; storage takes it as it is.
public struct PageRequest: Sendable, Hashable {
    public var page: Int
    public var limit: Int

    public var offset: Int { (page - 1) * limit }

    public init(page: Int = 1, limit: Int = 10) {
        self.page = page
        self.limit = limit
    }
}

/// The `pagination` object of every paginated response.
public struct Pagination: Codable, Sendable, Hashable {
    public var total: Int
    public var page: Int
    public var limit: Int
    /// `ceil(total / limit)`, 0 when there is nothing.
    public var totalPages: Int

    public init(total: Int, page: Int, limit: Int) {
        self.total = total
        self.page = page
        self.limit = limit
        self.totalPages = limit > 0 ? (total + limit - 1) / limit : 0
    }
}

/// `{"posts": [...], "pagination": {...}}`
public struct PostPage: Codable, Sendable, Hashable {
    public var posts: [Post]
    public var pagination: Pagination

    public init(posts: [Post], pagination: Pagination) {
        self.posts = posts
        self.pagination = pagination
    }
}

extension Pagination: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.field("limit", limit)
            json.field("page", page)
            json.field("total", total)
            json.field("totalPages", totalPages)
        }
    }
}

extension PostPage: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.field("pagination", pagination)
            json.field("posts", posts)
        }
    }
}

/// `{"notifications": [...], "pagination": {...}, "unreadCount": N}`
public struct NotificationPage: Codable, Sendable, Hashable {
    public var notifications: [Notification]
    public var pagination: Pagination
    /// All of the user's unread notifications, whatever the page.
    public var unreadCount: Int

    public init(notifications: [Notification], pagination: Pagination, unreadCount: Int) {
        self.notifications = notifications
        self.pagination = pagination
        self.unreadCount = unreadCount
    }
}
