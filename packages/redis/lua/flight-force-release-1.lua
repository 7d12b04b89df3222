-- Frees a lease whoever holds it (an operator's force-release) and wakes the waiters. The
-- holder's owner token is gone, so it can no longer renew, complete or release; the next leader's
-- fence (the server clock) is above the released holder's. A cached outcome is left alone.
-- KEYS[1] flight key
-- ARGV[1] notice channel   ARGV[2] business key (the notice message)
-- Returns 1 when a lease was freed, 0 when none was held.

--#include flight-lease

-- The tag and waiters mark only: a cached payload is not worth reading.
local head = redis.call('GETRANGE', KEYS[1], 0, 1)
if string.sub(head, 1, 1) ~= 'L' then
  return 0
end
redis.call('DEL', KEYS[1])
if waitedFor(head) then
  redis.call('PUBLISH', ARGV[1], ARGV[2])
end
return 1
