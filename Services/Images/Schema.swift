import PostlyPostgres

/// The images service keeps nothing durable of its own (its cache and budget are in memory);
/// its database holds what the kit keeps for every service.
let schema = Migrations([])
