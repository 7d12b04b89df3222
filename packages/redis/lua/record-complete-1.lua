-- Stores the response and marks the record completed, if the caller's lease still holds it:
-- same owner and fence, still in progress. The lease may have expired, as long as nobody took
-- the record over since (the fence, not the clock, decides who may confirm).
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- ARGV[3]  response status
-- ARGV[4]  response headers       JSON object text
-- ARGV[5]  body kind              empty | json | bytes
-- ARGV[6]  body                   raw bytes (UTF-8 JSON text for json, empty for empty)
-- Returns 1 when completed, 0 when the lease was lost (or already completed the record).

--#include redis-clock
--#include record-lease

local record = heldRecord('retention')
if not record then
  return 0
end

local _, nowMs = redisTime()

redis.call('HSET', KEYS[1],
  'status', 'completed', 'completedAt', integer(nowMs),
  'responseStatus', ARGV[3], 'responseHeaders', ARGV[4], 'bodyKind', ARGV[5], 'body', ARGV[6])
redis.call('HDEL', KEYS[1], 'leaseExpiresAt')
redis.call('PEXPIRE', KEYS[1], record[4])
return 1
