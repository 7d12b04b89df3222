-- Claims an idempotency record, or hands back the live record that stands in the way, in one
-- atomic step; on a claim, the same request's records under previous versions answer first.
-- KEYS     numberOfKeys record keys <prefix><ns>:<op>:<ver>:{<keyHash>}:record: the record's own
--          first, then the same request's under previous versions, newest first (on standalone
--          Redis only: on a Cluster they live in other slots, and the store reads them with
--          record-previous-n.lua)
-- ARGV[1]  record tail            ' <retention> <digestLen> <serviceLen> <identityLen>
--                                 <ownerToken>\n<digest><service><identity>' (record-value)
-- ARGV[2]  lease TTL (ms)         positive integer
-- ARGV[3]  retention (ms)         positive integer, the one in the tail
-- Returns one of
--   { 'acquired', fence }
--   { 'record', nowMs, value, keyIndex }      a live record (record-value) the store decodes,
--                                             keyIndex its KEYS index
--
-- Time is Redis' own clock (TIME), the one PX uses, so a lease and its key's TTL never disagree.
-- The fence is Redis time in microseconds when the record is created, and the previous fence + 1
-- on a takeover. A takeover needs an expired lease (at least 1 ms after the previous fence was
-- issued), so a fence never exceeds the time it was issued at; a record created later (after a
-- release or an expiry) therefore starts above every fence issued before, with no counter key.
-- The lease's owner may still complete, renew or release an abandoned record until somebody
-- takes it over. A previous version's record abandoned that way is deleted instead, so that its
-- owner cannot confirm once this claim runs the work.
--
-- A miss costs TIME and SET; a replay TIME and SET.

--#include redis-clock
--#include record-value

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

for i = 2, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if value then
    if isLive(value, nowMs) then
      if not old then
        redis.call('DEL', KEYS[1])
      end
      return { 'record', integer(nowMs), value, i }
    end
    redis.call('DEL', KEYS[i])
  end
end

if old then
  fence = integer(tonumber(string.match(old, '^p(%d+)')) + 1)
  redis.call('SET', KEYS[1], inProgressValue(fence, nowMs + leaseTtl, nowMs, ARGV[1]), 'PX', ttl)
end
return { 'acquired', tonumber(fence) }
