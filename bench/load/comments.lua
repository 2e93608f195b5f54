-- GET /api/posts/{id}/comments of one post with 100 comments (the id in BENCH_POST_ID).
-- Prints compare.sh's summary line through the reference's common.lua.
dofile(os.getenv("BENCH_COMMON"))

local id = os.getenv("BENCH_POST_ID")

function request()
   return wrk.format("GET", "/api/posts/" .. id .. "/comments")
end
