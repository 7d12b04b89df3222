-- What a flight key holds, without its payload (an operator's view).
-- KEYS[1] flight key
-- Returns {} when absent | {'L', pttl, holder} | {'R' or 'E', pttl, payload bytes}

local tag = redis.call('GETRANGE', KEYS[1], 0, 0)
if tag == '' then
  return {}
end
local pttl = redis.call('PTTL', KEYS[1])
if tag == 'L' then
  return { tag, pttl, string.sub(redis.call('GET', KEYS[1]), 3) }
end
return { tag, pttl, redis.call('STRLEN', KEYS[1]) - 1 }
