-- Reads a record for an operator, with the Redis time it was read at.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- Returns { nowMs, pttl, field1, value1, field2, value2, ... } (pttl -2 when there is none).

--#include redis-clock

local _, nowMs = redisTime()
local reply = { integer(nowMs), redis.call('PTTL', KEYS[1]) }
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields do
  reply[#reply + 1] = fields[i]
end
return reply
