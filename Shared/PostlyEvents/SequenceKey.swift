/// What an event's sequence counts along: one aggregate (`key`) on one topic. The write unit
/// numbers events per sequence key (`event_sequences`) and every consumer records the newest it
/// applied per sequence key (`consumed_sequences`); both lock their rows in this order, so two
/// transactions locking overlapping keys cannot deadlock.
struct SequenceKey: Hashable, Comparable {
    var topic: String
    var key: String

    static func < (a: SequenceKey, b: SequenceKey) -> Bool { (a.topic, a.key) < (b.topic, b.key) }
}
