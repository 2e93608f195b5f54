import Foundation
import PostlyModels

/// Reads the three files of a Flask/MongoDB Postly and applies the specification's
/// normalization rules, each application recorded as a fix.
public struct ImportPlanner {
    /// The API's limits: longer values are kept and reported (an edit will need to shorten them).
    static let nameLimit = 100, titleLimit = 200, contentLimit = 100_000
    /// As long as the posts service's import takes a slug (an id's bytes).
    static let maximumSlugBytes = 255

    private var plan: ImportPlan
    /// When the plan is made: a later date is taken as this one.
    private let now: LegacyTimestamp
    /// A merged user's id → the id of the user it merged into.
    private var mergedInto: [String: String] = [:]
    private var users: [String: ImportRecords.User] = [:]

    public static func plan(users: DumpFile, posts: DumpFile, likes: DumpFile, runId: String, now: Date = Date()) -> ImportPlan {
        let source = { (file: DumpFile) in ImportReport.Source(file: file.path, sha256: file.sha256, lines: file.lines) }
        var planner = ImportPlanner(
            plan: ImportPlan(report: ImportReport(runId: runId, source: .init(users: source(users), posts: source(posts), likes: source(likes)))),
            now: LegacyTimestamp(milliseconds: Int64((now.timeIntervalSince1970 * 1000).rounded(.down))))
        planner.readUsers(users)
        let flaskLikes = planner.readPosts(posts)
        planner.readLikes(likes, flaskLikes: flaskLikes)
        planner.rejectOverBatchLimit()
        return planner.plan
    }

    // MARK: users

    private struct UserCandidate {
        var user: ImportRecords.User
        var line: Int
        var endOffset: Int
        var lastLogin: LegacyTimestamp?
    }

    private mutating func readUsers(_ file: DumpFile) {
        var candidates: [UserCandidate] = []
        var seenIds: Set<String> = []
        for (entry, document) in documents(of: file, .users) {
            guard let userId = nonEmpty(document["userId"]?.string) ?? nonEmpty(document["_id"]?.string) else {
                reject(.users, entry.line, nil, "missing userId")
                continue
            }
            guard seenIds.insert(userId).inserted else {
                plan.report.counts.users.duplicate += 1
                reject(.users, entry.line, userId, "duplicate userId")
                continue
            }
            guard let typed = nonEmpty(document["email"]?.string) else {
                reject(.users, entry.line, userId, "missing email")
                continue
            }
            let email = EmailAddress.normalized(typed)
            if email != typed { fix(.users, userId, "email", "email_trimmed_lowercased", .string(typed), .string(email)) }

            var name = document["name"]?.string ?? ""
            if name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                let localPart = String(email.prefix { $0 != "@" })
                fix(.users, userId, "name", "empty_name_from_email", .string(name), .string(localPart))
                name = localPart
            } else if name.count > Self.nameLimit {
                fix(.users, userId, "name", "name_over_limit_kept", .int(Int64(name.count)), .int(Int64(name.count)))
            }
            let lastLogin = timestamp(document["lastLogin"], .users, userId, "lastLogin")
            guard let createdAt = timestamp(document["createdAt"], .users, userId, "createdAt") ?? createdFromObjectId(document, .users, userId) else {
                reject(.users, entry.line, userId, "no createdAt and no ObjectId _id to take it from")
                continue
            }
            let user = ImportRecords.User(
                userId: userId, name: name, email: email, passwordHash: document["password"]?.string, googleSubject: nil,
                profilePicture: picture(document["profilePicture"], .users, userId, "profilePicture"),
                createdAt: createdAt.text, lastLogin: lastLogin?.text)
            candidates.append(UserCandidate(user: user, line: entry.line, endOffset: entry.endOffset, lastLogin: lastLogin))
        }

        // One user per email: a password document wins over Google ones, the latest login among equals.
        let groups = Dictionary(grouping: candidates.indices, by: { candidates[$0].user.email })
        var survivorOf: [Int: Int] = [:]
        for indices in groups.values {
            let withPassword = indices.filter { candidates[$0].user.passwordHash != nil }
            let survivor = (withPassword.isEmpty ? indices : withPassword).max { a, b in
                (candidates[a].lastLogin?.milliseconds ?? .min, -a) < (candidates[b].lastLogin?.milliseconds ?? .min, -b)
            }!
            for index in indices { survivorOf[index] = survivor }
        }
        for (index, candidate) in candidates.enumerated() where survivorOf[index] == index {
            var user = candidate.user
            // Google's documents have no password; their userId is Google's `sub`.
            let googles = groups[user.email]!.filter { candidates[$0].user.passwordHash == nil }
            if user.passwordHash == nil {
                user.googleSubject = user.userId
            } else if let google = googles.max(by: { (candidates[$0].lastLogin?.milliseconds ?? .min) < (candidates[$1].lastLogin?.milliseconds ?? .min) }) {
                user.googleSubject = candidates[google].user.userId
            }
            switch user.passwordHash.map(PasswordKind.init(hash:)) {
            case .scrypt: plan.report.passwords.scrypt += 1
            case .pbkdf2: plan.report.passwords.pbkdf2 += 1
            case .bcrypt: plan.report.passwords.bcrypt += 1
            case .unverifiable: plan.report.passwords.unverifiable += 1
            case nil: break
            }
            users[user.userId] = user
            plan.users.append(.init(record: user, line: candidate.line, endOffset: candidate.endOffset))
        }
        for (index, candidate) in candidates.enumerated() where survivorOf[index] != index {
            let from = candidate.user.userId, to = candidates[survivorOf[index]!].user.userId
            mergedInto[from] = to
            plan.aliases.append(.init(from: from, to: to))
            plan.report.counts.users.merged += 1
            fix(.users, from, "userId", "same_email_merged", .string(from), .string(to))
        }
    }

    // MARK: posts and their comments

    private struct PostCandidate {
        var post: ImportRecords.Post
        var line: Int
        var endOffset: Int
        var comments: [ExtendedJSON]
        var flaskLikes: ExtendedJSON?
        var createdAt: LegacyTimestamp
    }

    /// Reads the posts, then their comments; returns each post's Flask `likes` counter.
    private mutating func readPosts(_ file: DumpFile) -> [String: ExtendedJSON] {
        var candidates: [PostCandidate] = []
        var seenIds: Set<String> = []
        for (entry, document) in documents(of: file, .posts) {
            guard let id = nonEmpty(document["_id"]?.string) else {
                rejectPost(entry, nil, carrying: document, "missing _id")
                continue
            }
            guard seenIds.insert(id).inserted else {
                plan.report.counts.posts.duplicate += 1
                rejectPost(entry, id, carrying: document, "duplicate _id")
                continue
            }
            guard let title = document["title"]?.string, let content = document["content"]?.string else {
                rejectPost(entry, id, carrying: document, "missing title or content")
                continue
            }
            guard let author = author(document["author"], .posts, id) else {
                rejectPost(entry, id, carrying: document, "missing author.userId")
                continue
            }
            guard let createdAt = timestamp(document["createdAt"], .posts, id, "createdAt") ?? createdFromObjectId(document, .posts, id) else {
                rejectPost(entry, id, carrying: document, "no createdAt and no ObjectId _id to take it from")
                continue
            }
            if title.count > Self.titleLimit { fix(.posts, id, "title", "title_over_limit_kept", .int(Int64(title.count)), .int(Int64(title.count))) }
            if content.count > Self.contentLimit {
                fix(.posts, id, "content", "content_over_limit_kept", .int(Int64(content.count)), .int(Int64(content.count)))
            }
            let updatedAt = timestamp(document["updatedAt"], .posts, id, "updatedAt") ?? createdAt
            var status = document["status"]?.string ?? ""
            if status != "published", status != "draft" {
                fix(.posts, id, "status", "unknown_status_to_draft", document["status"] ?? .null, .string("draft"))
                status = "draft"
            }
            let publishedAt = status == "published" ? createdAt.text : nil
            if let publishedAt { fix(.posts, id, "publishedAt", "published_at_from_created_at", .null, .string(publishedAt)) }
            let post = ImportRecords.Post(
                _id: id, title: title, content: content, status: status, slug: document["slug"]?.string ?? "",
                coverImage: coverImage(document["coverImage"], id), author: author, createdAt: createdAt.text, updatedAt: updatedAt.text,
                publishedAt: publishedAt, views: views(document["views"], id))
            let comments: [ExtendedJSON] = if case .array(let items)? = document["comments"] { items } else { [] }
            candidates.append(PostCandidate(
                post: post, line: entry.line, endOffset: entry.endOffset, comments: comments, flaskLikes: document["likes"], createdAt: createdAt))
        }
        assignSlugs(&candidates)

        var flaskLikes: [String: ExtendedJSON] = [:]
        var commentIds: Set<String> = []
        for candidate in candidates {
            plan.posts.append(.init(record: candidate.post, line: candidate.line, endOffset: candidate.endOffset))
            flaskLikes[candidate.post._id] = candidate.flaskLikes ?? .int(0)
            for comment in candidate.comments {
                readComment(comment, of: candidate, ids: &commentIds)
            }
        }
        return flaskLikes
    }

    /// Rejects a post and the comments it carried, so the report adds up.
    private mutating func rejectPost(_ entry: DumpFile.Entry, _ id: String?, carrying document: [String: ExtendedJSON], _ reason: String) {
        reject(.posts, entry.line, id, reason)
        guard case .array(let comments)? = document["comments"] else { return }
        for comment in comments {
            plan.report.counts.comments.read += 1
            reject(.comments, entry.line, comment["_id"]?.string, "its post was rejected")
        }
    }

    /// The Flask slug stays (links in the wild); of posts sharing one the oldest keeps it and
    /// the others get `-2`, `-3`, ...; an empty one becomes the post's id, and one over
    /// `maximumSlugBytes` is cut as a title's slug is (Flask's had no limit; kept, it failed its
    /// batch on every resume, past the unique index's row).
    private mutating func assignSlugs(_ candidates: inout [PostCandidate]) {
        for index in candidates.indices where candidates[index].post.slug.utf8.count > Self.maximumSlugBytes {
            let long = candidates[index].post.slug
            candidates[index].post.slug = Slug.make(from: long)
            fix(.posts, candidates[index].post._id, "slug", "long_slug_cut", .string(long), .string(candidates[index].post.slug))
        }
        let reserved = Set(candidates.map(\.post.slug).filter { !$0.isEmpty })
        var taken: Set<String> = []
        let oldestFirst = candidates.indices.sorted { (candidates[$0].createdAt, candidates[$0].post._id) < (candidates[$1].createdAt, candidates[$1].post._id) }
        for index in oldestFirst {
            let post = candidates[index].post
            var slug = post.slug
            if slug.isEmpty {
                slug = post._id
                fix(.posts, post._id, "slug", "empty_slug_from_id", .string(""), .string(slug))
            } else if taken.contains(slug) {
                slug = (2...).lazy.map { Slug.candidate(post.slug, attempt: $0) }.first { !reserved.contains($0) && !taken.contains($0) }!
                fix(.posts, post._id, "slug", "duplicate_slug_suffixed", .string(post.slug), .string(slug))
            }
            taken.insert(slug)
            candidates[index].post.slug = slug
        }
    }

    private mutating func readComment(_ comment: ExtendedJSON, of post: PostCandidate, ids: inout Set<String>) {
        plan.report.counts.comments.read += 1
        guard let id = nonEmpty(comment["_id"]?.string) else {
            reject(.comments, post.line, nil, "missing _id")
            return
        }
        guard ids.insert(id).inserted else {
            plan.report.counts.comments.duplicate += 1
            reject(.comments, post.line, id, "duplicate _id")
            return
        }
        guard let content = comment["content"]?.string, let author = author(comment["author"], .comments, id) else {
            reject(.comments, post.line, id, "missing content or author.userId")
            return
        }
        let createdAt = timestamp(comment["createdAt"], .comments, id, "createdAt") ?? post.createdAt
        plan.comments.append(.init(
            record: .init(_id: id, postId: post.post._id, content: content, author: author, createdAt: createdAt.text),
            line: post.line, endOffset: post.endOffset))
    }

    // MARK: likes

    private mutating func readLikes(_ file: DumpFile, flaskLikes: [String: ExtendedJSON]) {
        var seen: Set<[String]> = []
        var counted: [String: Int64] = [:]
        let postCreatedAt = Dictionary(uniqueKeysWithValues: plan.posts.map { ($0.record._id, $0.record.createdAt) })
        for (entry, document) in documents(of: file, .likes) {
            guard let postId = nonEmpty(document["postId"]?.string), let likerId = nonEmpty(document["userId"]?.string) else {
                reject(.likes, entry.line, document["_id"]?.string, "missing postId or userId")
                continue
            }
            guard let createdAtOfPost = postCreatedAt[postId] else {
                plan.report.counts.likes.orphan += 1
                continue
            }
            let userId = mergedInto[likerId] ?? likerId
            guard seen.insert([postId, userId]).inserted else {
                plan.report.counts.likes.duplicate += 1
                continue
            }
            let id = document["_id"]?.string ?? "\(postId)/\(likerId)"
            let createdAt = timestamp(document["createdAt"], .likes, id, "createdAt")?.text ?? createdFromObjectId(document, .likes, id)?.text ?? createdAtOfPost
            counted[postId, default: 0] += 1
            plan.likes.append(.init(record: .init(postId: postId, userId: userId, createdAt: createdAt), line: entry.line, endOffset: entry.endOffset))
        }
        for post in plan.posts {
            let id = post.record._id, recounted = counted[id] ?? 0
            let flask = flaskLikes[id] ?? .int(0)
            if flask != .int(recounted) { fix(.posts, id, "likes", "likes_recounted_from_post_likes", flask, .int(recounted)) }
        }
    }

    /// A document under 1 MiB in the file can still be too large for a batch on its own (the
    /// services take 900 KiB a request): rejected here rather than refused with the whole batch.
    private mutating func rejectOverBatchLimit() {
        let limit = ImportBatch.maximumBytes - 1024
        func fits<Record>(_ item: ImportPlan.Planned<Record>, _ collection: ImportReport.Collection, _ id: String) -> Bool {
            guard let size = try? PostlyJSON.encode(item.record).count, size > limit else { return true }
            reject(collection, item.line, id, "document larger than the 900 KiB a batch may hold once normalized")
            return false
        }
        plan.posts = plan.posts.filter { fits($0, .posts, $0.record._id) }
        // What the rejected posts carried is counted too, or the report would not add up.
        let posts = Set(plan.posts.map(\.record._id))
        plan.comments = plan.comments.filter { comment in
            guard posts.contains(comment.record.postId) else {
                reject(.comments, comment.line, comment.record._id, "its post was rejected")
                return false
            }
            return fits(comment, .comments, comment.record._id)
        }
        let likes = plan.likes.count
        plan.likes = plan.likes.filter { posts.contains($0.record.postId) }
        plan.report.counts.likes.orphan += likes - plan.likes.count
    }

    // MARK: shared rules

    /// Every entry of `file` counted as read; the ones that are no document rejected (and
    /// counted as bad lines unless only too large).
    private mutating func documents(of file: DumpFile, _ collection: ImportReport.Collection) -> [(DumpFile.Entry, [String: ExtendedJSON])] {
        var documents: [(DumpFile.Entry, [String: ExtendedJSON])] = []
        let name = (file.path as NSString).lastPathComponent
        for entry in file.entries {
            plan.report.counts[collection].read += 1
            switch entry.document {
            case .success(let document):
                let (cleaned, fields) = ExtendedJSON.document(document).removingNULs()
                guard case .document(let document) = cleaned else { continue }
                let id = nonEmpty(document["userId"]?.string) ?? nonEmpty(document["_id"]?.string) ?? "line \(entry.line)"
                for field in fields { fix(collection, id, field, "nul_removed", .string("\u{0}"), .string("")) }
                documents.append((entry, document))
            case .failure(let error) where error == DumpFile.tooLarge:
                reject(collection, entry.line, nil, error.description)
            case .failure(let error):
                reject(collection, entry.line, nil, "invalid Extended JSON: \(error)")
                plan.badLines.append("\(name): line \(entry.line): invalid Extended JSON: \(error)")
            }
        }
        return documents
    }

    /// An embedded author: a known (or merged) user's current name and picture; one never
    /// imported keeps the embedded ones and is reported as an orphan.
    private mutating func author(_ value: ExtendedJSON?, _ collection: ImportReport.Collection, _ id: String) -> ImportRecords.Author? {
        guard let embeddedId = nonEmpty(value?["userId"]?.string) else { return nil }
        let userId = mergedInto[embeddedId] ?? embeddedId
        if userId != embeddedId { fix(collection, id, "author.userId", "author_merged", .string(embeddedId), .string(userId)) }
        if let user = users[userId] { return .init(userId: userId, name: user.name, profilePicture: user.profilePicture) }
        plan.report.counts[collection].orphan += 1
        fix(collection, id, "author.userId", "orphan_author", .string(userId), .string(userId))
        return .init(
            userId: userId, name: value?["name"]?.string ?? "", profilePicture: picture(value?["profilePicture"], collection, id, "author.profilePicture"))
    }

    /// A date as UTC milliseconds; a change of its text (truncation, offset, no zone) is a fix,
    /// an unparsable one a fix to null.
    private mutating func timestamp(_ value: ExtendedJSON?, _ collection: ImportReport.Collection, _ id: String, _ field: String) -> LegacyTimestamp? {
        switch value {
        case .date(let milliseconds)?:
            return notFuture(LegacyTimestamp(milliseconds: milliseconds), collection, id, field)
        case .string(let text)?:
            guard let date = LegacyTimestamp(text) else {
                fix(collection, id, field, "unparsable_date_dropped", .string(text), .null)
                return nil
            }
            if date.text != text { fix(collection, id, field, "date_to_utc_milliseconds", .string(text), .string(date.text)) }
            return notFuture(date, collection, id, field)
        case nil, .null?:
            return nil
        case let other?:
            fix(collection, id, field, "unparsable_date_dropped", other, .null)
            return nil
        }
    }

    /// A date after the plan's making (a server clock that ran ahead) is taken as the plan's
    /// time: kept, a published post stayed first in every feed until then, and a feed's
    /// `Last-Modified` was in the future, so readers sending `If-Modified-Since` saw no new post.
    private mutating func notFuture(_ date: LegacyTimestamp, _ collection: ImportReport.Collection, _ id: String, _ field: String) -> LegacyTimestamp {
        guard date > now else { return date }
        fix(collection, id, field, "future_date_to_import_time", .string(date.text), .string(now.text))
        return now
    }

    private mutating func createdFromObjectId(_ document: [String: ExtendedJSON], _ collection: ImportReport.Collection, _ id: String) -> LegacyTimestamp? {
        guard case .objectId(let objectId)? = document["_id"], let objectIdDate = LegacyTimestamp(objectId: objectId) else { return nil }
        let date = notFuture(objectIdDate, collection, id, "createdAt")
        fix(collection, id, "createdAt", "created_at_from_object_id", .null, .string(date.text))
        return date
    }

    private mutating func picture(_ value: ExtendedJSON?, _ collection: ImportReport.Collection, _ id: String, _ field: String) -> String? {
        guard let text = value?.string else { return nil }
        guard !text.isEmpty else {
            fix(collection, id, field, "empty_to_null", .string(""), .null)
            return nil
        }
        return text
    }

    private mutating func coverImage(_ value: ExtendedJSON?, _ id: String) -> String? {
        guard let value, value != .null else { return nil }
        if let text = value.string, CoverImage.problem(with: text) == nil { return text }
        fix(.posts, id, "coverImage", "cover_image_not_absolute_http_url", value, .null)
        return nil
    }

    private mutating func views(_ value: ExtendedJSON?, _ id: String) -> Int64 {
        switch value {
        case .int(let views)? where (0...Int64(Post.maxImportedViews)).contains(views):
            return views
        case .double(let views)? where views >= 0 && views <= Double(Post.maxImportedViews) && views.rounded() == views:
            return Int64(views)
        default:
            fix(.posts, id, "views", "views_not_a_count_to_zero", value ?? .null, .int(0))
            return 0
        }
    }

    private mutating func fix(_ collection: ImportReport.Collection, _ id: String, _ field: String, _ rule: String, _ from: ExtendedJSON, _ to: ExtendedJSON) {
        plan.report.fixes.append(.init(collection: collection, id: id, field: field, rule: rule, from: from, to: to))
    }

    private mutating func reject(_ collection: ImportReport.Collection, _ line: Int, _ id: String?, _ reason: String) {
        plan.report.counts[collection].rejected += 1
        plan.report.rejected.append(.init(collection: collection, line: line, id: id, reason: reason))
    }

    private func nonEmpty(_ text: String?) -> String? {
        text.flatMap { $0.isEmpty ? nil : $0 }
    }
}
