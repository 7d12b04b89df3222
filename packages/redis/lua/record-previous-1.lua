-- What a previous version's record answers a begin on a Redis Cluster, where it lives in another
-- slot than the record claimed: the store claims its own record first, then asks each previous
-- one here, and gives its claim back when one answers.
-- KEYS[1]  previous record        <prefix><ns>:<op>:<ver>:{<keyHash>}:record
-- Returns { 'absent' } or { 'record', nowMs, value } (a live record the store decodes). An
-- abandoned record (lease expired in progress) is deleted and absent, so that its owner cannot
-- confirm once the new claim runs the work.

--#include redis-clock
--#include record-value

local _, nowMs = redisTime()
local value = redis.call('GET', KEYS[1])
if value then
  if isLive(value, nowMs) then
    return { 'record', integer(nowMs), value }
  end
  redis.call('DEL', KEYS[1])
end
return { 'absent' }
