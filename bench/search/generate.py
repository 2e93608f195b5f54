"""Generated posts for bench/search.sh: words drawn from a Zipf distribution (the most
frequent word about twice as frequent as the second, as in English text) over a vocabulary
of common English function words followed by made-up words of English-like length, 300 to
1,000 words a post. Writes the posts as tab-separated rows and four query files (URL
query strings): one word, three words, one typo in a word of 5+ letters, a prefix."""
import math, random, sys, urllib.parse

count, out = int(sys.argv[1]), sys.argv[2]
random.seed(20261123)
common = ("the of and to a in is that it for was on are as with be at this have from or by one had not but what all "
          "were when we there can an your which their said if do will each about how up out them then she many some so "
          "these would other into has more her two like him see time could no make than first been its who now people my "
          "made over did down only way find use may water long little very after words called just where most know").split()
onsets = ["", "b", "c", "d", "l", "m", "n", "p", "r", "s", "t", "br", "cr", "dr", "fl", "gr", "pl", "pr", "st", "tr", "sh", "ch", "th"]
vowels = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou"]
codas = ["", "", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ck"]
vocabulary, seen = list(common), set(common)
while len(vocabulary) < 30000:
    word = "".join(random.choice(onsets) + random.choice(vowels) + random.choice(codas) for _ in range(random.choice([1, 2, 2, 2, 3, 3, 4])))
    word += random.choice(["", "", "", "", "ing", "ed", "s", "er", "ation", "ly"])
    if len(word) > 1 and word not in seen:
        seen.add(word)
        vocabulary.append(word)
# Zipf with exponent 1: the cumulative weights of ranks 1..V.
cumulative, total = [], 0.0
for rank in range(1, len(vocabulary) + 1):
    total += 1.0 / rank
    cumulative.append(total)

def word():
    x = random.random() * total
    low, high = 0, len(cumulative) - 1
    while low < high:
        middle = (low + high) // 2
        if cumulative[middle] < x: low = middle + 1
        else: high = middle
    return vocabulary[low]

with open(f"{out}/posts.tsv", "w") as posts:
    for index in range(count):
        title = " ".join(word() for _ in range(random.randint(3, 9))).capitalize()
        content = " ".join(word() for _ in range(random.randint(300, 1000)))
        day = 1 + index % 28
        posts.write(f"bench-{index}\t{title}\t{content}\tauthor-{index % 500}\t2026-{1 + index % 12:02d}-{day:02d} 10:00:00+00\n")

# Queries use words of the middle ranks (100 to 5,000): found in some posts, not in all.
middle = [w for w in vocabulary[100:5000] if w.isalpha()]
long_words = [w for w in middle if len(w) >= 5]

def typo(w):
    i = random.randrange(1, len(w) - 1)
    kind = random.choice(["substitute", "insert", "delete", "swap"])
    if kind == "substitute": return w[:i] + random.choice("aeioustrn") + w[i + 1:]
    if kind == "insert": return w[:i] + random.choice("aeioustrn") + w[i:]
    if kind == "delete": return w[:i] + w[i + 1:]
    return w[:i] + w[i + 1] + w[i] + w[i + 2:]

def write(name, queries):
    with open(f"{out}/{name}.txt", "w") as f:
        for q in queries: f.write("q=" + urllib.parse.quote(q) + "\n")

write("one-word", [random.choice(middle) for _ in range(2000)])
write("three-words", [" ".join(random.choice(middle) for _ in range(3)) for _ in range(2000)])
write("typo", [typo(random.choice(long_words)) for _ in range(2000)])
write("prefix", [random.choice(middle) + " " + random.choice(long_words)[:4] for _ in range(2000)])
