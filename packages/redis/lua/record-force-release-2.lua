-- Deletes a record stuck in progress, whoever holds it (an operator's decision). Its holder's
-- fenced complete then fails; the next begin creates the record afresh with a higher fence.
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- KEYS[2]  its previous layout    <prefix>{<keyHash>}:record (a hash, written by older versions)
-- Returns { 'released', fence } | { 'completed' } | { 'absent' }. Completed records are kept.

local value = redis.call('GET', KEYS[1])
if value then
  local fence = string.match(value, '^p(%d+)')
  if not fence then
    return { 'completed' }
  end
  redis.call('DEL', KEYS[1])
  return { 'released', tonumber(fence) }
end
local record = redis.call('HMGET', KEYS[2], 'status', 'fence')
if not record[1] then
  return { 'absent' }
end
if record[1] == 'completed' then
  return { 'completed' }
end
redis.call('DEL', KEYS[2])
return { 'released', tonumber(record[2]) }
