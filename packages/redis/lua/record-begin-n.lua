-- Claims an idempotency record, or says why not, in one atomic step; on a miss, the records of
-- the same request under previous versions answer first.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- KEYS[2…] previous records       the same request's records under previous versions, newest
--                                 first (standalone Redis only: on a Cluster they live in other
--                                 slots, and the store reads them with record-previous-1.lua)
-- ARGV[1]  identity               kept for operators reading the record
-- ARGV[2]  digest                 SHA-256 hex of the canonical input
-- ARGV[3]  owner token            random per call
-- ARGV[4]  lease TTL (ms)         positive integer
-- ARGV[5]  retention (ms)         positive integer, kept for complete and renew
-- ARGV[6]  service                the claiming service, stored as `service`; '' stores none and
--                                 compares none
-- ARGV[7]  shared                 '1' when the route is shared: other services' records answer
-- Returns one of
--   { 'foreign_owner', service }  a live record of another service, left untouched
--   { 'acquired', fence }
--   { 'replay', responseStatus, responseHeaders, bodyKind, body, keyIndex }
--   { 'mismatch' }
--   { 'in_progress', leaseRemainingMs }
-- where keyIndex is the KEYS index of the record replayed (1: the record itself).
--
-- A record whose lease expired before it was completed counts as absent (any digest takes it
-- over with the next fence), but the key outlives the lease by the retention, so its owner can
-- still complete, renew or release it until somebody does take over: the fence, not the clock,
-- decides who may confirm. A previous version's record abandoned that way is deleted instead,
-- so that its owner cannot confirm once this claim runs the work.
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
--#include record-answer

local time, nowMs = redisTime()
local leaseTtl = tonumber(ARGV[4])
local retention = tonumber(ARGV[5])

-- Adds the claiming service to the fields a claim writes, in the same HSET; false without one.
local function withService(fields)
  if ARGV[6] == '' then
    return false
  end
  fields[#fields + 1] = 'service'
  fields[#fields + 1] = ARGV[6]
  return true
end

-- A replay says which record it comes from.
local function answerFrom(index, answer)
  if answer[1] == 'replay' then
    answer[6] = index
  elseif answer[1] == 'foreign_owner' then
    answer[3] = index
  end
  return answer
end

local answer, abandoned = liveAnswer(KEYS[1], ARGV[2], nowMs, ARGV[6], ARGV[7])
if answer then
  return answerFrom(1, answer)
end

for i = 2, #KEYS do
  local previous, previousAbandoned = liveAnswer(KEYS[i], ARGV[2], nowMs, ARGV[6], ARGV[7])
  if previous then
    return answerFrom(i, previous)
  end
  if previousAbandoned then
    redis.call('DEL', KEYS[i])
  end
end

if not abandoned then
  local fence = microseconds(time)
  local fields = {
    'identity', ARGV[1], 'digest', ARGV[2], 'status', 'in_progress', 'owner', ARGV[3],
    'fence', fence, 'leaseExpiresAt', integer(nowMs + leaseTtl), 'retention', ARGV[5],
    'createdAt', integer(nowMs) }
  withService(fields)
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('PEXPIRE', KEYS[1], integer(leaseTtl + retention))
  return { 'acquired', tonumber(fence) }
end

local fence = redis.call('HINCRBY', KEYS[1], 'fence', 1)
local fields = {
  'digest', ARGV[2], 'owner', ARGV[3], 'leaseExpiresAt', integer(nowMs + leaseTtl),
  'retention', ARGV[5], 'createdAt', integer(nowMs) }
if not withService(fields) then
  -- Taken over by a caller naming no service: the previous holder's is not the record's now.
  redis.call('HDEL', KEYS[1], 'service')
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIRE', KEYS[1], integer(leaseTtl + retention))
return { 'acquired', fence }
