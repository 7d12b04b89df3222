-- Shared fragment (`--#include record-answer`): what an existing record answers a begin with.

-- The answer of the record hash at `key` to a begin with `digest` at `nowMs`, while the record is
-- live: { 'mismatch' }, { 'replay', status, headers, bodyKind, body } or
-- { 'in_progress', leaseRemainingMs }. Nil when there is no record, or its lease expired before
-- it was completed; the second result then says whether such an abandoned record is there.
local function liveAnswer(key, digest, nowMs)
  local record = redis.call('HMGET', key, 'digest', 'status', 'leaseExpiresAt')
  if not record[1] then
    return nil, false
  end
  if record[2] == 'completed' then
    if record[1] ~= digest then
      return { 'mismatch' }
    end
    local response = redis.call('HMGET', key, 'responseStatus', 'responseHeaders', 'bodyKind', 'body')
    return { 'replay', response[1], response[2], response[3], response[4] }
  end
  local remaining = tonumber(record[3]) - nowMs
  if remaining > 0 then
    if record[1] ~= digest then
      return { 'mismatch' }
    end
    return { 'in_progress', remaining }
  end
  return nil, true
end
