-- Extends the lease of an in-progress record if the caller's lease still holds it (same owner
-- and fence; an expired lease nobody took over still holds). The key is then kept for the new
-- lease plus the retention, as on begin.
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- ARGV[3]  lease TTL (ms)         positive integer
-- Returns 1 when extended, 0 when the lease was lost or the record is completed.

--#include redis-clock
--#include record-value

local value = redis.call('GET', KEYS[1])
local fence, retention = heldValue(value)
if not fence then
  return 0
end

local _, nowMs = redisTime()
local leaseTtl = tonumber(ARGV[3])
local rest = string.match(value, '^p%d+ %d+ (.*)$')
redis.call('SET', KEYS[1], 'p' .. fence .. ' ' .. integer(nowMs + leaseTtl) .. ' ' .. rest,
  'PX', integer(leaseTtl + retention))
return 1
