-- Deletes a record stuck in progress, whoever holds it (an operator's decision). Its holder's
-- fenced complete then fails; the next begin creates the record afresh with a higher fence.
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- Returns { 'released', fence } | { 'completed' } | { 'absent' }. Completed records are kept.

local value = redis.call('GET', KEYS[1])
if not value then
  return { 'absent' }
end
local fence = string.match(value, '^p(%d+)')
if not fence then
  return { 'completed' }
end
redis.call('DEL', KEYS[1])
return { 'released', tonumber(fence) }
