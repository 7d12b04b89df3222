-- Reads a record for an operator, with the Redis time it was read at.
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- KEYS[2]  its previous layout    <prefix>{<keyHash>}:record (a hash, written by older versions)
-- Returns { nowMs, 'value', pttl, value }, { nowMs, 'hash', pttl, field1, value1, ... } or
-- { nowMs, 'absent' }.

--#include redis-clock

local _, nowMs = redisTime()
local value = redis.call('GET', KEYS[1])
if value then
  return { integer(nowMs), 'value', redis.call('PTTL', KEYS[1]), value }
end
local fields = redis.call('HGETALL', KEYS[2])
if #fields == 0 then
  return { integer(nowMs), 'absent' }
end
local reply = { integer(nowMs), 'hash', redis.call('PTTL', KEYS[2]) }
for i = 1, #fields do
  reply[#reply + 1] = fields[i]
end
return reply
