-- What a previous version's record answers a begin on a Redis Cluster, where it lives in another
-- slot than the record claimed: the store claims its own record first, then asks each previous
-- one here, and gives its claim back when one answers.
-- KEYS[1]  previous record        <prefix><ns>:<op>:<ver>:{<keyHash>}:record
-- KEYS[2]  the same, of the previous layout <prefix>{<keyHash>}:record (only while legacy
--          records are read)
-- ARGV[1]  digest                 SHA-256 hex of the canonical input  } compared with a record
-- ARGV[2]  owners                 the service, then its aliases,      } of the previous layout
--                                 space-separated; '' compares none   }
-- ARGV[3]  shared                 '1' when the route is shared        } only
-- Returns { 'absent' }, { 'record', nowMs, value } (a live record the store decodes) or what
-- record-answer.lua answers from a record of the previous layout. An abandoned record (lease
-- expired in progress) is deleted and absent, so that its owner cannot confirm once the new
-- claim runs the work.

--#include redis-clock
--#include record-value
--#include record-answer

local _, nowMs = redisTime()
local value = redis.call('GET', KEYS[1])
if value then
  if isLive(value, nowMs) then
    return { 'record', integer(nowMs), value }
  end
  redis.call('DEL', KEYS[1])
end
if KEYS[2] then
  local answer, abandoned = liveAnswer(KEYS[2], ARGV[1], nowMs, ARGV[2], ARGV[3])
  if answer then
    return answer
  end
  if abandoned then
    redis.call('DEL', KEYS[2])
  end
end
return { 'absent' }
