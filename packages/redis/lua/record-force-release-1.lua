-- Deletes a record stuck in progress, whoever holds it (an operator's decision). Its holder's
-- fenced complete then fails; the next begin creates the record afresh with a higher fence.
-- KEYS[1]  record hash            <prefix>{<keyHash>}:record
-- Returns { 'released', fence } | { 'completed' } | { 'absent' }. Completed records are kept.

local record = redis.call('HMGET', KEYS[1], 'status', 'fence')
if not record[1] then
  return { 'absent' }
end
if record[1] == 'completed' then
  return { 'completed' }
end
redis.call('DEL', KEYS[1])
return { 'released', tonumber(record[2]) }
