-- Claims an idempotency record, or says why not, in one atomic step.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- ARGV[1]  identity               kept for operators reading the record
-- ARGV[2]  digest                 SHA-256 hex of the canonical input
-- ARGV[3]  owner token            random per call
-- ARGV[4]  lease TTL (ms)         positive integer
-- ARGV[5]  retention (ms)         positive integer, kept for complete and renew
-- Returns one of
--   { 'acquired', fence }
--   { 'replay', responseStatus, responseHeaders, bodyKind, body }
--   { 'mismatch' }
--   { 'in_progress', leaseRemainingMs }
--
-- A record whose lease expired before it was completed counts as absent (any digest takes it
-- over with the next fence), but the key outlives the lease by the retention, so its owner can
-- still complete, renew or release it until somebody does take over: the fence, not the clock,
-- decides who may confirm.
--
-- Time is Redis' own clock (TIME), the clock PEXPIRE uses, so a lease and its key's TTL never
-- disagree and no client clock is ever compared with another.
--
-- The fence is Redis time in microseconds when the record is created, and the previous fence + 1
-- on a takeover. A takeover needs an expired lease (at least 1 ms after the previous fence was
-- issued), so a fence never exceeds the time it was issued at; a record created later (after a
-- release or an expiry) therefore starts above every fence issued before, with no counter key to
-- keep alive.

--#include redis-clock

local time, nowMs = redisTime()
local leaseTtl = tonumber(ARGV[4])
local retention = tonumber(ARGV[5])

local record = redis.call('HMGET', KEYS[1], 'digest', 'status', 'leaseExpiresAt')

if not record[1] then
  local fence = microseconds(time)
  redis.call('HSET', KEYS[1],
    'identity', ARGV[1], 'digest', ARGV[2], 'status', 'in_progress', 'owner', ARGV[3],
    'fence', fence, 'leaseExpiresAt', integer(nowMs + leaseTtl), 'retention', ARGV[5],
    'createdAt', integer(nowMs))
  redis.call('PEXPIRE', KEYS[1], integer(leaseTtl + retention))
  return { 'acquired', tonumber(fence) }
end

if record[2] == 'completed' then
  if record[1] ~= ARGV[2] then
    return { 'mismatch' }
  end
  local response = redis.call('HMGET', KEYS[1], 'responseStatus', 'responseHeaders', 'bodyKind', 'body')
  return { 'replay', response[1], response[2], response[3], response[4] }
end

local remaining = tonumber(record[3]) - nowMs
if remaining > 0 then
  if record[1] ~= ARGV[2] then
    return { 'mismatch' }
  end
  return { 'in_progress', remaining }
end

local fence = redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('HSET', KEYS[1],
  'digest', ARGV[2], 'owner', ARGV[3], 'leaseExpiresAt', integer(nowMs + leaseTtl),
  'retention', ARGV[5], 'createdAt', integer(nowMs))
redis.call('PEXPIRE', KEYS[1], integer(leaseTtl + retention))
return { 'acquired', fence }
