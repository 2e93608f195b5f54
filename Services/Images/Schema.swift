import PostlyPostgres

/// The upstream budget, shared by every instance; the cache is each instance's own, in memory.
let schema = Migrations([UpstreamBudget.migration])
