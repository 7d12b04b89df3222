-- Claims an idempotency record, or hands back the live record that stands in the way, in one
-- atomic step; on a claim, the same request's records of the previous layout and of previous
-- versions answer first.
-- KEYS     numberOfKeys keys, per identity (the record's own first, then the same request's
--          under previous versions, newest first; previous versions on standalone Redis only:
--          on a Cluster they live in other slots, and the store reads them with
--          record-previous-n.lua) its record key <prefix><ns>:<op>:<ver>:{<keyHash>}:record,
--          then with legacy '1' its key of the previous layout <prefix>{<keyHash>}:record
-- ARGV[1]  record tail            ' <retention> <digestLen> <serviceLen> <identityLen>
--                                 <ownerToken>\n<digest><service><identity>' (record-value)
-- ARGV[2]  lease TTL (ms)         positive integer
-- ARGV[3]  retention (ms)         positive integer, the one in the tail
-- ARGV[4]  legacy                 '1': every second key is of the previous layout (a hash)
-- ARGV[5]  digest                 SHA-256 hex of the canonical input  } compared with records
-- ARGV[6]  owners                 the service, then its aliases,      } of the previous layout
--                                 space-separated; '' compares none   }
-- ARGV[7]  shared                 '1' when the route is shared        } only
-- Returns one of
--   { 'acquired', fence }
--   { 'record', nowMs, value, keyIndex }      a live record (record-value) the store decodes
--   an answer of record-answer.lua with keyIndex (records of the previous layout)
-- where keyIndex is the KEYS index of the record answering.
--
-- Time is Redis' own clock (TIME), the one PX uses, so a lease and its key's TTL never disagree.
-- The fence is Redis time in microseconds when the record is created, and the previous fence + 1
-- on a takeover. A takeover needs an expired lease (at least 1 ms after the previous fence was
-- issued), so a fence never exceeds the time it was issued at; a record created later (after a
-- release or an expiry) therefore starts above every fence issued before, with no counter key.
-- The lease's owner may still complete, renew or release an abandoned record until somebody
-- takes it over. A previous version's or layout's record abandoned that way is deleted instead,
-- so that its owner cannot confirm once this claim runs the work.
--
-- A miss costs TIME and SET (plus one HMGET with legacy '1'); a replay TIME and SET.

--#include redis-clock
--#include record-value
--#include record-answer

local time, nowMs = redisTime()
local leaseTtl = tonumber(ARGV[2])
local ttl = integer(leaseTtl + tonumber(ARGV[3]))
local fence = microseconds(time)
local old = redis.call('SET', KEYS[1], inProgressValue(fence, nowMs + leaseTtl, nowMs, ARGV[1]),
  'NX', 'PX', ttl, 'GET')
if old then
  if isLive(old, nowMs) then
    return { 'record', integer(nowMs), old, 1 }
  end
end

local stride = ARGV[4] == '1' and 2 or 1
for i = 2, #KEYS do
  local answer, abandoned
  if stride == 2 and i % 2 == 0 then
    answer, abandoned = liveAnswer(KEYS[i], ARGV[5], nowMs, ARGV[6], ARGV[7])
    if answer and answer[1] == 'replay' then
      answer[6] = i
    elseif answer and answer[1] == 'foreign_owner' then
      answer[3] = i
    end
  else
    local value = redis.call('GET', KEYS[i])
    if value and isLive(value, nowMs) then
      answer = { 'record', integer(nowMs), value, i }
    end
    abandoned = value and not answer
  end
  if answer then
    if not old then
      redis.call('DEL', KEYS[1])
    end
    return answer
  end
  if abandoned then
    redis.call('DEL', KEYS[i])
  end
end

if old then
  fence = integer(tonumber(string.match(old, '^p(%d+)')) + 1)
  redis.call('SET', KEYS[1], inProgressValue(fence, nowMs + leaseTtl, nowMs, ARGV[1]), 'PX', ttl)
end
return { 'acquired', tonumber(fence) }
