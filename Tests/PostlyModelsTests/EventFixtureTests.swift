import Foundation
import PostlyModels
import Testing
import TestSupport

/// Every event type has a sample, and every sample decodes and encodes back unchanged:
/// the samples are the event contract between services.
@Suite struct EventFixtureTests {
    @Test(arguments: EventType.allCases)
    func sampleDecodesAndEncodesBackUnchanged(type: EventType) throws {
        let data = try EventFixtures.data(type)
        let event = try PostlyJSON.decoder().decode(Event.self, from: data)
        #expect(event.type == type)
        #expect(event.data.type == type)
        #expect(event.schemaVersion == Event.currentSchemaVersion)
        let original = try JSONSerialization.jsonObject(with: data) as? NSDictionary
        let reencoded = try JSONSerialization.jsonObject(with: PostlyJSON.encoder().encode(event)) as? NSDictionary
        #expect(withoutNulls(original) == withoutNulls(reencoded))
    }

    /// An imported event is its sample with `"imported": true`, which decodes and encodes back
    /// unchanged; the samples, without the key, are not imported (schemaVersion 1 either way).
    @Test(arguments: EventFixtures.importedTypes)
    func importedSampleIsTheSampleMarkedImported(type: EventType) throws {
        let imported = try EventFixtures.importedEvent(type)
        var sample = try EventFixtures.event(type)
        #expect(imported.imported && !sample.imported)
        sample.imported = true
        #expect(imported == sample)
        let original = try JSONSerialization.jsonObject(with: EventFixtures.importedData(type)) as? NSDictionary
        let reencoded = try JSONSerialization.jsonObject(with: PostlyJSON.encoder().encode(imported)) as? NSDictionary
        #expect(withoutNulls(original) == withoutNulls(reencoded))
        #expect(!String(decoding: try PostlyJSON.encoder().encode(sample.with(imported: false)), as: UTF8.self).contains("imported"))
    }

    /// A `post.updated` written before events carried the rendered post still decodes, as the
    /// same post without its rendering.
    @Test func aPostEventWithoutTheRenderedPostStillDecodes() throws {
        let legacy = try PostlyJSON.decoder().decode(Event.self, from: EventFixtures.legacyData(.postUpdated))
        let current = try EventFixtures.event(.postUpdated)
        guard case .postUpdated(let old) = legacy.data, case .postUpdated(let new) = current.data else {
            Issue.record("not post.updated events"); return
        }
        #expect(old.post.contentHtml == nil && old.contentText == nil)
        var rendered = new.post
        rendered.contentHtml = nil
        #expect(old.post == rendered)
    }

    /// Consumers decode `status` as a closed enum: a scheduled post travels as a draft with its
    /// `publishAt`, which they decode (the sample) and treat as private.
    @Test func aScheduledPostTravelsAsADraftWithItsPublishAt() throws {
        let data = try EventFixtures.scheduledPostData()
        let sample = try PostlyJSON.decoder().decode(Event.self, from: data)
        guard case .postUpdated(let snapshot) = sample.data else { Issue.record("not post.updated"); return }
        #expect(snapshot.post.status == .draft && snapshot.post.publishedAt == nil)
        #expect(snapshot.post.publishAt == Timestamp.parse("2026-11-22T08:00:00.000Z"))
        let reencoded = try JSONSerialization.jsonObject(with: PostlyJSON.encoder().encode(sample)) as? NSDictionary
        #expect(withoutNulls(try JSONSerialization.jsonObject(with: data)) == withoutNulls(reencoded))

        var scheduled = snapshot
        scheduled.post.status = .scheduled
        let event = Event(producer: "posts", key: scheduled.post.id, sequence: 2, actorId: nil, data: .postUpdated(scheduled))
        let written = try #require(JSONSerialization.jsonObject(with: PostlyJSON.encoder().encode(event)) as? [String: Any])
        let writtenData = try #require(written["data"] as? [String: Any])
        #expect(writtenData["status"] as? String == "draft")
        #expect(writtenData["publishAt"] as? String == "2026-11-22T08:00:00.000Z")
    }

    @Test func eventsAreRoutedToTheirTopic() throws {
        #expect(try EventFixtures.event(.sessionRevoked).topic == .users)
        #expect(try EventFixtures.event(.postLiked).topic == .posts)
        #expect(try EventFixtures.event(.commentDeleted).topic == .comments)
    }

    @Test func anEnvelopeWithAnUnknownTypeDoesNotDecode() throws {
        var object = try #require(JSONSerialization.jsonObject(with: EventFixtures.data(.postCreated)) as? [String: Any])
        object["type"] = "post.exploded"
        let data = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DecodingError.self) { try PostlyJSON.decoder().decode(Event.self, from: data) }
    }

    @Test func dataThatDoesNotFitTheTypeDoesNotDecode() throws {
        var object = try #require(JSONSerialization.jsonObject(with: EventFixtures.data(.postCreated)) as? [String: Any])
        object["type"] = "session.revoked"
        let data = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DecodingError.self) { try PostlyJSON.decoder().decode(Event.self, from: data) }
    }

    /// Optional keys may be written as null or left out; both mean the same.
    func withoutNulls(_ value: Any?) -> NSObject? {
        switch value {
        case let dictionary as [String: Any]:
            var result: [String: NSObject] = [:]
            for (key, value) in dictionary where !(value is NSNull) { result[key] = withoutNulls(value) }
            return result as NSDictionary
        case let array as [Any]: return array.compactMap { withoutNulls($0) } as NSArray
        case let object as NSObject: return object
        default: return nil
        }
    }
}

extension Event {
    fileprivate func with(imported: Bool) -> Event {
        var event = self
        event.imported = imported
        return event
    }
}
