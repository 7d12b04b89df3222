-- Extends the lease of an in-progress record if the caller's lease still holds it (same owner
-- and fence; an expired lease nobody took over still holds). The key is then kept for the new
-- lease plus the retention, as on begin.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- ARGV[3]  lease TTL (ms)         positive integer
-- Returns 1 when extended, 0 when the lease was lost or the record is completed.

--#include redis-clock
--#include record-lease

local record = heldRecord('retention')
if not record then
  return 0
end

local _, nowMs = redisTime()
local leaseTtl = tonumber(ARGV[3])

redis.call('HSET', KEYS[1], 'leaseExpiresAt', integer(nowMs + leaseTtl))
redis.call('PEXPIRE', KEYS[1], integer(leaseTtl + tonumber(record[4])))
return 1
