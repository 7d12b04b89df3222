-- Extends the lease of an in-progress record if the caller's lease still holds it (same owner
-- and fence; an expired lease nobody took over still holds). The key is then kept for the new
-- lease plus the retention, as on begin.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- ARGV[3]  lease TTL (ms)         positive integer
-- Returns 1 when extended, 0 when the lease was lost or the record is completed.

local record = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'status', 'retention')

if record[1] ~= ARGV[1] or record[2] ~= ARGV[2] or record[3] ~= 'in_progress' then
  return 0
end

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local leaseTtl = tonumber(ARGV[3])

redis.call('HSET', KEYS[1], 'leaseExpiresAt', string.format('%.0f', nowMs + leaseTtl))
redis.call('PEXPIRE', KEYS[1], string.format('%.0f', leaseTtl + tonumber(record[4])))
return 1
