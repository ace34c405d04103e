-- wrk script for bench/serve.sh: POSTs one JSON body to /v1/convert and
-- checks every answer: status 200 and the expected converted text (the
-- answer must begin with the expected {"text":...,"profile":..., prefix,
-- made from the CLI's output). Files named by the environment:
--   SERVE_BODY    the request body
--   SERVE_EXPECT  the expected beginning of each answer
-- done() prints "fjbench KEY VALUE" lines for serve.sh to read.

local function slurp(path)
  local f = assert(io.open(assert(path, "SERVE_BODY and SERVE_EXPECT must be set"), "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

wrk.method = "POST"
wrk.body = slurp(os.getenv("SERVE_BODY"))
wrk.headers["Content-Type"] = "application/json"

local expect = slurp(os.getenv("SERVE_EXPECT"))
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- Per thread (each has its own Lua state); read back in done().
function init(args)
  mismatches = 0
  bad_status = 0
  first_bad = ""
end

function response(status, headers, body)
  if status ~= 200 then
    bad_status = bad_status + 1
    if first_bad == "" then first_bad = "status " .. status .. ": " .. string.sub(body or "", 1, 200) end
  elseif string.sub(body, 1, #expect) ~= expect then
    mismatches = mismatches + 1
    if first_bad == "" then first_bad = "text: " .. string.sub(body, 1, 200) end
  end
end

function done(summary, latency, requests)
  local m, s, first = 0, 0, ""
  for _, t in ipairs(threads) do
    m = m + t:get("mismatches")
    s = s + t:get("bad_status")
    if first == "" then first = t:get("first_bad") end
  end
  local e = summary.errors
  io.write(string.format("fjbench requests %d\n", summary.requests))
  io.write(string.format("fjbench duration_us %d\n", summary.duration))
  io.write(string.format("fjbench p50_us %d\n", latency:percentile(50)))
  io.write(string.format("fjbench p99_us %d\n", latency:percentile(99)))
  io.write(string.format("fjbench max_us %d\n", latency.max))
  io.write(string.format("fjbench mismatches %d\n", m))
  io.write(string.format("fjbench non2xx %d\n", math.max(s, e.status)))
  io.write(string.format("fjbench socket_errors %d\n", e.connect + e.read + e.write + e.timeout))
  if first ~= "" then
    io.write("fjbench first_bad " .. string.gsub(first, "\n", " ") .. "\n")
  end
end
