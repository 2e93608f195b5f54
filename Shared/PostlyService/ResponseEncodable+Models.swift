import Hummingbird
import PostlyModels

// The contract's objects are route answers as they are, encoded with the context's one
// JSON configuration (`application/json; charset=utf-8`).
extension User: ResponseEncodable {}
extension Author: ResponseEncodable {}
extension Post: ResponseEncodable {}
extension Comment: ResponseEncodable {}
extension Notification: ResponseEncodable {}
extension PostPage: ResponseEncodable {}
extension NotificationPage: ResponseEncodable {}
extension Message: ResponseEncodable {}
