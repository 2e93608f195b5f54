"""Post events for bench/search-backlog.sh, produced to postly.posts on the broker given:
`count` `post.created` events of published posts (a title, 100 to 300 words of sentences
sharing `word`), built from the sample event of Tests/Fixtures/events.
Usage: backlog.py BROKERS COUNT WORD FIXTURE."""
import json, random, sys, uuid

from confluent_kafka import Producer

brokers, count, word, fixture = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
producer = Producer({"bootstrap.servers": brokers, "enable.idempotence": True, "linger.ms": 20})
random.seed(word)  # the same posts for the same word, other posts for another
sample = json.load(open(fixture))
syllables = ["ka", "ya", "ri", "ver", "mo", "un", "tain", "lo", "go", "sta", "tion", "pre", "fer", "al", "de", "sign"]
vocabulary = ["the", "of", "and", "a", "to", "in", "is", "it"] + ["".join(random.choice(syllables) for _ in range(random.randint(1, 3))) for _ in range(3000)]
for index in range(count):
    words = [random.choice(vocabulary[:8]) if random.random() < 0.4 else random.choice(vocabulary) for _ in range(random.randint(100, 300))]
    words[random.randrange(len(words))] = word
    sentences, text = [], []
    for w in words:
        text.append(w)
        if random.random() < 0.08:
            sentences.append(" ".join(text).capitalize() + ".")
            text = []
    if text:
        sentences.append(" ".join(text).capitalize() + ".")
    content = " ".join(sentences)
    post_id = str(uuid.UUID(int=random.getrandbits(128)))
    event = dict(sample)
    event["id"], event["key"], event["sequence"] = str(uuid.UUID(int=random.getrandbits(128))), post_id, 1
    data = dict(sample["data"])
    data.update({"_id": post_id, "id": post_id, "title": f"Backlog {index}", "content": content, "contentHtml": f"<p>{content}</p>\n",
                 "contentText": content, "excerpt": content[:200], "slug": f"backlog-{index}", "status": "published",
                 "publishedAt": sample["occurredAt"]})
    event["data"] = data
    producer.produce("postly.posts", key=post_id, value=json.dumps(event))
    producer.poll(0)
if producer.flush(60) > 0:
    sys.exit("not every event was acknowledged by the broker")
