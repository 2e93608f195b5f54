/// What an index numbers its texts' tokens and its lexemes with. Each `IndexState` has its own:
/// the tables only grow, and a load numbers everything afresh, so it lets go of the tokens and
/// lexemes of the texts changed or gone since the last.
struct IndexTables: Sendable {
    let tokens = TokenTable()
    let lexemes = LexemeTable()

    /// The tokens and lexemes numbered.
    var count: Int { tokens.size.count + lexemes.count }
}
