-- GET /api/images/search for one of 20 title words (a cover-image suggestion), 6 per page as
-- the app asks: popular topics, so after the first calls most are cache hits, and one user's
-- hourly allowance of upstream calls (30) is never the limit.
dofile(os.getenv("BENCH_COMMON"))

local words = require_data("title_words")
wrk.headers["Authorization"] = "Bearer " .. require_data("token")

function request()
   return wrk.format("GET", "/api/images/search?per_page=6&query=" .. words[math.random(math.min(20, #words))])
end
