import Foundation
import PostlyModels
import PostlyService

/// The body of `POST /api/posts`, as sent; `validated()` turns it into a `NewPost` or 422.
struct CreatePostRequest: Decodable {
    var title: String?
    var content: String?
    var status: String?
    var coverImage: String?
    var publishAt: SentPublishAt?

    enum CodingKeys: String, CodingKey {
        case title, content, status, coverImage, publishAt
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        content = try container.decodeIfPresent(String.self, forKey: .content)
        status = try container.decodeIfPresent(String.self, forKey: .status)
        coverImage = try container.decodeIfPresent(String.self, forKey: .coverImage)
        publishAt = try SentPublishAt(in: container, forKey: .publishAt)
    }

    /// Whether `publishAt` is in the future is checked in the write, against its clock.
    func validated() throws -> NewPost {
        var errors: [String: String] = [:]
        let title = PostValidation.title(title, required: true, errors: &errors)
        let content = PostValidation.content(content, required: true, errors: &errors)
        let status = PostValidation.status(status, errors: &errors)
        let coverImage = PostValidation.coverImage(coverImage, errors: &errors)
        let publishAt = PostValidation.publishAt(publishAt, errors: &errors)
        guard errors.isEmpty, let title, let content else { throw APIError.invalidFields(errors) }
        return NewPost(title: title, content: content, status: status, coverImage: coverImage, publishAt: publishAt)
    }
}

/// `publishAt` as a body sent it, before it is checked: `null`, a string, or another JSON value.
enum SentPublishAt: Decodable, Sendable {
    case null
    case text(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            self = .other
        }
    }

    /// nil when the body has no such key.
    init?<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, forKey key: Key) throws {
        guard container.contains(key) else { return nil }
        self = try container.decodeNil(forKey: key) ? .null : container.decode(SentPublishAt.self, forKey: key)
    }
}

/// The body of `PUT /api/posts/{id}`: any of the fields; `coverImage: null` removes the image.
struct UpdatePostRequest: Decodable {
    var title: String?
    var content: String?
    var status: String?
    var coverImage: String??
    var publishAt: SentPublishAt?

    enum CodingKeys: String, CodingKey {
        case title, content, status, coverImage, publishAt
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        content = try container.decodeIfPresent(String.self, forKey: .content)
        status = try container.decodeIfPresent(String.self, forKey: .status)
        if container.contains(.coverImage) {
            coverImage = .some(try container.decodeNil(forKey: .coverImage) ? nil : container.decode(String.self, forKey: .coverImage))
        }
        publishAt = try SentPublishAt(in: container, forKey: .publishAt)
    }

    func validated() throws -> PostChanges {
        var errors: [String: String] = [:]
        let changes = PostChanges(
            title: PostValidation.title(title, required: false, errors: &errors),
            content: PostValidation.content(content, required: false, errors: &errors),
            status: PostValidation.status(status, errors: &errors),
            coverImage: coverImage.map { PostValidation.coverImage($0, errors: &errors) },
            publishAt: PostValidation.publishAt(publishAt, errors: &errors))
        guard errors.isEmpty else { throw APIError.invalidFields(errors) }
        return changes
    }
}

/// The contract's field rules, one place for create and update.
enum PostValidation {
    static let titleLimit = TextLimit(characters: 200)
    static let contentLimit = TextLimit(characters: 100_000)

    static func title(_ value: String?, required: Bool, errors: inout [String: String]) -> String? {
        guard let value else {
            if required { errors["title"] = "is required" }
            return nil
        }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if TextLimit.isBlank(trimmed) {
            errors["title"] = "must not be empty"
        } else if let problem = titleLimit.problem(with: trimmed) {
            errors["title"] = problem
        }
        return trimmed
    }

    static func content(_ value: String?, required: Bool, errors: inout [String: String]) -> String? {
        guard let value else {
            if required { errors["content"] = "is required" }
            return nil
        }
        if let problem = contentLimit.problem(with: value) { errors["content"] = problem }
        return value
    }

    static func status(_ value: String?, errors: inout [String: String]) -> PostStatus? {
        guard let value else { return nil }
        guard let status = PostStatus(rawValue: value) else {
            errors["status"] = "must be 'published', 'draft' or 'scheduled'"
            return nil
        }
        return status
    }

    /// An RFC 3339 timestamp with its offset, or `null`.
    static func publishAt(_ value: SentPublishAt?, errors: inout [String: String]) -> PublishAtRequest {
        switch value {
        case nil: return .absent
        case .null: return .null
        case .text(let text):
            if let time = Timestamp.parse(text) { return .at(time) }
        case .other: break
        }
        errors["publishAt"] = "must be an RFC 3339 timestamp"
        return .absent
    }

    /// An absolute http(s) URL; an empty string means no image, like `null`.
    static func coverImage(_ value: String?, errors: inout [String: String]) -> String? {
        guard let value = value?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        if let problem = CoverImage.problem(with: value) {
            errors["coverImage"] = problem
            return nil
        }
        return value
    }
}

/// `{"liked": true}`
struct LikeStatus: Codable, Sendable {
    var liked: Bool
}
