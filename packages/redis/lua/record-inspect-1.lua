-- Reads a record for an operator, with the Redis time it was read at.
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- Returns { nowMs, pttl, value } or { nowMs } when there is none.

--#include redis-clock

local _, nowMs = redisTime()
local value = redis.call('GET', KEYS[1])
if value then
  return { integer(nowMs), redis.call('PTTL', KEYS[1]), value }
end
return { integer(nowMs) }
