import Foundation
import Logging
import PostlyService
import Testing

@Suite struct JSONLogHandlerTests {
    @Test func aLineIsOneJSONObjectWithTheMessageAndMetadata() throws {
        let pipe = Pipe()
        let logger = Logger(label: "posts") { JSONLogHandler(label: $0, level: .info, output: pipe.fileHandleForWriting) }
        logger.info("published", metadata: ["postId": "p-1"])
        try pipe.fileHandleForWriting.close()
        let lines = try #require(try pipe.fileHandleForReading.readToEnd()).split(separator: 0x0A)
        #expect(lines.count == 1)
        let object = try JSONDecoder().decode([String: String].self, from: Data(lines[0]))
        #expect(object["message"] == "published" && object["postId"] == "p-1" && object["logger"] == "posts")
    }

    /// A full disk under the logs must not stop a service, which then answers 503 where its
    /// database is down: the handler wrote with `write(_:)`, which traps on any error.
    @Test func aLineThatCannotBeWrittenIsLostAndTheProcessGoesOn() throws {
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let logger = Logger(label: "posts") { JSONLogHandler(label: $0, level: .info, output: full) }
        logger.warning("database unavailable")
        logger.warning("database unavailable")
    }
}
