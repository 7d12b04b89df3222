-- Stores the response and marks the record completed, if the caller's lease still holds it:
-- same owner and fence, still in progress. The lease may have expired, as long as nobody took
-- the record over since (the fence, not the clock, decides who may confirm).
-- KEYS[1]  record                 <prefix><ns>:<op>:<ver>:{<keyHash>}:record (record-value)
-- ARGV[1]  owner token
-- ARGV[2]  fence
-- ARGV[3]  response               '<status> <bodyKind> <headersLen>\n<headers><body>'
-- Returns 1 when completed, 0 when the lease was lost (or already completed the record).
-- Two commands (GET, SET), and no TIME: the key lives for the retention from now, which the
-- store knows to be no earlier than it sent this call.

--#include redis-clock
--#include record-value

local value = redis.call('GET', KEYS[1])
local fence, retention = heldValue(value)
if not fence then
  return 0
end
redis.call('SET', KEYS[1], 'c' .. string.sub(value, 2) .. ARGV[3], 'PX', retention)
return 1
