-- GET /api/posts/search with a query string taken at random from BENCH_QUERIES.
local queries = {}
for line in io.lines(os.getenv("BENCH_QUERIES")) do queries[#queries + 1] = line end
function request()
  return wrk.format("GET", "/api/posts/search?" .. queries[math.random(#queries)])
end
