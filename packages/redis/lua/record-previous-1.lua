-- What a previous version's record answers a begin on a Redis Cluster, where it lives in another
-- slot than the record claimed: the store claims its own record first, then asks each previous
-- one here, and gives its claim back when one answers.
-- KEYS[1]  previous record        <prefix>{<keyHash>}:record
-- ARGV[1]  digest                 SHA-256 hex of the canonical input
-- ARGV[2]  service                the claiming service ('' compares none)
-- ARGV[3]  shared                 '1' when the route is shared
-- Returns { 'absent' } or what record-begin-n.lua would answer from this record (a replay
-- without keyIndex). A record abandoned in progress (lease expired) is deleted and absent, so
-- that its owner cannot confirm once the new claim runs the work.

--#include redis-clock
--#include record-answer

local _, nowMs = redisTime()
local answer, abandoned = liveAnswer(KEYS[1], ARGV[1], nowMs, ARGV[2], ARGV[3])
if answer then
  return answer
end
if abandoned then
  redis.call('DEL', KEYS[1])
end
return { 'absent' }
