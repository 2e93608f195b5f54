/// The distinct words of the index, sorted, as an implicit trie: the words that share a
/// prefix are one range of the array. Finds the words within a number of typos of a word
/// (optimal string alignment: substitution, insertion, deletion, swap of neighbours) by
/// walking that trie with one row of the edit-distance table per letter, and the words a
/// prefix begins. The letters of all words are one flat array, so a walk allocates nothing
/// but its table.
struct LexiconWords: Sendable {
    /// The words' Unicode scalar values one after another, in sorted order of the words.
    private var letters: [UInt32] = []
    /// Where each word begins in `letters`, plus the end of the last.
    private var starts: [Int] = [0]

    var count: Int { starts.count - 1 }

    init() {}

    init(_ words: some Sequence<String>) {
        insert(words)
    }

    /// Adds the words not yet present.
    mutating func insert(_ newWords: some Sequence<String>) {
        let fresh = Set(newWords.map(Self.scalars)).filter { !contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }
        guard !fresh.isEmpty else { return }
        var mergedLetters: [UInt32] = []
        mergedLetters.reserveCapacity(letters.count + fresh.reduce(0) { $0 + $1.count })
        var mergedStarts: [Int] = [0]
        mergedStarts.reserveCapacity(starts.count + fresh.count)
        var old = 0, new = 0
        while old < count || new < fresh.count {
            if new == fresh.count || (old < count && word(old).lexicographicallyPrecedes(fresh[new])) {
                mergedLetters.append(contentsOf: word(old))
                old += 1
            } else {
                mergedLetters.append(contentsOf: fresh[new])
                new += 1
            }
            mergedStarts.append(mergedLetters.count)
        }
        letters = mergedLetters
        starts = mergedStarts
    }

    func contains(_ word: [UInt32]) -> Bool {
        let index = lowerBound(word)
        return index < count && self.word(index).elementsEqual(word)
    }

    /// The words at most `maxEdits` typos away from `word`, the word itself included when
    /// present: the `limit` closest, alphabetically among equally close ones.
    func corrections(of word: String, maxEdits: Int, limit: Int = .max) -> [String] {
        let query = Self.scalars(word)
        guard maxEdits > 0, !query.isEmpty else { return contains(query) ? [word] : [] }
        let longest = query.count + maxEdits
        var table = [Int](repeating: 0, count: (longest + 2) * (query.count + 1))
        // The walk reads and writes through buffers: it runs for every word of every search.
        let found = letters.withUnsafeBufferPointer { letters in
            starts.withUnsafeBufferPointer { starts in
                query.withUnsafeBufferPointer { query in
                    table.withUnsafeMutableBufferPointer { table in
                        var walk = Walk(letters: letters, starts: starts, query: query, maxEdits: maxEdits, longest: longest, table: table)
                        walk.visit(range: 0..<count, depth: 0)
                        return walk.found
                    }
                }
            }
        }
        let closest = found.sorted { ($0.distance, $0.index) < ($1.distance, $1.index) }.prefix(limit)
        return closest.map { Self.string(self.word($0.index)) }
    }

    /// Up to `limit` words that begin with `prefix` and are longer than it, shortest first.
    func completions(of prefix: String, limit: Int, scanning: Int = 5_000) -> [String] {
        let start = Self.scalars(prefix)
        var index = lowerBound(start)
        var candidates: [Int] = []
        while index < count, candidates.count < scanning, word(index).starts(with: start) {
            if length(index) > start.count { candidates.append(index) }
            index += 1
        }
        // Sorted words: among equally long ones, the index order is the alphabetical one.
        return candidates.sorted { (length($0), $0) < (length($1), $1) }.prefix(limit).map { Self.string(word($0)) }
    }

    // MARK: - The walk

    /// The edit-distance table of the walk, one row per depth of the trie, over the words'
    /// letters as `LexiconWords` stores them.
    private struct Walk {
        let letters: UnsafeBufferPointer<UInt32>
        let starts: UnsafeBufferPointer<Int>
        let query: UnsafeBufferPointer<UInt32>
        let maxEdits: Int
        /// Longer words cannot be within `maxEdits` of the query.
        let longest: Int
        let table: UnsafeMutableBufferPointer<Int>
        var found: [(distance: Int, index: Int)] = []

        init(
            letters: UnsafeBufferPointer<UInt32>, starts: UnsafeBufferPointer<Int>, query: UnsafeBufferPointer<UInt32>,
            maxEdits: Int, longest: Int, table: UnsafeMutableBufferPointer<Int>
        ) {
            self.letters = letters
            self.starts = starts
            self.query = query
            self.maxEdits = maxEdits
            self.longest = longest
            self.table = table
            for j in 0...query.count { table[j] = j }
        }

        func length(_ index: Int) -> Int { starts[index + 1] - starts[index] }
        func letter(_ index: Int, _ depth: Int) -> UInt32 { letters[starts[index] + depth] }

        /// The end of the words in `start..<limit` whose letter at `depth` is `letter`.
        func groupEnd(from start: Int, to limit: Int, depth: Int, letter: UInt32) -> Int {
            var low = start, high = limit
            while low < high {
                let middle = (low + high) / 2
                if self.letter(middle, depth) <= letter { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// `range` holds the words that begin with the same `depth` letters, whose distances to
        /// each prefix of the query are the table's row `depth`.
        mutating func visit(range: Range<Int>, depth: Int) {
            guard depth < longest else { return }
            let width = query.count + 1
            let row = depth * width, next = row + width, previous = row - width
            let letterBefore: UInt32? = depth > 0 ? letter(range.lowerBound, depth - 1) : nil
            var index = range.lowerBound
            // The word that is exactly the prefix sorts first; it was reported one level up.
            while index < range.upperBound, length(index) == depth { index += 1 }
            while index < range.upperBound {
                let letter = self.letter(index, depth)
                let end = groupEnd(from: index, to: range.upperBound, depth: depth, letter: letter)
                table[next] = depth + 1
                var smallest = depth + 1
                for j in 1..<width {
                    let substitution = table[row + j - 1] + (query[j - 1] == letter ? 0 : 1)
                    var distance = min(table[row + j] + 1, table[next + j - 1] + 1, substitution)
                    if let letterBefore, j > 1, query[j - 1] == letterBefore, query[j - 2] == letter {
                        distance = min(distance, table[previous + j - 2] + 1)
                    }
                    table[next + j] = distance
                    smallest = min(smallest, distance)
                }
                if length(index) == depth + 1, table[next + width - 1] <= maxEdits { found.append((table[next + width - 1], index)) }
                // A swap of this letter with the next one still counts from this row.
                var swapSmallest = Int.max
                for j in 2..<max(2, width) where query[j - 1] == letter { swapSmallest = min(swapSmallest, table[row + j - 2]) }
                if smallest <= maxEdits || swapSmallest < maxEdits { visit(range: index..<end, depth: depth + 1) }
                index = end
            }
        }
    }

    // MARK: - Access

    private func word(_ index: Int) -> ArraySlice<UInt32> { letters[starts[index]..<starts[index + 1]] }
    private func length(_ index: Int) -> Int { starts[index + 1] - starts[index] }

    private func lowerBound(_ word: [UInt32]) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self.word(middle).lexicographicallyPrecedes(word) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    static func scalars(_ word: String) -> [UInt32] { word.unicodeScalars.map(\.value) }
    static func string(_ scalars: some Sequence<UInt32>) -> String {
        String(String.UnicodeScalarView(scalars.compactMap { Unicode.Scalar($0) }))
    }
}
