-- GET /api/posts/{id}/comments: of the post in BENCH_POST_ID, else of a random seeded post.
-- Prints compare.sh's summary line through the reference's common.lua (path in BENCH_COMMON).
dofile(os.getenv("BENCH_COMMON"))

local fixed = os.getenv("BENCH_POST_ID")
local ids = fixed and { fixed } or require_data("post_ids")

function request()
   return wrk.format("GET", "/api/posts/" .. ids[math.random(#ids)] .. "/comments")
end
