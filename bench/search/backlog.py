"""Post events for bench/search-backlog.sh: BENCH_BACKLOG `post.created` events of published
posts (a title, 100 to 300 words of sentences sharing one word), as `tansu cat produce` reads
them (a JSON object a line: key and value), built from the sample event of
Tests/Fixtures/events."""
import json, random, sys, uuid

count, word, fixture = int(sys.argv[1]), sys.argv[2], sys.argv[3]
random.seed(20261126)
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
    print(json.dumps({"key": post_id, "value": event}))
