-- POST /api/posts with a token from tokens.txt per connection; distinct titles.
local tokens = {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do tokens[#tokens + 1] = line end
local counter = 0
local token
function init(args)
  token = tokens[math.random(#tokens)]
end
function request()
  counter = counter + 1
  local body = '{"title":"Bench post ' .. counter .. ' ' .. math.random(1e9) .. '","content":"Some **bold** words for the benchmark, long enough to have a few sentences. And another one."}'
  return wrk.format("POST", "/api/posts", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end
