-- Shared fragment (`--#include record-lease`): the fenced ownership check of the record scripts.

-- The record hash at KEYS[1] (fields owner, fence, status, then the ones named) if the caller's
-- lease still holds it: owner token ARGV[1], fence ARGV[2], still in progress; nil otherwise.
-- The lease may have expired, as long as nobody took the record over since (the fence, not the
-- clock, decides who may confirm).
local function heldRecord(...)
  local record = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'status', ...)
  if record[1] ~= ARGV[1] or record[2] ~= ARGV[2] or record[3] ~= 'in_progress' then
    return nil
  end
  return record
end
