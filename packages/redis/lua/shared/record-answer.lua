-- Shared fragment (`--#include record-answer`): what an existing record answers a begin with.

-- The answer of the record hash at `key` to a begin with `digest` at `nowMs` by the services
-- `owners` (the caller's service, then its aliases, space-separated; '' compares no owners;
-- `shared` '1' accepts every owner), while the record is live:
-- { 'foreign_owner', service }, { 'mismatch' }, { 'replay', status, headers, bodyKind, body } or
-- { 'in_progress', leaseRemainingMs }. Nil when there is no record, or its lease expired before
-- it was completed; the second result then says whether such an abandoned record is there.
-- A record without a service (written before services were stored) counts as the caller's own.
local function isOwn(service, owners)
  return service == owners or string.find(' ' .. owners .. ' ', ' ' .. service .. ' ', 1, true) ~= nil
end

local function liveAnswer(key, digest, nowMs, owners, shared)
  local record = redis.call('HMGET', key, 'digest', 'status', 'leaseExpiresAt', 'service')
  if not record[1] then
    return nil, false
  end
  local completed = record[2] == 'completed'
  if not completed and tonumber(record[3]) <= nowMs then
    return nil, true
  end
  if record[4] and owners ~= '' and shared ~= '1' and not isOwn(record[4], owners) then
    return { 'foreign_owner', record[4] }
  end
  if completed then
    if record[1] ~= digest then
      return { 'mismatch' }
    end
    local response = redis.call('HMGET', key, 'responseStatus', 'responseHeaders', 'bodyKind', 'body')
    return { 'replay', response[1], response[2], response[3], response[4] }
  end
  if record[1] ~= digest then
    return { 'mismatch' }
  end
  return { 'in_progress', tonumber(record[3]) - nowMs }
end
